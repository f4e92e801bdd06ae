// Errors on the REST paths as grpc-gateway writes them: a JSON body {code, message, details}
// with each detail as a google.protobuf.Any in JSON ({"@type": "type.googleapis.com/…", …}),
// and the HTTP status of grpc-gateway's table (runtime.HTTPStatusFromCode), but for
// FAILED_PRECONDITION, which the gateway answers with 409 (docs/graphql.md, Errors) where grpc-gateway,
// and ZITADEL's REST with it, answer 400. Two more exceptions: a body over the cap is 413 (see
// bodyTooLarge), and a path served with another HTTP method is 405, as grpc-gateway's routing
// error (methodNotAllowed).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { create, createRegistry, isMessage, toJson, type JsonValue, type Registry } from '@bufbuild/protobuf';
import { anyPack, AnySchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { BadRequestSchema, RetryInfoSchema } from '../proto/error-details.ts';

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

/** grpc-gateway's HTTP status per gRPC code (runtime.HTTPStatusFromCode), FAILED_PRECONDITION 409 (docs/graphql.md, Errors). */
export const HTTP_STATUS_OF_CODE: Record<number, number> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 409, // grpc-gateway: 400
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

const tooLarge = new WeakSet<ConnectError>();

/**
 * RESOURCE_EXHAUSTED for a body over the cap, answered 413 and with the connection closed
 * (grpc-gateway itself has no cap; its gRPC server's RESOURCE_EXHAUSTED would be 429, which
 * invites a retry; an unread oversized body is not worth keeping the connection for).
 */
export function bodyTooLarge(max: number): ConnectError {
  return markTooLarge(new ConnectError(`request body larger than the configured limit of ${max} bytes`, Code.ResourceExhausted));
}

/** The same error, answered as a body over the cap (413, connection closed). */
export function markTooLarge(error: ConnectError): ConnectError {
  tooLarge.add(error);
  return error;
}

/** Errors answered with an HTTP status of their own, not their code's (grpc-gateway's runtime.HTTPStatusError). */
const ownStatus = new WeakMap<ConnectError, number>();

/**
 * grpc-gateway's routing error for a path that has rules, none of them for this HTTP method:
 * HTTP 405 with the body of UNIMPLEMENTED (code 12, "Method Not Allowed"), as its
 * DefaultRoutingErrorHandler answers through runtime.HTTPStatusError.
 */
export function methodNotAllowed(): ConnectError {
  const error = new ConnectError('Method Not Allowed', Code.Unimplemented);
  ownStatus.set(error, 405);
  return error;
}

/**
 * A request body in a Content-Encoding the REST face does not decode (rest-encoding.ts): HTTP
 * 415 with the body of UNIMPLEMENTED, and Accept-Encoding listing `accepted` (RFC 9110 15.5.16).
 */
export function unsupportedContentEncoding(accepted: string): ConnectError {
  const error = new ConnectError(`request body: this Content-Encoding is not supported: send ${accepted} or identity`, Code.Unimplemented, {
    'accept-encoding': accepted,
  });
  ownStatus.set(error, 415);
  return error;
}

/** grpc-gateway's routing error for a path no rule matches: 404, NOT_FOUND "Not Found". */
export const routeNotFound = (): ConnectError => new ConnectError('Not Found', Code.NotFound);

/** The HTTP status of an error: grpc-gateway's per code, 413 for bodyTooLarge, 405 for methodNotAllowed, 415 for unsupportedContentEncoding. */
export const restStatusOf = (error: ConnectError): number =>
  tooLarge.has(error) ? 413 : (ownStatus.get(error) ?? HTTP_STATUS_OF_CODE[error.code] ?? 500);

const typeUrl = (typeName: string) => `type.googleapis.com/${typeName}`;

/** grpc-gateway's error body; details as Any JSON from the registry (a type it lacks keeps its bytes). */
export function errorBody(err: ConnectError, registry: Registry): { code: number; message: string; details: JsonValue[] } {
  const details = err.details.map((d): JsonValue => {
    const name = 'desc' in d ? d.desc.typeName : d.type;
    try {
      if ('desc' in d) {
        const message = isMessage(d.value, d.desc) ? d.value : create(d.desc, d.value);
        const reg = registry.getMessage(d.desc.typeName) ? registry : createRegistry(registry, d.desc);
        return toJson(AnySchema, anyPack(d.desc, message), { registry: reg });
      }
      return toJson(AnySchema, create(AnySchema, { typeUrl: typeUrl(d.type), value: d.value }), { registry });
    } catch {
      // A type this gateway has no descriptor for: its bytes, as much of an Any as can be said.
      const bytes = 'desc' in d ? new Uint8Array() : d.value;
      return {
        '@type': typeUrl(name),
        value: Buffer.from(bytes).toString('base64'),
      };
    }
  });
  return { code: err.code, message: err.rawMessage, details };
}

/**
 * A JSON answer. `headers` go along (a `connection` header only on HTTP/1.x, where it exists);
 * once headers are sent, the response is only ended.
 */
export function writeJson(req: NodeRequest, res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type' || lower === 'content-length') continue;
    if (lower === 'connection' && req.httpVersionMajor !== 1) continue; // HTTP/2 has no Connection header
    out[lower] = value;
  }
  out['content-type'] = 'application/json';
  out['content-length'] = Buffer.byteLength(text);
  (res as ServerResponse).writeHead(status, out);
  (res as ServerResponse).end(text);
}

/** The details every gateway error can carry: google.rpc.BadRequest and ZITADEL's ErrorDetail. */
const ERROR_REGISTRY = createRegistry(BadRequestSchema, ErrorDetailSchema);

/** writeRestError over a registry of more detail types (the REST handler's: every file of its services). */
export function restErrorWriter(registry: Registry): typeof writeRestError {
  return (req, res, error, headers = {}) => {
    const retry = error.findDetails(RetryInfoSchema)[0] as { retryDelay?: { seconds: bigint } } | undefined;
    const retryAfter: Record<string, string> = retry?.retryDelay ? { 'retry-after': String(retry.retryDelay.seconds) } : {};
    const extra = tooLarge.has(error) ? { ...retryAfter, ...headers, connection: 'close' } : { ...retryAfter, ...headers };
    writeJson(req, res, restStatusOf(error), errorBody(error, registry), extra);
  };
}

const defaultWriter = restErrorWriter(ERROR_REGISTRY);

/**
 * The grpc-gateway answer to a ConnectError on a REST path: the HTTP status of its code (413
 * and Connection: close for bodyTooLarge), the JSON body {code, message, details} and the
 * extra headers (e.g. retry-after; `connection: close` only goes out on HTTP/1.x). For the
 * REST handler and for refusals the HTTP edge makes before a REST body is read.
 */
export function writeRestError(req: NodeRequest, res: NodeResponse, error: ConnectError, headers?: Record<string, string>): void {
  defaultWriter(req, res, error, headers);
}
