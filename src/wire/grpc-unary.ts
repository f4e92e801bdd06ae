// A unary gRPC call in its common shape (binary, one uncompressed message) served without
// connect's stream machinery. Why: under HTTP/2 load the gRPC face spent twice GraphQL's CPU per
// call, and the profile put the difference in connect's gRPC handler, which runs even a unary
// call as a stream (a pipeline of async iterables splitting, parsing, invoking, serializing and
// joining envelopes; two abort controllers, each aborted with a new DOMException when the call
// ends). Here the body is read whole (metered by the edge as it arrives, as before), decoded
// once, and the implementation runs through the interceptors as connect runs it (unary-call.ts,
// as the REST face calls it); the answer is written in one go. Every other request (compressed,
// no message or several, a grpc-timeout connect refuses, JSON, gRPC-web) goes to connect's router
// with the bytes already read, so its answers stay connect's; so do errors, written through the
// same adapter (connect-node's) the router's answers take.
import { toBinary, type DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import { universalResponseToNodeResponse } from '@connectrpc/connect-node';
import { compressionNegotiate, createAsyncIterable, type Compression } from '@connectrpc/connect/protocol';
import { parseContentType, parseTimeout, setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import type { Http2ServerResponse } from 'node:http2';
import type { NodeRequest, NodeResponse } from '../http/face.ts';
import type { RequestState } from '../http/request-state.ts';
import { grpcGoMessages } from './grpc-message.ts';
import { decodeBinaryMessage } from './request-limits.ts';
import { headersOf, invokeUnary, unaryContext, type UnaryCall } from './unary-call.ts';

/** A method registered on the router with its implementation (what the fast path calls). */
export interface UnaryMethod {
  method: DescMethod;
  impl: NonNullable<UnaryCall['impl']>;
}

export interface GrpcUnaryOptions {
  interceptors: readonly Interceptor[];
  compressions: readonly Compression[];
  /** Responses at least this long are compressed when the client accepts it (connect's compressMinBytes). */
  compressMinBytes: number;
}

const CONTENT_TYPE = 'application/grpc+proto';
const canceled = () => new ConnectError('the client closed the request', Code.Canceled);

/** True for a request the fast path may take, before its body is read: binary gRPC over HTTP/2, POST, no request compression, a valid grpc-timeout if any. */
export function fastPathFits(req: NodeRequest, method: DescMethod | undefined): method is DescMethod {
  if (method?.methodKind !== 'unary' || req.method !== 'POST' || req.httpVersionMajor !== 2) return false;
  const headers = req.headers;
  if (parseContentType(String(headers['content-type'] ?? ''))?.binary !== true) return false;
  const encoding = headers['grpc-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  // connect would answer a malformed one (INVALID_ARGUMENT); the implementations do not watch the deadline either way.
  const timeout = headers['grpc-timeout'];
  return timeout === undefined || parseTimeout(String(timeout), Number.MAX_SAFE_INTEGER).error === undefined;
}

/**
 * While the body arrives: false as soon as its bytes cannot be one uncompressed envelope of at
 * most readMaxBytes (a flag, a longer prefix, a second envelope), so that connect answers such a
 * body as it comes, as it did before the fast path (RESOURCE_EXHAUSTED on the prefix alone).
 */
export function mayBeSingleMessage(chunks: Buffer[], size: number, readMaxBytes: number): boolean {
  if (size < 5) return true;
  // Five chunks hold at least five bytes: the prefix costs the same however the body is cut.
  const head = chunks[0]!.byteLength >= 5 ? chunks[0]! : Buffer.concat(chunks.slice(0, 5), 5);
  if (head[0] !== 0) return false;
  const length = head.readUInt32BE(1);
  return length <= readMaxBytes && size <= 5 + length;
}

/** The message of a body that is exactly one uncompressed envelope no longer than readMaxBytes; else undefined. */
export function singleMessage(body: Buffer, readMaxBytes: number): Buffer | undefined {
  if (body.byteLength < 5 || body[0] !== 0) return undefined;
  const length = body.readUInt32BE(1);
  return length === body.byteLength - 5 && length <= readMaxBytes ? body.subarray(5) : undefined;
}

function envelope(flags: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.byteLength);
  out[0] = flags;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

function nodeHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name] = value));
  return out;
}

/** Serves the call whose whole request message is `message`; a failure of the call is answered (the adapter ends the stream on anything else). */
export async function serveGrpcUnary(
  req: NodeRequest,
  res: NodeResponse,
  state: RequestState | undefined,
  target: UnaryMethod,
  message: Uint8Array,
  options: GrpcUnaryOptions,
): Promise<void> {
  const { method } = target;
  const headers = req.headers;
  const compression = compressionNegotiate(
    options.compressions as Compression[],
    null,
    headers['grpc-accept-encoding'] === undefined ? null : String(headers['grpc-accept-encoding']),
    'grpc-accept-encoding',
  ).response;
  const decoded = decodeBinaryMessage(method.input, message);
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort(canceled());
  });
  const call: UnaryCall = {
    service: method.parent,
    method,
    impl: target.impl,
    protocolName: 'grpc',
    requestMethod: 'POST',
    url: `${(req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'}://${String(headers[':authority'] ?? headers.host ?? 'localhost')}${req.url ?? ''}`,
    signal: abort.signal,
    header: headersOf(req),
    state,
    interceptors: options.interceptors,
    message: 'message' in decoded ? decoded.message : (undefined as never),
    ...('refusal' in decoded ? { early: decoded.refusal } : {}),
  };
  const context = unaryContext(call, {
    responseHeader: { 'content-type': CONTENT_TYPE, ...(compression ? { 'grpc-encoding': compression.name } : {}) },
    responseTrailer: { 'grpc-status': '0' },
  });
  let body: Buffer;
  try {
    const response = await invokeUnary(call, context);
    const bytes = toBinary(method.output, response.message);
    body =
      compression && bytes.byteLength >= options.compressMinBytes ? envelope(1, await compression.compress(bytes)) : envelope(0, bytes);
  } catch (err) {
    await writeError(res, context, err);
    return;
  }
  if (res.destroyed) return; // the client went while the call ran
  (res as Http2ServerResponse).writeHead(200, nodeHeaders(context.responseHeader));
  res.addTrailers(nodeHeaders(context.responseTrailer));
  res.end(body);
}

/** The error as connect's gRPC handler answers it (status in the trailers, after the headers), through connect-node's writer. */
async function writeError(res: NodeResponse, context: HandlerContext, err: unknown): Promise<void> {
  const error = err instanceof ConnectError ? err : new ConnectError('internal error', Code.Internal, undefined, undefined, err);
  setTrailerStatus(context.responseTrailer, error);
  const answer = grpcGoMessages(
    { status: 200, header: context.responseHeader, body: createAsyncIterable<Uint8Array>([]), trailer: context.responseTrailer },
    'grpc',
  );
  await universalResponseToNodeResponse(answer, res as never).catch(() => res.destroy());
}
