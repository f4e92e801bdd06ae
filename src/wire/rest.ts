// REST/JSON for the wire services as grpc-gateway serves it (ZITADEL's /auth/v1, /management/v1
// and /v2 paths), from the google.api.http options kept in the @zitadel/proto descriptors, read
// at start: v1 rules are relative and get the prefix of the file option openapiv2_swagger's
// base_path, v2 rules are absolute. Request: the JSON body (body "*") parsed as proto3 JSON with
// unknown fields discarded, then the path variables set on their fields (they win over the
// body), and for rules without body "*" the query string. Response: proto3 JSON of the output.
// Errors as grpc-gateway writes them: {code, message, details: [Any as JSON]} with the HTTP
// status of its table (FAILED_PRECONDITION is 400 there). The services' implementations are the
// same connect ServiceImpl objects the gRPC / gRPC-web / Connect adapter serves.
// Protobuf descriptors: @zitadel/proto (MIT), generated from ZITADEL's .proto files (Apache-2.0).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import {
  create,
  createRegistry,
  fromJson,
  getOption,
  hasOption,
  isMessage,
  ScalarType,
  toJson,
  type DescField,
  type DescFile,
  type DescMessage,
  type DescMethod,
  type DescService,
  type JsonValue,
  type Registry,
} from '@bufbuild/protobuf';
import { anyPack, AnySchema } from '@bufbuild/protobuf/wkt';
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import { http as httpRule } from '@zitadel/proto/google/api/annotations_pb.js';
import type { HttpRule } from '@zitadel/proto/google/api/http_pb.js';
import { openapiv2_swagger } from '@zitadel/proto/protoc-gen-openapiv2/options/annotations_pb.js';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import type { RequestState } from '../http/request-state.ts';
import type { Logger } from '../log.ts';
import { BadRequestSchema } from './bad-request.ts';
import { requestStateKey } from './context.ts';
import { codeName, toConnectError } from './errors.ts';

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

export interface RestService {
  service: DescService;
  impl: Partial<ServiceImpl<any>>;
}

/** A service and its implementation, typed against each other. */
export const restService = <S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): RestService => ({
  service,
  impl: impl as Partial<ServiceImpl<any>>,
});

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
  handler(req: NodeRequest, res: NodeResponse, state?: RequestState): void;
  /** The compiled rules, for tests and docs: `PUT /management/v1/users/{user_id}/profile` -> `zitadel.management.v1.ManagementService.UpdateHumanProfile`. */
  readonly routes: { verb: string; template: string; method: string }[];
}

/** grpc-gateway's HTTP status per gRPC code (runtime.HTTPStatusFromCode). */
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
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

// ---------------------------------------------------------------------------------------------
// Path templates (google/api/http.proto): Template = "/" Segments [ Verb ];
// Segment = "*" | "**" | LITERAL | Variable; Variable = "{" FieldPath [ "=" Segments ] "}".

type Segment = { kind: 'literal'; text: string } | { kind: 'star' } | { kind: 'deep' };

interface Variable {
  fields: DescField[];
  /** Index of its first segment. */
  start: number;
  /** Index after its last segment; -1 when it ends with "**" (takes the rest of the path). */
  end: number;
}

interface Template {
  text: string;
  segments: Segment[];
  variables: Variable[];
  verb?: string;
  /** Literal segments: the more, the more specific (preferred when two rules match). */
  literals: number;
}

/** A field path (`user_id`, `user.id`) of a message, by proto field names. */
function resolveFieldPath(message: DescMessage, path: string, byJsonName = false): DescField[] | undefined {
  const out: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path.split('.')) {
    if (!current) return undefined;
    const field: DescField | undefined = current.fields.find((f) => f.name === name || (byJsonName && f.jsonName === name));
    if (!field) return undefined;
    out.push(field);
    current = field.fieldKind === 'message' ? field.message : undefined;
  }
  return out;
}

