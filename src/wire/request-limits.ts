// Request messages refused before they are decoded when decoding them would build far more
// objects than any legal request holds (a 13 MB AddHumanUser of millions of empty `metadata`
// entries: 2-3 s of decoding and over 1 GB of RSS before the command's rule of at most 20 ran).
// INVALID_ARGUMENT, nothing decoded, nothing run. Interceptors run only after decoding, so
// the checks sit where connect hands bytes to the decoder:
//
// - JSON (Connect JSON, gRPC/gRPC-web +json; REST checks in rest-request.ts jsonOfBody): the
//   router's jsonOptions.textDecoder, which connect's JSON serialization calls on the message
//   bytes (decompressed) right before fromJsonString: more than MAX_JSON_CONTAINERS objects
//   and arrays (src/http/json-containers.ts) is refused.
// - Binary, uncompressed (gRPC, gRPC-web incl. text mode, Connect proto): connect has no hook
//   before fromBinary, so the adapter (rpc-adapter.ts) reads each message off the request body
//   before the router does: every envelope (5-byte prefix) of gRPC, gRPC-web and Connect
//   streaming, the whole body of a Connect unary call. The message is scanned
//   (protobuf-fields.ts) once complete, and handed on whole.
// - Binary, compressed (grpc-encoding, connect-content-encoding, content-encoding): the adapter
//   decompresses the message itself (the same gzip and brotli, bounded by readMaxBytes as
//   connect bounds them), scans it, and hands it on uncompressed (an envelope with the flag
//   cleared; a Connect unary body without its content-encoding), so the router never decodes a
//   binary message the adapter has not seen. The method's own Compression objects (guardedRouter
//   registers each method with its own) still scan whatever connect decompresses: compressed
//   JSON, and a binary message in an encoding the adapter does not know (which connect refuses).
//
// A binary message the scan lets through is then decoded once as the router will decode it: one
// that does not decode is INVALID_ARGUMENT in the gateway's words (decode-errors.ts), where
// connect would answer INTERNAL with the decoder's text. An envelope flagged compressed on a
// request that names no compression is INTERNAL, as grpc-go answers it.
//
// Anything else the scans do not understand (a malformed envelope, a body over readMaxBytes, an
// unknown encoding) is handed on untouched, for the router to answer as before.
import { fromJson, type DescMessage, type DescMethod, type JsonReadOptions, type JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type ConnectRouterOptions } from '@connectrpc/connect';
import type { Compression, UniversalServerRequest } from '@connectrpc/connect/protocol';
import { MAX_JSON_CONTAINERS, tooManyJsonContainers, UNSCANNED_JSON_BYTES } from '../http/json-containers.ts';
import { binaryDecodeRefusal, compressedWithoutEncoding, withoutValue } from './decode-errors.ts';
import { enumNameRefusal } from './enum-names.ts';
import { protobufFieldsRefusal } from './protobuf-fields.ts';

/** INVALID_ARGUMENT for a JSON request body with more than MAX_JSON_CONTAINERS objects and arrays; undefined when it may be parsed. */
export function jsonBodyRefusal(text: string): ConnectError | undefined {
  if (text.length <= UNSCANNED_JSON_BYTES || !tooManyJsonContainers(text, MAX_JSON_CONTAINERS)) return undefined;
  return new ConnectError(`request body: more than ${MAX_JSON_CONTAINERS} JSON objects and arrays`, Code.InvalidArgument);
}

/** INVALID_ARGUMENT for a binary message of type `input` with too many fields (protobuf-fields.ts); undefined when it may be decoded. */
function fieldsRefusal(input: DescMessage, bytes: Uint8Array): ConnectError | undefined {
  const reason = protobufFieldsRefusal(input, bytes);
  return reason === undefined ? undefined : new ConnectError(`request message: ${reason}`, Code.InvalidArgument);
}

