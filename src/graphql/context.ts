// What every resolver receives: the request's context for the operations, and its id.
import type { OperationContext, Operations } from '../operations.ts';

export interface GraphQLContext {
  /** Made per request by the factory that comes with `ops` (src/operations.ts faceOperations). */
  cmd: OperationContext;
  /** What serves the operations: every resolver calls them through it. */
  ops: Operations<OperationContext>;
  requestId: string;
}
