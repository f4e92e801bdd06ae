// The wire API, loaded at its first request. Its descriptors (ZITADEL's four services and
// every message they use) cost about 0.9 s of CPU and 25-90 MB to load, which held up every
// start and weighed on gateways that serve GraphQL only. The first wire request waits for
// the load (its body stays unread meanwhile); later ones find it loaded. The wire's paths are
// matched by their shape, a superset, before the load and after it alike (the loaded route
// matches the same shapes): a path of that shape the wire does not serve is answered by the
// wire as not found (grpc-gateway's 404, code 5), never by GraphQL's 404.
import type { CorsSpec } from '../http/cors.ts';
import type { NodeResponse, RoutedFace } from '../http/face.ts';
import type { ServerResponse } from 'node:http';

export interface LazyWire {
  /** Paths the wire may serve: a superset of them, which the loaded wire's route matches too (so the answer does not depend on the load). */
  mayMatch(path: string): boolean;
  protocolOf(contentType: string | undefined, path: string): string;
  cors: CorsSpec;
  load(): Promise<RoutedFace>;
}

export function lazyWireRoute(lazy: LazyWire): RoutedFace & { preload(): Promise<RoutedFace> } {
  let route: RoutedFace | undefined;
  let loading: Promise<RoutedFace> | undefined;
  const preload = () => {
    if (!loading) {
      loading = lazy.load().then((r) => (route = r));
      loading.catch(() => {}); // a failed load fails the requests that wait for it (below), not the process
    }
    return loading;
  };
  const failed = (res: NodeResponse) => {
    if (res.headersSent) return void res.destroy();
    (res as ServerResponse).writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('the wire API could not be loaded\n');
  };
  return {
    preload,
    matches: (path) => (route ? route.matches(path) : lazy.mayMatch(path)),
    protocolOf: (req, path) => (route ? route.protocolOf(req, path) : lazy.protocolOf(req.headers['content-type'], path)),
    cors: lazy.cors,
    handler: (req, res, state) =>
      route
        ? route.handler(req, res, state)
        : void preload().then(
            (r) => r.handler(req, res, state),
            () => failed(res),
          ),
    refuse: (req, res, path, error, headers) =>
      route
        ? route.refuse(req, res, path, error, headers)
        : void preload().then(
            (r) => r.refuse(req, res, path, error, headers),
            () => failed(res),
          ),
  };
}
