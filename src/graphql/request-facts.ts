// What a GraphQL request is, for its log line and metrics (src/http/logging.ts): its operation
// name and type, the root field it runs and the code of every error in its answer, on the
// edge's state of the request. Never the query's variables or answer.
import { getOperationAST, Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { stateOf } from './request-state.ts';

/** Records operation name, type, root field and error codes on the request state. */
export function useRequestFacts(): Plugin {
  return {
    onParams({ request, params }) {
      const state = stateOf(request);
      // The client's name, until execution knows the document's (a request that fails validation keeps this one).
      if (typeof params.operationName === 'string') state.operationName = params.operationName.slice(0, 100);
    },
    onExecute({ args }) {
      const state = stateOf((args.contextValue as { request: Request }).request);
      const op = getOperationAST(args.document as DocumentNode, args.operationName ?? undefined);
      if (!op) return;
      state.operationType = op.operation;
      if (op.name) state.operationName = op.name.value;
      state.rootField = rootField(op, args.document as DocumentNode);
    },
    onResultProcess({ request, result }) {
      const state = stateOf(request);
      const results = Array.isArray(result) ? result : [result];
      for (const r of results) {
        const errors = (r as { errors?: readonly { extensions?: { code?: unknown } }[] } | undefined)?.errors ?? [];
        for (const e of errors) state.errorCodes.push(typeof e.extensions?.code === 'string' ? e.extensions.code : 'UNKNOWN');
      }
    },
  };
}

/** The one root field an operation selects (aliases of it count once), else 'multiple'. */
function rootField(op: OperationDefinitionNode, document: DocumentNode): string {
  const names = new Set<string>();
  const visit = (selections: OperationDefinitionNode['selectionSet']['selections'], depth: number) => {
    for (const s of selections) {
      if (s.kind === Kind.FIELD) names.add(s.name.value);
      else if (depth < 5 && s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet.selections, depth + 1);
      else if (depth < 5 && s.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value);
        if (fragment && fragment.kind === Kind.FRAGMENT_DEFINITION) visit(fragment.selectionSet.selections, depth + 1);
      }
    }
  };
  visit(op.selectionSet.selections, 0);
  names.delete('__typename');
  return names.size === 1 ? [...names][0]! : names.size === 0 ? 'none' : 'multiple';
}