/**
 * INVALID_ARGUMENT for a binary message of type `input` with too many fields, or one that does
 * not decode (decode-errors.ts); undefined when the router may decode it.
 */
export function binaryMessageRefusal(input: DescMessage, bytes: Uint8Array): ConnectError | undefined {
  return fieldsRefusal(input, bytes) ?? binaryDecodeRefusal(input, bytes);
}

/** The decoder connect's JSON serialization turns message bytes into text with; the text is checked before it is parsed. */
class CountingTextDecoder extends TextDecoder {
  override decode(input?: AllowSharedBufferSource, options?: TextDecodeOptions): string {
    const text = super.decode(input, options);
    const refusal = jsonBodyRefusal(text);
    if (refusal) throw refusal;
    return text;
  }
}

/**
 * CountingTextDecoder for the messages of one method: the parsed text is checked for enum
 * names its type does not have (enum-names.ts), and decoded once as connect will decode it, so
 * that a value of the wrong type is refused without being quoted (decode-errors.ts).
 */
class MethodJsonDecoder extends CountingTextDecoder {
  readonly #input: DescMessage;
  readonly #options: Partial<JsonReadOptions>;
  constructor(input: DescMessage, options: Partial<JsonReadOptions>) {
    super();
    this.#input = input;
    this.#options = options;
  }
  override decode(input?: AllowSharedBufferSource, options?: TextDecodeOptions): string {
    const text = super.decode(input, options);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return text; // connect's own parse answers it
    }
    const refusal = enumNameRefusal(this.#input, json);
    if (refusal) throw refusal;
    try {
      fromJson(this.#input, json as JsonValue, this.#options);
    } catch (err) {
      throw new ConnectError(withoutValue(String((err as Error).message)), Code.InvalidArgument);
    }
    return text;
  }
}

/** A Compression whose decompressed messages are scanned as messages of type `input`. */
function scanningCompression(compression: Compression, input: DescMessage): Compression {
  return {
    name: compression.name,
    compress: compression.compress,
    async decompress(bytes, readMaxBytes) {
      const out = await compression.decompress(bytes, readMaxBytes);
      // Only the field count: these bytes may be JSON (the adapter decompresses binary messages itself).
      const refusal = fieldsRefusal(input, out);
      if (refusal) throw refusal;
      return out;
    },
  };
}

/**
 * connect's router for `options`, with the JSON check in its jsonOptions, and each method
 * registered on its own (router.rpc) with Compression objects that scan its input type. A
 * service method without an implementation answers UNIMPLEMENTED, as router.service does.
 */
export function guardedRouter(
  create: (options: ConnectRouterOptions) => ConnectRouter,
  options: ConnectRouterOptions & { acceptCompression: Compression[] },
): ConnectRouter {
  const base = create({ ...options, jsonOptions: { ...options.jsonOptions, textDecoder: new CountingTextDecoder() } as ConnectRouterOptions['jsonOptions'] });
  // Per-call options replace the router's protocol switches (connect's whichProtocols), so they are repeated.
  const perMethod = (method: DescMethod, extra?: object) => ({
    ...extra,
    jsonOptions: {
      ...options.jsonOptions,
      textDecoder: new MethodJsonDecoder(method.input, { ignoreUnknownFields: true, ...options.jsonOptions }),
    } as ConnectRouterOptions['jsonOptions'],
    grpc: options.grpc,
    grpcWeb: options.grpcWeb,
    connect: options.connect,
    acceptCompression: options.acceptCompression.map((c) => scanningCompression(c, method.input)),
  });
  const router: ConnectRouter = {
    handlers: base.handlers,
    service(service, impl, extra) {
      for (const method of service.methods) {
        const fn = (impl as Record<string, unknown>)[method.localName];
        const bound =
          typeof fn === 'function'
            ? fn.bind(impl)
            : () => {
                throw new ConnectError(`${service.typeName}.${method.name} is not implemented`, Code.Unimplemented);
              };
        base.rpc(method, bound as never, perMethod(method, extra));
      }
      return router;
    },
    rpc(method, impl, extra) {
      base.rpc(method, impl, perMethod(method, extra));
      return router;
    },
  };
  return router;
}

const COMPRESSED_FLAG = 0b00000001;
/** Bodies of enveloped binary messages: gRPC, gRPC-web (text mode is binary by then), Connect streaming. */
const ENVELOPED_BINARY = /^application\/(?:grpc(?:-web)?(?:\+proto)?|connect\+proto)$/i;
/** A Connect unary binary body (as connect's contentTypeUnaryRegExp). */
const UNARY_BINARY = /^application\/proto$/i;

/** The first `n` bytes of `chunks` (which hold at least n), removed from them. */
function take(chunks: Uint8Array[], n: number): Uint8Array {
  const first = chunks[0]!;
  if (first.byteLength >= n) {
    if (first.byteLength === n) chunks.shift();
    else chunks[0] = first.subarray(n);
    return first.subarray(0, n);
  }
  const out = new Uint8Array(n);
  let filled = 0;
  while (filled < n) {
    const chunk = chunks[0]!;
    const part = Math.min(chunk.byteLength, n - filled);
    out.set(chunk.subarray(0, part), filled);
    filled += part;
    if (part === chunk.byteLength) chunks.shift();
    else chunks[0] = chunk.subarray(part);
  }
  return out;
}

/** Byte `i` of `chunks` (which hold more than i bytes). */
function byteAt(chunks: Uint8Array[], i: number): number {
  for (const chunk of chunks) {
    if (i < chunk.byteLength) return chunk[i]!;
    i -= chunk.byteLength;
  }
  return 0;
}

/** How a request's messages are compressed: none named (or identity), one the adapter knows, or another (left to the router). */
type MessageCompression = { kind: 'none' } | { kind: 'known'; compression: Compression } | { kind: 'unknown' };

function compressionNamed(name: string | null, known: readonly Compression[]): MessageCompression {
  if (name === null || name === 'identity') return { kind: 'none' };
  const compression = known.find((c) => c.name === name);
  return compression ? { kind: 'known', compression } : { kind: 'unknown' };
}

/**
 * The message decompressed. Data that does not decompress is INVALID_ARGUMENT (connect-node
 * answers a truncated stream INTERNAL "decompression failed"); a message over readMaxBytes once
 * decompressed stays connect-node's RESOURCE_EXHAUSTED.
 */
async function decompressed(compression: Compression, bytes: Uint8Array, readMaxBytes: number): Promise<Uint8Array> {
  try {
    return await compression.decompress(bytes, readMaxBytes);
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.ResourceExhausted) throw err;
    throw new ConnectError(`request message: not valid ${compression.name} data`, Code.InvalidArgument);
  }
}

