// Answers the HTTP edge gives on the wire's paths before the body is read (no token for a big
// body, rate limit, body budgets), each in the shape its client reads errors in: gRPC and
// gRPC-web a trailers-only answer (HTTP 200, grpc-status in the headers), Connect its JSON
// error with the matching HTTP status, REST grpc-gateway's {code, message, details}; grpc-message
// as grpc-go encodes it (grpc-message.ts).
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import type { NodeRequest, NodeResponse } from '../http/face.ts';
import type { ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import type { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { toConnectError } from './errors.ts';
import { reencodeHeaders } from './grpc-message.ts';
import { markTooLarge, writeRestError } from './rest-errors.ts';
import { rpcProtocolOf } from './paths.ts';

const head = (res: NodeResponse, status: number, headers: Record<string, string | number>) =>
  (res as ServerResponse).writeHead(status, headers);

/** The RPC protocol of a request on an RPC path, from its content type. */

/** `connectStatus`: the HTTP status of a Connect answer, when it is not the code's own. */
export function writeRpcError(
  req: NodeRequest,
  res: NodeResponse,
  error: ConnectError,
  extraHeaders: Record<string, string> = {},
  connectStatus?: number,
): void {
  const protocol = rpcProtocolOf(req.headers['content-type']);
  if (protocol === 'connect') {
    const body = errorToJsonBytes(error, {});
    head(res, connectStatus ?? codeToHttpStatus(error.code), {
      ...extraHeaders,
      'content-type': 'application/json',
      'content-length': body.byteLength,
    });
    res.end(body);
    return;
  }
  const contentType =
    protocol === 'grpc' ? 'application/grpc' : protocol === 'grpc-web' ? 'application/grpc-web+proto' : 'application/grpc-web-text+proto';
  const headers: Record<string, string> = { ...extraHeaders, 'content-type': contentType };
  const status = setTrailerStatus(new Headers(), error);
  reencodeHeaders(status);
  status.forEach((value, name) => (headers[name] = value));
  trailersOnly(res, headers);
}

/** Headers HTTP/2 forbids (RFC 9113 8.2.2); the edge may have set `connection` on any response. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/**
 * HTTP 200 with the status in the headers and no body. Over HTTP/2 as one HEADERS frame that
 * ends the stream, which is what makes it trailers-only: node's compatibility writeHead and end
 * send the headers, then an empty DATA frame that ends the stream, and grpc-js reads a status only
 * from headers that end the stream (it reported "Received RST_STREAM with code 0 (Call ended
 * without gRPC status)" for them).
 */
function trailersOnly(res: NodeResponse, headers: Record<string, string>): void {
  const stream = (res as Http2ServerResponse).stream;
  if (stream && !res.headersSent && !stream.destroyed) {
    const set = Object.fromEntries(Object.entries(res.getHeaders()).filter(([name]) => !CONNECTION_HEADERS.has(name)));
    res.statusCode = 200; // for the edge's log line and metrics, which read the response
    stream.respond({ ...set, ...headers, ':status': 200 }, { endStream: true });
    return;
  }
  head(res, 200, headers);
  res.end();
}

/** The edge's refusal on a wire path: RPC paths in their protocol's shape, REST paths in grpc-gateway's. */
export function writeWireRefusal(
  req: NodeRequest,
  res: NodeResponse,
  rpc: boolean,
  refusal: AppError,
  headers: Record<string, string>,
  logger: Logger,
): void {
  const error = toConnectError(refusal, logger, { method: 'edge' });
  if (rpc) writeRpcError(req, res, error, headers);
  // A body over the cap is grpc-gateway's 413 with the connection closed (rest-errors.ts bodyTooLarge).
  else writeRestError(req, res, refusal.httpStatus === 413 ? markTooLarge(error) : error, headers);
}
