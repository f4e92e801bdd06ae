// Federation entities: User, Organization, Project and IdentityProvider are
// keyed by id, and `_entities` resolves the representations of one type in a
// request through one batched read (commands/entities.ts applies the read rules).
import { isUnionType, type GraphQLSchema } from 'graphql';
import type { EntityKind } from '../operations.ts';
import { invalidArgument } from '../errors.ts';
import type { Builder, GraphQLContext } from './builder.ts';

type Load<V> = (id: string) => Promise<V | null>;

/**
 * A per-request batcher, DataLoader-style: the ids asked for in one tick (the
 * `_entities` resolver asks for all its representations at once) go to `fetch`
 * together; answers are cached for the rest of the request.
 */
export function batcher<V>(fetch: (ids: readonly string[]) => Promise<Map<string, V>>): Load<V> {
  const cache = new Map<string, Promise<V | null>>();
  let pending: Map<string, { resolve: (v: V | null) => void; reject: (e: unknown) => void }> | null = null;
  const dispatch = (batch: NonNullable<typeof pending>) => {
    pending = null;
    fetch([...batch.keys()]).then(
      (found) => batch.forEach((waiter, id) => waiter.resolve(found.get(id) ?? null)),
      (err) => batch.forEach((waiter) => waiter.reject(err)),
    );
  };
  return (id) => {
    let answer = cache.get(id);
    if (!answer) {
      if (!pending) {
        const batch = (pending = new Map());
        // After the current promise jobs, like DataLoader: resolvers started together batch together.
        void Promise.resolve().then(() => process.nextTick(() => dispatch(batch)));
      }
      const batch = pending;
      answer = new Promise<V | null>((resolve, reject) => batch.set(id, { resolve, reject }));
      cache.set(id, answer);
    }
    return answer;
  };
}

const loaders = new WeakMap<GraphQLContext, Map<EntityKind, Load<unknown>>>();

/** The request's loader of one entity kind, created on first use. */
export function entityLoader<S>(ctx: GraphQLContext, kind: EntityKind): Load<S> {
  let byKind = loaders.get(ctx);
  if (!byKind) loaders.set(ctx, (byKind = new Map()));
  let load = byKind.get(kind);
  if (!load) byKind.set(kind, (load = batcher((ids) => ctx.ops.entities(ctx.cmd, kind, ids))));
  return load as Load<S>;
}

/** Marks an object type as an entity keyed by id; a representation the caller may not see resolves to null. */
export function asEntity(builder: Builder, ref: Parameters<Builder['asEntity']>[0], kind: EntityKind) {
  builder.asEntity(ref, {
    key: builder.selection<{ id: string }>('id'),
    // A copy: @apollo/subgraph tags the result with __typename, and snapshots may be frozen.
    resolveReference: async (reference, ctx) => {
      const found = await entityLoader<object>(ctx, kind)(String(reference.id));
      return (found && { ...found }) as never;
    },
  });
}

/**
 * `_entities` refuses representations that name no entity type of this subgraph (or none) with
 * INVALID_ARGUMENT listing each, before @apollo/subgraph's resolver, which throws a plain Error
 * for them: an INTERNAL answer and an error log line that any client could cause, token or not.
 */
export function guardEntities(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const union = schema.getType('_Entity');
  if (!field?.resolve || !isUnionType(union)) return schema;
  const names = union.getTypes().map((t) => t.name);
  const known = new Set(names);
  const resolve = field.resolve;
  field.resolve = (source, args, context, info) => {
    const representations = (args as { representations: { __typename?: unknown }[] }).representations;
    const violations = representations.flatMap((r, i) =>
      typeof r?.__typename === 'string' && known.has(r.__typename)
        ? []
        : [{ field: `representations.${i}.__typename`, description: `must name an entity type of this subgraph: ${names.join(', ')}` }],
    );
    if (violations.length > 0) throw invalidArgument(violations.slice(0, 50));
    return resolve(source, args, context, info);
  };
  return schema;
}
