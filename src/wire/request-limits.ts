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
// - Binary (gRPC, gRPC-web incl. text mode, Connect proto): connect has no hook before
//   fromBinary, so the adapter (rpc-adapter.ts) reads each message off the request body before
//   the router does, decompressed when it is compressed, and scans and decodes it there
//   (request-scan.ts, with binaryMessageRefusal below). The method's own Compression objects
//   (guardedRouter registers each method with its own) scan whatever connect still decompresses
//   itself, as a backstop.
//
// A binary message the scan lets through is then decoded once as the router will decode it: one
// that does not decode is INVALID_ARGUMENT in the gateway's words (decode-errors.ts), where
// connect would answer INTERNAL with the decoder's text.
import {
  fromBinary,
  fromJson,
  type DescMessage,
  type MessageShape,
  type DescMethod,
  type JsonReadOptions,
  type JsonValue,
} from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type ConnectRouterOptions, type HandlerContext } from '@connectrpc/connect';
import type { Compression } from '@connectrpc/connect/protocol';
import { MAX_JSON_CONTAINERS, tooManyJsonContainers, UNSCANNED_JSON_BYTES } from '../http/json-containers.ts';
import { binaryDecodeRefusal, notBinaryMessage, withoutValue } from './decode-errors.ts';
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

/** The binary message of type `input` decoded once, or the refusal binaryMessageRefusal would give it (grpc-unary.ts, which then decodes nothing again). */
export function decodeBinaryMessage(
  input: DescMessage,
  bytes: Uint8Array,
): { message: MessageShape<DescMessage> } | { refusal: ConnectError } {
  const refusal = fieldsRefusal(input, bytes);
  if (refusal) return { refusal };
  try {
    return { message: fromBinary(input, bytes) };
  } catch {
    return { refusal: notBinaryMessage(input) };
  }
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
      // Only the field count: these bytes may be JSON (the adapter decompresses what it knows itself).
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
  /** Each method's implementation by request path, as registered (the gRPC fast path calls them: grpc-unary.ts). */
  registered?: Map<string, { method: DescMethod; impl: (req: unknown, ctx: HandlerContext) => unknown }>,
): ConnectRouter {
  const base = create({
    ...options,
    jsonOptions: { ...options.jsonOptions, textDecoder: new CountingTextDecoder() } as ConnectRouterOptions['jsonOptions'],
  });
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
        registered?.set(`/${service.typeName}/${method.name}`, { method, impl: bound as never });
        base.rpc(method, bound as never, perMethod(method, extra));
      }
      return router;
    },
    rpc(method, impl, extra) {
      registered?.set(`/${method.parent.typeName}/${method.name}`, { method, impl: impl as never });
      base.rpc(method, impl, perMethod(method, extra));
      return router;
    },
  };
  return router;
}