/** An envelope of `message` with flags 0 (not compressed). */
function plainEnvelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.byteLength);
  new DataView(out.buffer).setUint32(1, message.byteLength);
  out.set(message, 5);
  return out;
}

/**
 * The body, each enveloped message held until it is complete, decompressed when it is
 * compressed in a known encoding, scanned, then passed on whole (uncompressed). A prefix
 * announcing more than readMaxBytes, and whatever follows, passes as it comes (the router
 * refuses it), as does an incomplete last envelope and a message in an unknown encoding. A
 * compressed envelope on a request that names no compression is refused.
 */
async function* scanEnvelopes(body: AsyncIterable<Uint8Array>, input: DescMessage, readMaxBytes: number, compression: MessageCompression): AsyncIterable<Uint8Array> {
  const pending: Uint8Array[] = [];
  let buffered = 0;
  let passOn = false;
  for await (const chunk of body) {
    if (passOn) {
      yield chunk;
      continue;
    }
    pending.push(chunk);
    buffered += chunk.byteLength;
    while (buffered >= 5) {
      const length = byteAt(pending, 1) * 2 ** 24 + ((byteAt(pending, 2) << 16) | (byteAt(pending, 3) << 8) | byteAt(pending, 4));
      if (length > readMaxBytes) {
        passOn = true;
        break;
      }
      if (buffered < 5 + length) break;
      const envelope = take(pending, 5 + length);
      buffered -= 5 + length;
      if ((envelope[0]! & COMPRESSED_FLAG) === 0) {
        const refusal = binaryMessageRefusal(input, envelope.subarray(5));
        if (refusal) throw refusal;
        yield envelope;
      } else if (compression.kind === 'known') {
        const message = await decompressed(compression.compression, envelope.subarray(5), readMaxBytes);
        const refusal = binaryMessageRefusal(input, message);
        if (refusal) throw refusal;
        yield plainEnvelope(message);
      } else if (compression.kind === 'none') {
        throw compressedWithoutEncoding();
      } else {
        yield envelope;
      }
    }
    if (passOn) {
      yield* pending.splice(0);
      buffered = 0;
    }
  }
  yield* pending;
}

