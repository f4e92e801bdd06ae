// The wire API's face for the HTTP edge (src/http/face.ts): the connect-node
// adapter for gRPC, gRPC-web and Connect (`/zitadel.auth.v1.AuthService/GetMyUser`), and the
// REST/JSON handler for the google.api.http paths (`PUT /auth/v1/users/me/profile`), both over
// the same service implementations.
import { requestFacts, type WireDeps } from './context.ts';
import type { RoutedFace } from '../http/face.ts';
import { createWireHandler, isWirePath, wireServices, type WireOptions } from './index.ts';
import { isRpcShaped, mayBeWirePath, WIRE_CORS, wireProtocolOf } from './paths.ts';
import { writeWireRefusal } from './refusal.ts';
import { createRestHandler, type RestHandler } from './rest.ts';

/** The REST/JSON handler for the four wire services. */
export function createWireRestHandler(options: WireOptions): RestHandler {
  const { readMaxBytes, ...wire } = options;
  const deps: WireDeps = wire;
  return createRestHandler(wireServices(deps), { readMaxBytes, interceptors: [requestFacts], logger: wire.logger });
}

const pathOf = (url: string | undefined) => (url ?? '/').split('?')[0] ?? '/';

/** The RPC adapter's paths: the services it serves, and every other path of their shape, which it answers UNIMPLEMENTED. */
const isRpcPath = (path: string) => isWirePath(path) || isRpcShaped(path);

/**
 * A WireRoute: the RPC paths to connect-node, the REST paths (any verb: a wrong one answers 405
 * as grpc-gateway does) to the REST handler. It matches every path of the wire's shape
 * (mayBeWirePath), as the edge does before the wire is loaded (src/wire/lazy.ts): one the
 * wire does not serve is answered by the REST handler with grpc-gateway's 404 (code 5 "Not
 * Found") or, when it has an RPC path's shape, by the RPC adapter with UNIMPLEMENTED in the
 * request's protocol; never by GraphQL, whether the wire was loaded by then or not.
 */
export function createWireRoute(options: WireOptions): RoutedFace & { rest: RestHandler } {
  const rpc = createWireHandler(options);
  const rest = createWireRestHandler(options);
  return {
    rest,
    matches: (path) => mayBeWirePath(path) || isWirePath(path) || rest.matchesPath(path),
    handler: (req, res, state) => (isRpcPath(pathOf(req.url)) ? rpc(req, res, state) : rest.handler(req, res, state)),
    cors: WIRE_CORS,
    protocolOf: (req, path) => wireProtocolOf(req.headers['content-type'], path),
    refuse: (req, res, path, error, headers) => writeWireRefusal(req, res, isRpcPath(path), error, headers, options.logger),
  };
}
