// What every resolver receives: the request's context for the operations, and its id.
import type { CommandContext, Operations } from '../operations.ts';

export interface GraphQLContext {
  cmd: CommandContext;
  /** What serves the operations: every resolver calls them through it. */
  ops: Operations;
  requestId: string;
}
