// What the edge needs of the wire API before the wire itself is loaded (src/wire/lazy.ts):
// which paths may be the wire's, which protocol a request speaks, and the CORS headers. No
// descriptors here: this file must stay cheap to import.
import type { CorsSpec } from '../http/cors.ts';

/** RPC paths (`/zitadel.auth.v1.AuthService/GetMyUser`, `/grpc.health.v1.Health/Check`) and REST ones (`/v2/users/…`, `/v2beta/users/…`). */
const MAY_BE_WIRE = ['/zitadel.', '/grpc.', '/auth/v1/', '/management/v1/', '/v2/', '/v2beta/'];

/**
 * True for every path the wire serves, and for the others of its shape (answered by the wire as
 * not found: grpc-gateway's 404, code 5), before and after the wire is loaded. /graphql,
 * /health, /ready, /metrics and GraphiQL are not of this shape.
 */
export const mayBeWirePath = (path: string): boolean => MAY_BE_WIRE.some((p) => path.startsWith(p));

/** RPC paths, served or not (`/<package>.<Service>/<Method>`): no REST path starts so. */
export const isRpcShaped = (path: string) => path.startsWith('/zitadel.') || path.startsWith('/grpc.');

export function rpcProtocolOf(contentType: string | undefined): 'grpc' | 'grpc-web' | 'grpc-web-text' | 'connect' {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type.startsWith('application/grpc-web-text')) return 'grpc-web-text';
  if (type.startsWith('application/grpc-web')) return 'grpc-web';
  if (type.startsWith('application/grpc')) return 'grpc';
  return 'connect';
}

/** The protocol of a request on a wire path, as the loaded wire would name it. */
export const wireProtocolOf = (contentType: string | undefined, path: string): string =>
  isRpcShaped(path) ? rpcProtocolOf(contentType) : 'rest';

/** For browsers (gRPC-web, Connect, REST from a page): the headers their clients send and read. */
export const WIRE_CORS: CorsSpec = {
  methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowHeaders: [
    ...['authorization', 'content-type', 'x-service-orgid', 'x-zitadel-orgid', 'idempotency-key', 'x-request-id'],
    ...['connect-protocol-version', 'connect-timeout-ms', 'x-grpc-web', 'x-user-agent', 'grpc-timeout'],
  ],
  exposeHeaders: ['x-request-id', 'retry-after', 'idempotency-replayed', 'grpc-status', 'grpc-message', 'grpc-status-details-bin'],
};
