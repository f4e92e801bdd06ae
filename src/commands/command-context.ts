// The CommandContext type: what every command receives (made by request-context.ts).
import type { Snapshot } from '../store/port.ts';
import type { Deps } from './deps.ts';
import type { ReadBudget } from './read-budget.ts';

/** What a request has read, by aggregate (request-view.ts): each read once, however often asked for. */
export type RequestView = Map<string, Promise<Snapshot<unknown> | null>>;

export interface CommandContext {
  deps: Deps;
  /** The authenticated user id, or null when the request carried no valid token. */
  callerId: string | null;
  /** Set when a token was sent but is not valid: every operation answers it. */
  authError?: Error;
  /** The x-service-orgid header, when sent. */
  orgHeader: string | null;
  /** What this request has read (request-view.ts): made with the context, shared by its copies. */
  view: RequestView;
  /** What this request may still read (read-budget.ts). */
  reads: ReadBudget;
}