function compileTemplate(text: string, input: DescMessage): Template {
  if (!text.startsWith('/')) throw new Error(`path template must start with "/": ${text}`);
  let body = text.slice(1);
  let verb: string | undefined;
  // A verb is a ":" after the last "/" that is not inside a variable.
  const lastSlash = body.lastIndexOf('/');
  const colon = body.indexOf(':', lastSlash + 1);
  if (colon >= 0 && !body.slice(colon).includes('}')) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
  }
  const segments: Segment[] = [];
  const variables: Variable[] = [];
  const literal = (s: string): Segment => (s === '*' ? { kind: 'star' } : s === '**' ? { kind: 'deep' } : { kind: 'literal', text: s });
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '{') {
      const close = body.indexOf('}', i);
      if (close < 0) throw new Error(`unclosed variable in ${text}`);
      const [fieldPath, pattern = '*'] = body.slice(i + 1, close).split('=', 2) as [string, string?];
      const fields = resolveFieldPath(input, fieldPath);
      if (!fields) throw new Error(`${text}: no field ${fieldPath} in ${input.typeName}`);
      const start = segments.length;
      for (const s of pattern.split('/')) segments.push(literal(s));
      const deep = segments[segments.length - 1]!.kind === 'deep';
      variables.push({ fields, start, end: deep ? -1 : segments.length });
      i = close + 1;
      if (i < body.length && body[i] !== '/') throw new Error(`unexpected text after a variable in ${text}`);
      i++;
    } else {
      const slash = body.indexOf('/', i);
      const end = slash < 0 ? body.length : slash;
      segments.push(literal(body.slice(i, end)));
      i = end + 1;
    }
  }
  const deepAt = segments.findIndex((s) => s.kind === 'deep');
  if (deepAt >= 0 && deepAt !== segments.length - 1) throw new Error(`"**" must be the last segment: ${text}`);
  return {
    text,
    segments,
    variables,
    verb,
    literals: segments.filter((s) => s.kind === 'literal').length,
  };
}

