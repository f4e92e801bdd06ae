// REST/JSON for the wire services as grpc-gateway serves it (ZITADEL's /auth/v1, /management/v1
// and /v2 paths), from the google.api.http options kept in the @zitadel/proto descriptors, read
// at start (rest-rules.ts). Request: the JSON body (decompressed from its Content-Encoding:
// rest-encoding.ts), path variables and query string as the input message (rest-request.ts). Response: proto3 JSON of the output. Errors as grpc-gateway writes
// them (rest-errors.ts). The services' implementations are the same connect ServiceImpl objects
// the gRPC / gRPC-web / Connect adapter serves.
// Protobuf descriptors: @zitadel/proto (MIT), generated from ZITADEL's .proto files (Apache-2.0).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import {
  create,
  createRegistry,
  toJson,
  type DescFile,
  type DescMessage,
  type DescService,
  type JsonValue,
  type MessageShape,
  type Registry,
} from '@bufbuild/protobuf';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { bodyNeedsToken, UNAUTHENTICATED_BODY_BYTES } from '../http/body-limit.ts';
import type { RequestState } from '../http/request-state.ts';
import type { Logger } from '../log.ts';
import { BadRequestSchema } from '../proto/error-details.ts';
import { codeName, toConnectError } from './errors.ts';
import { contentCoding, decodeBody } from './rest-encoding.ts';
import { bodyTooLarge, methodNotAllowed, restErrorWriter, routeNotFound, writeJson } from './rest-errors.ts';
import { jsonOfBody, readBody, requestMessage, type JsonObject } from './rest-request.ts';
import { routeTable, type RestService, type Route } from './rest-rules.ts';
import { headersOf, invokeUnary } from './unary-call.ts';

export { HTTP_STATUS_OF_CODE, writeRestError } from './rest-errors.ts';
export { restService, type RestService } from './rest-rules.ts';

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

export interface RestOptions {
  /** Largest request body read; a larger one is refused with 413 (RESOURCE_EXHAUSTED). */
  readMaxBytes: number;
  /** Run around each call, as connect-node runs them (e.g. requestFacts of context.ts). */
  interceptors?: Interceptor[];
  /** Where an unexpected failure (not a ConnectError) is logged; it answers INTERNAL "Unexpected error." either way. */
  logger?: Logger;
}

export interface RestHandler {
  /** A rule of this HTTP method matches the path. */
  matches(method: string, path: string): boolean;
  /** A rule of any HTTP method matches the path (a WireRoute's `matches`: the handler answers a wrong method). */
  matchesPath(path: string): boolean;
  /** `state`: the edge's state of the request; its `meter`, when set, is given every body chunk before it is kept. */
  handler(req: NodeRequest, res: NodeResponse, state?: RequestState): void;
  /** The compiled rules, for tests and docs: `PUT /management/v1/users/{user_id}/profile` -> `zitadel.management.v1.ManagementService.UpdateHumanProfile`. */
  readonly routes: { verb: string; template: string; method: string }[];
}

/** All files the services' messages come from, with their imports. */
function filesOf(services: DescService[]): DescFile[] {
  const seen = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f)) return;
    seen.add(f);
    f.dependencies.forEach(visit);
  };
  services.forEach((s) => visit(s.file));
  return [...seen];
}

/** Headers the interceptors set on an answer (e.g. idempotency-replayed), without the ones this handler writes itself. */
function plainHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== 'content-type' && name !== 'content-length') out[name] = value;
  });
  return out;
}

/** For AppErrors only (the meter's refusals), which toConnectError never logs. */
const silent: Logger = { log: () => undefined };

/**
 * The body as sent, or decompressed from its Content-Encoding (rest-encoding.ts) up to the
 * caller's cap: the body cap, UNAUTHENTICATED_BODY_BYTES without a valid token (as the edge caps a plain body).
 */
async function decoded(req: NodeRequest, bytes: Buffer, state: RequestState | undefined, options: RestOptions): Promise<Buffer> {
  const coding = contentCoding(req.headers['content-encoding']);
  if (coding === null) return bytes;
  const unauthenticated = state?.authChecked === true && !state.caller;
  const cap = unauthenticated ? Math.min(UNAUTHENTICATED_BODY_BYTES, options.readMaxBytes) : options.readMaxBytes;
  return decodeBody(bytes, coding, cap, () =>
    unauthenticated ? toConnectError(bodyNeedsToken(state!), options.logger ?? silent, { method: 'edge' }) : bodyTooLarge(cap),
  );
}

