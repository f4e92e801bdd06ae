// What every wire method shares: the CommandContext from the request headers (the same
// one src/server.ts builds for GraphQL), and the error mapping around the command call.
// Requests come through the HTTP edge (src/http/edge.ts), which has checked the token and
// keeps the request's state (id, caller, error codes) for its log line and metrics.
import { ConnectError, createContextKey, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import type { TokenVerifier } from '../auth/tokens.ts';
import { requestContext, type CommandContext, type Deps, type Operations } from '../operations.ts';
import type { Idempotency } from '../http/idempotency-core.ts';
import type { RequestState } from '../http/request-state.ts';
import type { Logger } from '../log.ts';
import { codeName, toConnectError, type FieldRenames } from './errors.ts';
import { callerOf, verifyCaller } from '../http/authentication.ts';

export interface WireDeps {
  deps: Deps;
  /** What serves the operations: every method calls them through it. */
  ops: Operations;
  tokens: TokenVerifier;
  logger: Logger;
  /** Idempotency-Key on the four services' mutations (src/wire/idempotency.ts): the gateway's core, shared with GraphQL; none: the header is ignored. */
  idempotency?: Idempotency;
}

/** The edge's state of the request, when it came through the edge. */
export const requestStateKey = createContextKey<RequestState | undefined>(undefined, { description: 'edge request state' });

/**
 * Authorization: Bearer checked with the gateway's TokenVerifier (by the edge already, when
 * it passed the request on); the organization header read by the factory every face uses
 * (src/commands/request-context.ts: x-service-orgid or x-zitadel-orgid, two different ones
 * INVALID_ARGUMENT whatever the token).
 */
export async function commandContext(wire: WireDeps, headers: Headers, state?: RequestState): Promise<CommandContext> {
  const caller = state?.authChecked ? callerOf(state) : await verifyCaller(wire.tokens, headers.get('authorization'));
  return requestContext(wire.deps, headers, caller);
}

/** A unary method: build the context, run, map any failure to a ConnectError. */
export function unary<Req, Res>(
  wire: WireDeps,
  method: string,
  run: (ctx: CommandContext, req: Req, ops: Operations) => Promise<Res>,
  renames?: FieldRenames,
): (req: Req, handler: HandlerContext) => Promise<Res> {
  return async (req, handler) => {
    const state = handler.values.get(requestStateKey);
    try {
      return await run(await commandContext(wire, handler.requestHeader, state), req, wire.ops);
    } catch (err) {
      throw toConnectError(err, wire.logger, { method, renames, requestId: state?.requestId });
    }
  };
}

/**
 * Server interceptor: the method and the error code of each call on the edge's request
 * state, so the request log line and the metrics name them (never the bodies).
 */
/** ZITADEL's read methods (GetMyUser, ListUsers, …, and Healthz): never stored for idempotency, logged as queries. */
export const isReadMethod = (name: string): boolean => name.startsWith('Get') || name.startsWith('List') || name === 'Healthz';

export const requestFacts: Interceptor = (next) => async (req) => {
  const state = req.contextValues.get(requestStateKey);
  if (state) {
    state.operationName = req.method.name;
    state.operationType = isReadMethod(req.method.name) ? 'query' : 'mutation';
    // Bounded by the services' methods: fit for metric labels.
    state.rootField = `${req.service.typeName}/${req.method.name}`;
  }
  try {
    return await next(req);
  } catch (err) {
    state?.errorCodes.push(codeName(ConnectError.from(err)));
    throw err;
  }
};
