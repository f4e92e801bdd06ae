// A request of several mutation fields runs them one after another and stops at the first
// that fails; the payloads are non-null (schema.graphql), so `data` is then null. When a
// field before the failed one was done, the answer is not the failure's 4xx, which would tell
// a client that nothing happened (and a retry would do those fields twice), but 200: the
// error names the field that failed, and the fields before it in the document were done.
//
// graphql-jit does not stop: it runs every later field after a failure, data null all the
// same, and reports only the first error. Such requests run on graphql-js (see server.ts).
import { getOperationAST, GraphQLError, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const severalMutations = (operation: OperationDefinitionNode | null | undefined): operation is OperationDefinitionNode =>
  operation?.operation === 'mutation' && operation.selectionSet.selections.length > 1;

/** True for a mutation of more than one root field: graphql-jit must not run it. */
export const isSeveralMutations = (args: { document: DocumentNode; operationName?: string | null }) =>
  severalMutations(getOperationAST(args.document, args.operationName));

export function usePartialMutationStatus(): Plugin {
  /** The response keys of the root fields, in order, of each request's mutation of several. */
  const rootKeys = new WeakMap<Request, string[]>();
  return {
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!severalMutations(operation)) return;
      const request = (args.contextValue as { request?: Request }).request;
      const fields = operation.selectionSet.selections.filter((s) => s.kind === 'Field');
      // Root fragments hide which fields run in what order: their answer keeps its status.
      if (request && fields.length === operation.selectionSet.selections.length)
        rootKeys.set(
          request,
          fields.map((f) => (f.alias ?? f.name).value),
        );
    },
    onResultProcess({ request, result, setResult }) {
      const keys = rootKeys.get(request);
      if (!keys || Array.isArray(result) || !result || typeof result !== 'object' || !('errors' in result) || !result.errors?.length)
        return;
      // An error without a path (variables, validation) came before any field ran.
      const errors = result.errors as GraphQLError[];
      if (errors.some((e) => !e.path?.length)) return;
      const first = Math.min(...errors.map((e) => keys.indexOf(String(e.path![0]))));
      if (first <= 0) return;
      const withoutStatus = errors.map((e) => {
        const { http: _status, ...extensions } = e.extensions ?? {};
        return new GraphQLError(e.message, {
          nodes: e.nodes,
          positions: e.positions,
          path: e.path,
          originalError: e.originalError,
          extensions,
        });
      });
      setResult({ ...result, errors: withoutStatus } as typeof result);
    },
  };
}