interface ParsedRequest {
  message: MessageShape<DescMessage>;
  /** Why the request cannot be served (not implemented, an unreadable or invalid body). */
  early?: ConnectError;
  /** The body was left unread: close the connection with the answer. */
  dropped: boolean;
}

/** The route's input message from the path variables, the query string and the body (read, metered and decoded here). */
async function parseRequest(
  req: NodeRequest,
  { route, values }: { route: Route; values: string[] },
  query: string,
  state: RequestState | undefined,
  options: RestOptions,
  registry: Registry,
): Promise<ParsedRequest> {
  const { service, method } = route;
  const empty = create(method.input);
  if (!route.impl) {
    req.resume();
    return {
      message: empty,
      early: new ConnectError(`${service.typeName}.${method.name} is not implemented`, Code.Unimplemented),
      dropped: false,
    };
  }
  let dropped = false;
  try {
    let json: JsonObject = {};
    if (route.rule.body !== '') {
      const body = await readBody(req, options.readMaxBytes, state?.meter);
      if (!body.ok) {
        dropped = body.dropped;
        throw body.error instanceof ConnectError
          ? body.error
          : toConnectError(body.error, options.logger ?? silent, { method: method.name, requestId: state?.requestId });
      }
      json = jsonOfBody(route, await decoded(req, body.bytes, state, options));
    } else {
      req.resume();
    }
    return { message: requestMessage(route, values, query, json, registry), dropped };
  } catch (err) {
    return { message: empty, early: err as ConnectError, dropped };
  }
}

export function createRestHandler(services: RestService[], options: RestOptions): RestHandler {
  const registry = createRegistry(...filesOf(services.map((s) => s.service)), BadRequestSchema, ErrorDetailSchema);
  const writeError = restErrorWriter(registry);
  const table = routeTable(services);
  const interceptors = options.interceptors ?? [];

  async function serve(req: NodeRequest, res: NodeResponse, state: RequestState | undefined): Promise<void> {
    // The raw path, as the edge's WireRoute matched it (%-escapes are decoded per variable), and the query string.
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? '' : target.slice(q + 1);
    const authority = req.headers[':authority'] ?? req.headers.host ?? 'localhost';
    const verb = (req.method ?? 'GET').toUpperCase();
    const found = table.find(verb, path);
    if (!found) {
      // grpc-gateway's routing errors: another method on this path is 405 with UNIMPLEMENTED's body, else 404 NOT_FOUND.
      req.resume();
      const other = table.find(undefined, path);
      const error = other ? methodNotAllowed() : routeNotFound();
      state?.errorCodes.push(codeName(error));
      return writeError(req, res, error);
    }
    const { route } = found;
    const { service, method } = route;

    // Parse the request; a failure is thrown inside the interceptors, so they see the method and the code.
    const { message, early, dropped } = await parseRequest(req, found, query, state, options, registry);

    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort(new ConnectError('the client closed the request', Code.Canceled));
    });
    try {
      const response = await invokeUnary({
        service,
        method,
        impl: route.impl,
        protocolName: 'rest',
        requestMethod: verb,
        url: `http://${String(authority)}${target}`,
        signal: abort.signal,
        header: headersOf(req),
        state,
        interceptors,
        message,
        early,
      });
      const json = toJson(method.output, response.message, { registry }) as Record<string, JsonValue>;
      // response_body: only that field of the output (none of the four services uses it today).
      writeJson(req, res, 200, route.responseField ? (json[route.responseField.jsonName] ?? null) : json, plainHeaders(response.header));
    } catch (err) {
      let error: ConnectError;
      if (err instanceof ConnectError) error = err;
      else if (options.logger)
        error = toConnectError(err, options.logger, {
          method: method.name,
          requestId: state?.requestId,
        });
      else error = new ConnectError('Unexpected error.', Code.Internal);
      writeError(req, res, error, { ...plainHeaders(error.metadata), ...(dropped && error === early ? { connection: 'close' } : {}) });
    }
  }

  return {
    routes: table.routes.map((r) => ({
      verb: r.verb,
      template: r.template.text,
      method: `${r.service.typeName}.${r.method.name}`,
    })),
    matches: (method, path) => table.find(method.toUpperCase(), path) !== undefined,
    matchesPath: (path) => table.find(undefined, path) !== undefined,
    handler(req, res, state) {
      serve(req, res, state).catch((err: unknown) => {
        options.logger?.log('error', 'REST handler failed', {
          requestId: state?.requestId ?? null,
          error: String((err as Error)?.stack ?? err),
        });
        if (!res.headersSent)
          writeJson(req, res, 500, {
            code: Code.Internal,
            message: 'Unexpected error.',
            details: [],
          });
        else res.destroy();
      });
    },
  };
}
