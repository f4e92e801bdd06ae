// A request of several mutation fields runs them one after another and stops at the first that
// fails; the payloads are non-null (schema.graphql), so `data` is then null, and the error names
// the field that failed: the fields before it in the document were done. Its answer is 200 like
// every executed request (src/graphql/http-status.ts).
//
// graphql-jit does not stop: it runs every later field after a failure, data null all the
// same, and reports only the first error. Such requests run on graphql-js (see face.ts).
import { getOperationAST, type DocumentNode } from 'graphql';

/** True for a mutation of more than one root field: graphql-jit must not run it. */
export function isSeveralMutations(args: { document: DocumentNode; operationName?: string | null }): boolean {
  const operation = getOperationAST(args.document, args.operationName);
  return operation?.operation === 'mutation' && operation.selectionSet.selections.length > 1;
}
