// Paths a gateway recognises but does not serve in its mode (the wire API in upstream mode): a
// clear refusal in the shape the caller's protocol reads, instead of another face's 404.
import type { ServerResponse } from 'node:http';
import type { AppError } from '../errors.ts';
import type { NodeRequest, NodeResponse, RoutedFace } from './face.ts';
import { sendJson } from './health.ts';

/** gRPC's UNIMPLEMENTED (12) for gRPC and gRPC-web callers, HTTP 501 with `{ code, message }` (Connect's and grpc-gateway's shape) otherwise. */
export function notServedFace(matches: (path: string) => boolean, message: string): RoutedFace {
  const answer = (req: NodeRequest, res: NodeResponse, error?: AppError, headers: Record<string, string> = {}) => {
    const type = String(req.headers['content-type'] ?? '');
    if (!error && type.startsWith('application/grpc')) {
      (res as ServerResponse).writeHead(200, {
        'content-type': type.split(';')[0]!,
        'grpc-status': '12',
        'grpc-message': encodeURIComponent(message),
        ...headers,
      });
      res.end();
      return;
    }
    if (error) sendJson(res as never, error.httpStatus ?? 400, { code: 'unavailable', message: error.message }, headers);
    else sendJson(res as never, 501, { code: 'unimplemented', message }, headers);
  };
  return {
    matches,
    protocolOf: (req) => (String(req.headers['content-type'] ?? '').startsWith('application/grpc') ? 'grpc' : 'http'),
    refuse: (req, res, _path, error, headers) => answer(req, res, error, headers),
    handler: (req, res) => {
      req.resume();
      answer(req, res);
    },
  };
}
