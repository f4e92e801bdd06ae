// What every resolver receives: the request's context for the operations, and its id.
import type { CommandContext } from '../commands/context.ts';

export interface GraphQLContext {
  cmd: CommandContext;
  requestId: string;
}