/** The variables' decoded values when the template matches the raw path segments, else undefined. */
function matchTemplate(t: Template, rawSegments: string[]): string[] | undefined {
  let parts = rawSegments;
  if (t.verb !== undefined) {
    const last = parts[parts.length - 1];
    if (last === undefined || !last.endsWith(`:${t.verb}`)) return undefined;
    parts = [...parts.slice(0, -1), last.slice(0, -(t.verb.length + 1))];
  }
  const deep = t.segments[t.segments.length - 1]?.kind === 'deep';
  if (deep ? parts.length < t.segments.length - 1 : parts.length !== t.segments.length) return undefined;
  for (let k = 0; k < t.segments.length; k++) {
    const s = t.segments[k]!;
    if (s.kind === 'deep') break;
    const p = parts[k]!;
    if (s.kind === 'literal' ? p !== s.text : p === '') return undefined;
  }
  const values: string[] = [];
  try {
    for (const v of t.variables) {
      const taken = v.end < 0 ? parts.slice(v.start) : parts.slice(v.start, v.end);
      values.push(taken.map((p) => decodeURIComponent(p)).join('/'));
    }
  } catch {
    return undefined; // a malformed %-escape: no match
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// Request building: path variables and query parameters set on the JSON object before fromJson.

type JsonObject = Record<string, unknown>;
const isPlainObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A path or query string value as the proto3 JSON of the field's type (fromJson then checks it). */
function jsonOfText(field: DescField, text: string): unknown {
  const scalarOrEnum = field.fieldKind === 'list' ? field.listKind : field.fieldKind;
  if (scalarOrEnum === 'enum') return /^-?\d+$/.test(text) ? Number(text) : text;
  if (scalarOrEnum === 'scalar') {
    const scalar = field.fieldKind === 'list' ? field.scalar : field.fieldKind === 'scalar' ? field.scalar : undefined;
    if (scalar === ScalarType.BOOL) return text === 'true' ? true : text === 'false' ? false : text;
  }
  return text; // numbers as strings, bytes as base64, strings, and well-known types in their string form
}

/** Sets (or appends to) the field at `fields` in the JSON object, under its JSON name; a proto-name key for the same field goes. */
function setJson(root: JsonObject, fields: DescField[], texts: string[], append: boolean): void {
  let obj = root;
  for (let k = 0; k < fields.length - 1; k++) {
    const f = fields[k]!;
    const existing = obj[f.jsonName] ?? obj[f.name];
    if (f.name !== f.jsonName) delete obj[f.name];
    const next = isPlainObject(existing) ? existing : {};
    obj[f.jsonName] = next;
    obj = next;
  }
  const leaf = fields[fields.length - 1]!;
  const values = texts.map((t) => jsonOfText(leaf, t));
  const existing = obj[leaf.jsonName] ?? obj[leaf.name];
  if (leaf.name !== leaf.jsonName) delete obj[leaf.name];
  if (leaf.fieldKind === 'list') obj[leaf.jsonName] = append && Array.isArray(existing) ? [...existing, ...values] : values;
  else obj[leaf.jsonName] = values[values.length - 1];
}

// ---------------------------------------------------------------------------------------------
// Errors as grpc-gateway writes them.

interface Route {
  verb: string;
  template: Template;
  rule: HttpRule;
  service: DescService;
  method: DescMethod;
  impl: ((req: unknown, ctx: HandlerContext) => unknown) | undefined;
  /** The field of `body: "<field>"`; undefined for "*" and "". */
  bodyField?: DescField;
  /** The field of `response_body: "<field>"`. */
  responseField?: DescField;
}

const typeUrl = (typeName: string) => `type.googleapis.com/${typeName}`;

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

function errorBody(err: ConnectError, registry: Registry): { code: number; message: string; details: JsonValue[] } {
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

function writeJson(req: NodeRequest, res: NodeResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  };
  // Only HTTP/1.1 has Connection (an unread oversized body is not worth keeping the connection for).
  if (close && req.httpVersionMajor === 1) headers.connection = 'close';
  (res as ServerResponse).writeHead(status, headers);
  (res as ServerResponse).end(text);
}

// ---------------------------------------------------------------------------------------------

type Body = { ok: true; bytes: Buffer } | { ok: false; error: ConnectError };

function tooLarge(max: number): ConnectError {
  return new ConnectError(`request body larger than the configured limit of ${max} bytes`, Code.ResourceExhausted);
}

/** The request body, at most `max` bytes; a larger one is left unread (drained) and refused. */
function readBody(req: NodeRequest, max: number): Promise<Body> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      resolve({ ok: false, error: tooLarge(max) });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: Body) => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        finish({ ok: false, error: tooLarge(max) });
        req.resume(); // read on and drop the rest
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, bytes: Buffer.concat(chunks) });
    const onError = (err: Error) =>
      finish({
        ok: false,
        error: new ConnectError(`request body could not be read: ${err.message}`, Code.Canceled),
      });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function headersOf(req: NodeRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(':') || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, String(value));
  }
  return headers;
}

