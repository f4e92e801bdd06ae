// A REST request as the method's input message, as grpc-gateway builds it: the JSON body
// (body "*", or the one field of `body: "<field>"`) parsed as proto3 JSON with unknown fields
// discarded, then for rules without body "*" the query string on the fields the path and the
// body leave, then the path variables (they win over the body).
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { fromJson, ScalarType, type DescField, type JsonValue, type Message, type Registry } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { AppError } from '../errors.ts';
import type { RequestState } from '../http/request-state.ts';
import { withoutValue } from './decode-errors.ts';
import { enumNameRefusal } from './enum-names.ts';
import { jsonBodyRefusal } from './request-limits.ts';
import { bodyTooLarge } from './rest-errors.ts';
import { resolveFieldPath, type Route } from './rest-rules.ts';

type NodeRequest = IncomingMessage | Http2ServerRequest;

export type JsonObject = Record<string, unknown>;
const isPlainObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The body's bytes, or why it was not read: over `max` (bodyTooLarge), refused by the edge's
 * meter (its AppError), or the stream failed. `dropped`: the rest of the body was left unread
 * (drained), so the connection is not worth keeping.
 */
export type Body = { ok: true; bytes: Buffer } | { ok: false; error: ConnectError | AppError; dropped: boolean };

/**
 * The request body, at most `max` bytes; each chunk is passed to the edge's meter
 * (RequestState.meter) before it is kept. A larger or refused body is left unread (drained).
 */
export function readBody(req: NodeRequest, max: number, meter?: RequestState['meter']): Promise<Body> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      resolve({ ok: false, error: bodyTooLarge(max), dropped: true });
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
    const refuse = (error: ConnectError | AppError) => {
      finish({ ok: false, error, dropped: true });
      req.resume(); // read on and drop the rest
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return refuse(bodyTooLarge(max));
      const refused = meter?.(chunk.length);
      if (refused) return refuse(refused);
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, bytes: Buffer.concat(chunks) });
    const onError = (err: Error) =>
      finish({
        ok: false,
        error: new ConnectError(`request body could not be read: ${err.message}`, Code.Canceled),
        dropped: false,
      });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body as the JSON object of the input message (under the body field's name for `body:
 * "<field>"`); INVALID_ARGUMENT when it is not, or when it holds more objects and arrays than
 * any request needs (counted before JSON.parse builds them: request-limits.ts).
 */
export function jsonOfBody(route: Route, bytes: Buffer): JsonObject {
  try {
    const text = utf8.decode(bytes).trim();
    if (text === '') return {};
    const refusal = jsonBodyRefusal(text);
    if (refusal) throw refusal;
    const parsed: unknown = JSON.parse(text);
    if (route.bodyField) return { [route.bodyField.jsonName]: parsed };
    if (isPlainObject(parsed)) return parsed;
    throw new Error(`the body must be a JSON object for ${route.method.input.typeName}`);
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    // Not the parser's own text: V8 quotes the body in it.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new ConnectError(
      err instanceof SyntaxError ? `invalid JSON body${position ? ` at position ${position}` : ''}` : (err as Error).message,
      Code.InvalidArgument,
    );
  }
}

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

/**
 * Most query parameters a request may have (counting repeats and unknown names): more is
 * INVALID_ARGUMENT. grpc-gateway has no such limit; here it bounds the work an untrusted query
 * string costs, far above what any method's fields call for.
 */
export const MAX_QUERY_PARAMS = 1000;

/**
 * The query string's values per parameter name, in their order; work linear in its length.
 * INVALID_ARGUMENT for more than MAX_QUERY_PARAMS parameters.
 */
export function queryValues(query: string): Map<string, string[]> {
  const params = new URLSearchParams(query);
  if (params.size > MAX_QUERY_PARAMS)
    throw new ConnectError(`too many query parameters: ${params.size}, at most ${MAX_QUERY_PARAMS}`, Code.InvalidArgument);
  const byKey = new Map<string, string[]>();
  for (const [key, value] of params) {
    const texts = byKey.get(key);
    if (texts) texts.push(value);
    else byKey.set(key, [value]);
  }
  return byKey;
}

/**
 * The input message from the body's JSON object (changed in place), the query string (without
 * its "?"; read only for rules without body "*") and the path variables' values (in the
 * template's order); INVALID_ARGUMENT when it does not fit.
 */
export function requestMessage(route: Route, values: string[], query: string, json: JsonObject, registry: Registry): Message {
  const { method } = route;
  // Without body "*", the fields not bound by the path or the body come from the query string.
  const byKey = route.rule.body !== '*' ? queryValues(query) : undefined;
  try {
    if (byKey) {
      const bound = new Set(route.template.variables.map((v) => v.fields.map((f) => f.name).join('.')));
      if (route.bodyField) bound.add(route.bodyField.name);
      for (const [key, texts] of byKey) {
        const fields = resolveFieldPath(method.input, key, true);
        if (!fields) continue; // grpc-gateway ignores unknown query parameters
        if (bound.has(fields.map((f) => f.name).join('.'))) continue;
        setJson(json, fields, texts, true);
      }
    }
    // Path variables last: they win over the body, as in grpc-gateway.
    route.template.variables.forEach((v, k) => setJson(json, v.fields, [values[k]!], false));
    const refusal = enumNameRefusal(method.input, json);
    if (refusal) throw refusal;
    return fromJson(method.input, json as JsonValue, { ignoreUnknownFields: true, registry });
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    throw new ConnectError(withoutValue(String((err as Error).message)), Code.InvalidArgument);
  }
}
