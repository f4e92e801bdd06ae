// What a GraphQL request may cost, counted with the page sizes it asks for. graphql-armor's cost
// rule runs at validation, without the variables: `users(first: $n)` cost the same for any n,
// while `users(first: 100)` cost a hundred times more; and its ×1.5 per level made nesting,
// not work, the price (a console page of 50 users was refused, one of 100 with a variable passed).
//
// Here every field the answer can hold counts 1 (`__typename` 0), and a page multiplies what its
// items select: under a field with `first`/`last` (users, history; 20 when neither is given, at
// most 100), `edges` and `nodes` count once per item; under `_entities`, everything counts once
// per representation. Lists without paging (metadata, IDP links, security keys) are parts of
// the object already read and count once. A fragment is counted once per document and
// multiplied where it is spread, so counting is linear in the document's size.
import {
  getNamedType,
  getOperationAST,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { invalid } from '../errors.ts';
import { toGraphQLError } from './errors.ts';

/** The most a request may cost: a page of 100 users with every field of a console row is about 3,800. */
export const MAX_COST = 10_000;
/** The connections' page size when neither first nor last is given, and their largest (schema.graphql). */
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

type Variables = Readonly<Record<string, unknown>>;

/** A value of an argument: the literal, or the variable's value. */
function argumentValue(node: ValueNode, variables: Variables): unknown {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.LIST) return node.values;
  return undefined;
}

/** How many items a field's answer holds per value of it: its page size, or 1. */
function itemsOf(field: FieldNode, definition: GraphQLField<unknown, unknown>, variables: Variables): number {
  const arg = (name: string) => field.arguments?.find((a) => a.name.value === name);
  if (definition.name === '_entities') {
    const list = arg('representations');
    const value = list ? argumentValue(list.value, variables) : undefined;
    return Array.isArray(value) ? Math.max(value.length, 1) : 1;
  }
  if (!definition.args.some((a) => a.name === 'first')) return 1;
  for (const name of ['first', 'last']) {
    const given = arg(name);
    const value = given ? argumentValue(given.value, variables) : undefined;
    // A size out of range is refused by the field itself; counted at the most it could be.
    if (typeof value === 'number' && Number.isInteger(value)) return Math.min(Math.max(value, 0), MAX_PAGE);
  }
  return DEFAULT_PAGE;
}

/** A selection's cost, split into what its page's items select (edges, nodes) and the rest. */
interface Split {
  items: number;
  rest: number;
}

/** The cost of the operation `operationName` of `document` with these variables. */
export function requestCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables,
): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const fragmentCost = new Map<string, Split>();

  const split = (set: SelectionSetNode, type: GraphQLNamedType | undefined | null): Split => {
    const total: Split = { items: 0, rest: 0 };
    const add = (s: Split) => {
      total.items += s.items;
      total.rest += s.rest;
    };
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        add(split(selection.selectionSet, selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type));
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        let cost = fragmentCost.get(name);
        if (!cost) {
          fragmentCost.set(name, { items: 0, rest: 0 }); // validation refuses cycles: this only keeps a walk from looping
          const fragment = fragments.get(name);
          cost = fragment ? split(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value)) : { items: 0, rest: 0 };
          fragmentCost.set(name, cost);
        }
        add(cost);
      } else if (selection.name.value !== '__typename') {
        const cost = 1 + fieldCost(selection, isObjectType(type) ? type.getFields()[selection.name.value] : undefined);
        if (PAGE_ITEMS.has(selection.name.value)) total.items += cost;
        else total.rest += cost;
      }
    }
    return total;
  };

  /** What a field's selection costs, its page's items multiplied. */
  const fieldCost = (field: FieldNode, definition: GraphQLField<unknown, unknown> | undefined): number => {
    if (!definition || !field.selectionSet) return 0;
    const { items, rest } = split(field.selectionSet, getNamedType(definition.type));
    const page = itemsOf(field, definition, variables);
    if (definition.name === '_entities') return (items + rest) * page;
    return rest + items * page;
  };

  return Object.values(split(operation.selectionSet, schema.getRootType(operation.operation))).reduce((a, b) => a + b, 0);
}

/** Under a page, the fields that hold one value per item. */
const PAGE_ITEMS: ReadonlySet<string> = new Set(['edges', 'nodes']);

export function useRequestCost(maxCost = MAX_COST): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cost = requestCost(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Variables);
      if (cost <= maxCost) return;
      const error = invalid(
        'query',
        `costs ${Math.round(cost)}, more than ${maxCost}: every field counts once per value, a page's edges once per item (first/last, 20 by default); ask for fewer items or fields`,
      );
      // Not HTTP's refusal: a GraphQL request error (200 on application/json, 400 on application/graphql-response+json).
      setResultAndStopExecution({ errors: [toGraphQLError(error)] });
    },
  };
}