export function createRestHandler(services: RestService[], options: RestOptions): RestHandler {
  const registry = createRegistry(...filesOf(services.map((s) => s.service)), BadRequestSchema, ErrorDetailSchema);
  const routes: Route[] = [];
  for (const { service, impl } of services) {
    const basePath = hasOption(service.file, openapiv2_swagger) ? getOption(service.file, openapiv2_swagger).basePath : '';
    const prefix = basePath.replace(/\/+$/, '');
    for (const method of service.methods) {
      if (!hasOption(method, httpRule)) continue;
      const top = getOption(method, httpRule);
      for (const rule of [top, ...top.additionalBindings]) {
        const { case: kind, value } = rule.pattern;
        if (kind === undefined) continue;
        const verb = kind === 'custom' ? (value as { kind: string }).kind.toUpperCase() : kind.toUpperCase();
        const path = kind === 'custom' ? (value as { path: string }).path : (value as string);
        // v1 rules are relative to the file's base_path (/management/v1); v2 rules are absolute (base_path "/").
        const template = compileTemplate(`${prefix}${path.startsWith('/') ? '' : '/'}${path}`, method.input);
        const fn = impl[method.localName];
        let bodyField: DescField | undefined;
        if (rule.body !== '' && rule.body !== '*') {
          bodyField = resolveFieldPath(method.input, rule.body)?.[0];
          if (!bodyField) throw new Error(`${method.parent.typeName}.${method.name}: no body field ${rule.body}`);
        }
        routes.push({
          verb,
          template,
          rule,
          service,
          method,
          impl: typeof fn === 'function' && method.methodKind === 'unary' ? (fn.bind(impl) as Route['impl']) : undefined,
          bodyField,
          responseField: rule.responseBody ? resolveFieldPath(method.output, rule.responseBody)?.[0] : undefined,
        });
      }
    }
  }
  // The most literal segments first (`/users/me` before `/users/{id}`); then in the services' order.
  const ordered = routes
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.template.literals - a.r.template.literals || a.i - b.i)
    .map((x) => x.r);

  // Bucketed by the first path segment (auth, management, v2): a path of no rule (/graphql) costs one lookup.
  const buckets = new Map<string, Route[]>();
  const anyFirst: Route[] = [];
  for (const route of ordered) {
    const first = route.template.segments[0];
    if (first?.kind === 'literal' && !(route.template.verb !== undefined && route.template.segments.length === 1)) {
      buckets.set(first.text, [...(buckets.get(first.text) ?? []), route]);
    } else anyFirst.push(route);
  }
  const candidates = (first: string) => {
    const bucket = buckets.get(first);
    return !bucket ? anyFirst : anyFirst.length === 0 ? bucket : ordered.filter((r) => bucket.includes(r) || anyFirst.includes(r));
  };
  const find = (verb: string | undefined, path: string) => {
    const parts = path.replace(/^\//, '').split('/');
    for (const route of candidates(parts[0]!)) {
      if (verb !== undefined && route.verb !== verb) continue;
      const values = matchTemplate(route.template, parts);
      if (values) return { route, values };
    }
    return undefined;
  };

  const interceptors = options.interceptors ?? [];

  async function serve(req: NodeRequest, res: NodeResponse, state: RequestState | undefined): Promise<void> {
    // The raw path, as the edge's WireRoute matched it (%-escapes are decoded per variable), and the query string.
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
    const authority = req.headers[':authority'] ?? req.headers.host ?? 'localhost';
    const verb = (req.method ?? 'GET').toUpperCase();
    const found = find(verb, path);
    if (!found) {
      // grpc-gateway's routing errors: another method on this path is 405 -> UNIMPLEMENTED (501), else NOT_FOUND.
      req.resume();
      const other = find(undefined, path);
      const error = other ? new ConnectError('Method Not Allowed', Code.Unimplemented) : new ConnectError('Not Found', Code.NotFound);
      state?.errorCodes.push(codeName(error));
      return writeJson(req, res, HTTP_STATUS_OF_CODE[error.code]!, errorBody(error, registry));
    }
    const { route, values } = found;
    const { service, method } = route;

    // Parse the request; a failure is thrown inside the interceptors, so they see the method and the code.
    let early: ConnectError | undefined;
    let message = create(method.input);
    let close = false;
    if (!route.impl) {
      req.resume();
      early = new ConnectError(`${service.typeName}.${method.name} is not implemented`, Code.Unimplemented);
    } else {
      let json: JsonObject = {};
      if (route.rule.body !== '') {
        const body = await readBody(req, options.readMaxBytes);
        if (!body.ok) {
          early = body.error;
          close = early.code === Code.ResourceExhausted;
        } else {
          try {
            const text = utf8.decode(body.bytes).trim();
            if (text !== '') {
              const parsed: unknown = JSON.parse(text);
              if (route.bodyField) json = { [route.bodyField.jsonName]: parsed };
              else if (isPlainObject(parsed)) json = parsed;
              else throw new Error(`the body must be a JSON object for ${method.input.typeName}`);
            }
          } catch (err) {
            // Not the parser's own text: V8 quotes the body in it.
            const position = /position (\d+)/.exec((err as Error).message)?.[1];
            early = new ConnectError(
              err instanceof SyntaxError ? `invalid JSON body${position ? ` at position ${position}` : ''}` : (err as Error).message,
              Code.InvalidArgument,
            );
          }
        }
      } else {
        req.resume();
      }
      if (!early) {
        try {
          // Without body "*", the fields not bound by the path or the body come from the query string.
          if (route.rule.body !== '*') {
            const bound = new Set(route.template.variables.map((v) => v.fields.map((f) => f.name).join('.')));
            if (route.bodyField) bound.add(route.bodyField.name);
            const byKey = new Map<string, string[]>();
            for (const [key, value] of query) byKey.set(key, [...(byKey.get(key) ?? []), value]);
            for (const [key, texts] of byKey) {
              const fields = resolveFieldPath(method.input, key, true);
              if (!fields) continue; // grpc-gateway ignores unknown query parameters
              if (bound.has(fields.map((f) => f.name).join('.'))) continue;
              setJson(json, fields, texts, true);
            }
          }
          // Path variables last: they win over the body, as in grpc-gateway.
          route.template.variables.forEach((v, k) => setJson(json, v.fields, [values[k]!], false));
          message = fromJson(method.input, json as JsonValue, {
            ignoreUnknownFields: true,
            registry,
          });
        } catch (err) {
          early = new ConnectError(`${(err as Error).message}`, Code.InvalidArgument);
        }
      }
    }

    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort(new ConnectError('the client closed the request', Code.Canceled));
    });
    const context = createHandlerContext({
      service,
      method,
      protocolName: 'rest',
      requestMethod: verb,
      url: `http://${String(authority)}${target}`,
      requestSignal: abort.signal,
      requestHeader: headersOf(req),
      contextValues: createContextValues().set(requestStateKey, state),
    });
    const call = async (r: UnaryRequest): Promise<UnaryResponse> => {
      if (early) throw early;
      const out = await route.impl!(r.message, {
        ...context,
        service: r.service,
        requestHeader: r.header,
        signal: r.signal,
        values: r.contextValues,
      });
      return {
        stream: false,
        service,
        method: r.method,
        header: context.responseHeader,
        trailer: context.responseTrailer,
        message: isMessage(out, method.output) ? out : create(method.output, out as never),
      } as UnaryResponse;
    };
    const next = interceptors.reduceRight<(r: UnaryRequest) => Promise<UnaryResponse>>((n, i) => i(n as never) as never, call);
    try {
      const response = await next({
        stream: false,
        service,
        method: method as UnaryRequest['method'],
        requestMethod: verb,
        url: context.url,
        signal: context.signal,
        header: context.requestHeader,
        contextValues: context.values,
        message,
      });
      const json = toJson(method.output, response.message, { registry }) as Record<string, JsonValue>;
      // response_body: only that field of the output (none of the four services uses it today).
      writeJson(req, res, 200, route.responseField ? (json[route.responseField.jsonName] ?? null) : json);
    } catch (err) {
      let error: ConnectError;
      if (err instanceof ConnectError) error = err;
      else if (options.logger)
        error = toConnectError(err, options.logger, {
          method: method.name,
          requestId: state?.requestId,
        });
      else error = new ConnectError('Unexpected error.', Code.Internal);
      // An oversized body is 413 (grpc-gateway itself has no cap; its gRPC server's RESOURCE_EXHAUSTED would be 429, which invites a retry).
      const status = close && error === early ? 413 : (HTTP_STATUS_OF_CODE[error.code] ?? 500);
      writeJson(req, res, status, errorBody(error, registry), close);
    }
  }

  return {
    routes: ordered.map((r) => ({
      verb: r.verb,
      template: r.template.text,
      method: `${r.service.typeName}.${r.method.name}`,
    })),
    matches: (method, path) => find(method.toUpperCase(), path) !== undefined,
    matchesPath: (path) => find(undefined, path) !== undefined,
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
