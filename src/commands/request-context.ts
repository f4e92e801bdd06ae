// The CommandContext of one request, built by one factory for every face (docs/architecture.md):
// GraphQL (src/server.ts) and the wire API's gRPC, gRPC-web, Connect and REST
// (src/wire/context.ts). The organization header is read here only, so the faces cannot
// disagree on it.
import { invalid } from '../errors.ts';
import type { CommandContext, Deps } from './context.ts';
import { newReadBudget } from './read-budget.ts';
import { newRequestView } from './request-view.ts';

/** What the factory reads the headers through (fetch's Headers, or an adapter over node's). */
export interface HeaderSource {
  get(name: string): string | null;
}

/** Who is calling, as the edge (or the face) verified the bearer token. */
export interface CallerFacts {
  callerId: string | null;
  /** A token was sent and is not valid. */
  authError?: Error;
}

/**
 * The organization the request names: x-service-orgid or x-zitadel-orgid (ZITADEL's
 * clients), an empty one counting as absent. Both, naming two organizations, is
 * INVALID_ARGUMENT: which one the client (or a proxy that added one) meant cannot be told. An
 * input rule without I/O, so it is answered before authentication, as on every face.
 */
export function orgHeaderOf(headers: HeaderSource): string | null {
  const service = headers.get('x-service-orgid');
  const zitadel = headers.get('x-zitadel-orgid');
  if (service && zitadel && service !== zitadel)
    throw invalid('x-zitadel-orgid', 'names another organization than x-service-orgid: send one of them');
  return service || zitadel || null;
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
