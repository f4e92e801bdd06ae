// The CommandContext of one request, built by one factory for every face (docs/architecture.md):
// GraphQL (src/server.ts) and the wire API's gRPC, gRPC-web, Connect and REST
// (src/wire/context.ts). The organization header is read here only, so the faces cannot
// disagree on it.
import type { CommandContext, Deps } from './context.ts';
import { newReadBudget } from './read-budget.ts';
import { newRequestView } from './request-view.ts';
import { orgHeaderOf, type HeaderSource } from './org-header.ts';

export { orgHeaderOf, type HeaderSource };

/** Who is calling, as the edge (or the face) verified the bearer token. */
export interface CallerFacts {
  callerId: string | null;
  /** A token was sent and is not valid. */
  authError?: Error;
}

/** The request's CommandContext: the caller and the organization header (orgHeaderOf, which may throw). */
export function requestContext(deps: Deps, headers: HeaderSource, caller: CallerFacts): CommandContext {
  return newCommandContext(deps, caller, orgHeaderOf(headers));
}

/** A CommandContext with its own view of the store and read budget: the one way one is made. */
export function newCommandContext(deps: Deps, caller: CallerFacts, orgHeader: string | null): CommandContext {
  const ctx: CommandContext = { deps, callerId: caller.callerId, orgHeader, view: newRequestView(), reads: newReadBudget() };
  if (caller.authError) ctx.authError = caller.authError;
  return ctx;
}

/** The context of the gateway's own work (bootstrap at start): the caller 'system', no header. */
export const systemContext = (deps: Deps): CommandContext => newCommandContext(deps, { callerId: 'system' }, null);