/**
 * The body of a Connect unary call, held until complete, decompressed with `compression` when
 * given, scanned, and passed on whole (uncompressed); over readMaxBytes it passes as it comes (the
 * router refuses it).
 */
async function* scanUnaryBody(body: AsyncIterable<Uint8Array>, input: DescMessage, readMaxBytes: number, compression?: Compression): AsyncIterable<Uint8Array> {
  const pending: Uint8Array[] = [];
  let size = 0;
  let passOn = false;
  for await (const chunk of body) {
    if (passOn) {
      yield chunk;
      continue;
    }
    pending.push(chunk);
    size += chunk.byteLength;
    if (size > readMaxBytes) {
      passOn = true;
      yield* pending.splice(0);
    }
  }
  if (passOn || size === 0) return;
  const sent = pending.length === 1 ? pending[0]! : take(pending, size);
  const bytes = compression ? await decompressed(compression, sent, readMaxBytes) : sent;
  const refusal = binaryMessageRefusal(input, bytes);
  if (refusal) throw refusal;
  if (bytes.byteLength > 0) yield bytes;
}

/**
 * The request with its body scanned as binary messages of type `input` on their way to the
 * router, for the binary content types, decompressed by the adapter when compressed in one of
 * `compressions`; other requests (JSON, GET, unknown content types or encodings) as they are.
 */
export function scanBinaryRequest(req: UniversalServerRequest, input: DescMessage, readMaxBytes: number, compressions: readonly Compression[]): UniversalServerRequest {
  const body = req.body;
  if (typeof body !== 'object' || body === null || !(Symbol.asyncIterator in body)) return req;
  const stream = body as AsyncIterable<Uint8Array>;
  const contentType = req.header.get('content-type') ?? '';
  if (ENVELOPED_BINARY.test(contentType)) {
    // Connect streaming names its compression in connect-content-encoding, gRPC and gRPC-web in grpc-encoding.
    const encoding = req.header.get(/^application\/connect/i.test(contentType) ? 'connect-content-encoding' : 'grpc-encoding');
    return { ...req, body: scanEnvelopes(stream, input, readMaxBytes, compressionNamed(encoding, compressions)) };
  }
  if (req.method === 'POST' && UNARY_BINARY.test(contentType)) {
    const compression = compressionNamed(req.header.get('content-encoding'), compressions);
    if (compression.kind === 'unknown') return req;
    if (compression.kind === 'none') return { ...req, body: scanUnaryBody(stream, input, readMaxBytes) };
    // Handed on decompressed: the router must not decompress it again, nor hold it to the compressed length.
    const header = new Headers(req.header);
    header.delete('content-encoding');
    header.delete('content-length');
    return { ...req, header, body: scanUnaryBody(stream, input, readMaxBytes, compression.compression) };
  }
  return req;
}
