// The request body of an RPC call on its way to connect's router (rpc-adapter.ts), read message
// by message: every envelope (5-byte prefix) of gRPC, gRPC-web (text mode is binary by then)
// and Connect streaming, the whole body of a Connect unary call, each held until complete.
//
// - Compressed messages (grpc-encoding, connect-content-encoding, content-encoding: gzip or br)
//   are decompressed here and handed on uncompressed (an envelope with the flag cleared; a
//   Connect unary body without its content-encoding), so the router decompresses nothing. What
//   the request's messages hold once decompressed counts against the caller's cap, all of them
//   together (ScanOptions.cap: the body cap, 64 KiB without a valid token, as the edge caps the
//   bytes sent): a 64 KiB gzip bomb sent without a token stops at 64 KiB of output, not at the
//   13.5 MB a message may hold. Data that does not decompress is INVALID_ARGUMENT.
// - Binary messages are then scanned for their field counts and decoded once as the router will
//   decode them (request-limits.ts binaryMessageRefusal); JSON ones are checked by the router's
//   text decoder (request-limits.ts).
// - An envelope flagged compressed on a request that names no compression is INTERNAL, as
//   grpc-go answers it (decode-errors.ts).
//
// Anything else the scan does not understand (a malformed envelope, a prefix over readMaxBytes,
// an unknown encoding) is handed on untouched, for the router to answer.
import type { DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Compression, UniversalServerRequest } from '@connectrpc/connect/protocol';
import { compressedWithoutEncoding } from './decode-errors.ts';
import { binaryMessageRefusal } from './request-limits.ts';

const COMPRESSED_FLAG = 0b00000001;
/** Enveloped bodies, as connect's content types: gRPC, gRPC-web, Connect streaming; group 1 or 2 set for JSON. */
const ENVELOPED =
  /^application\/(?:grpc(?:-web)?(?:\+(?:(json)(?:; ?charset=utf-?8)?|proto))?|connect\+?(?:(json)(?:; ?charset=utf-?8)?|proto))$/i;
/** A Connect unary body (connect's contentTypeUnaryRegExp); group 1 set for JSON. */
const UNARY = /^application\/(?:(json)(?:; ?charset=utf-?8)?|proto)$/i;

export interface ScanOptions {
  /** Largest message (connect's readMaxBytes): a longer envelope prefix is left to the router. */
  readMaxBytes: number;
  /** The encodings decompressed here (connect-node's gzip and brotli). */
  compressions: readonly Compression[];
  /** What the request's messages may hold once decompressed, all together, and the refusal past it; default readMaxBytes. */
  cap?: { bytes: number; refusal: () => ConnectError };
}

/** How a request's messages are compressed: none named (or identity), one the scan knows, or another (left to the router). */
type MessageCompression = { kind: 'none' } | { kind: 'known'; compression: Compression } | { kind: 'unknown' };

function compressionNamed(name: string | null, known: readonly Compression[]): MessageCompression {
  if (name === null || name === 'identity') return { kind: 'none' };
  const compression = known.find((c) => c.name === name);
  return compression ? { kind: 'known', compression } : { kind: 'unknown' };
}

/** What one request's messages may still hold once decompressed. */
class Allowance {
  #left: number;
  readonly #refusal: () => ConnectError;
  constructor(options: ScanOptions) {
    this.#left = options.cap?.bytes ?? options.readMaxBytes;
    this.#refusal =
      options.cap?.refusal ??
      (() => new ConnectError(`request message larger than ${options.readMaxBytes} bytes once decompressed`, Code.ResourceExhausted));
  }

  /** `bytes` decompressed, within what is left (node's zlib stops there). Data that does not decompress: INVALID_ARGUMENT. */
  async decompress(compression: Compression, bytes: Uint8Array): Promise<Uint8Array> {
    if (this.#left < 1) throw this.#refusal();
    let out: Uint8Array;
    try {
      out = await compression.decompress(bytes, this.#left);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.ResourceExhausted) throw this.#refusal();
      throw new ConnectError(`request message: not valid ${compression.name} data`, Code.InvalidArgument);
    }
    this.#left -= out.byteLength;
    return out;
  }

  /** Counts a message that came uncompressed. */
  count(bytes: number): void {
    this.#left -= bytes;
  }
}

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

/** An envelope of `message` with flags 0 (not compressed). */
function plainEnvelope(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.byteLength);
  new DataView(out.buffer).setUint32(1, message.byteLength);
  out.set(message, 5);
  return out;
}

/** What a complete message is checked for: binary ones are scanned and decoded, JSON ones pass (the router's text decoder checks them). */
type Check = (message: Uint8Array) => void;

/**
 * The body, each enveloped message held until it is complete, decompressed when it is
 * compressed in a known encoding, checked, then passed on whole (uncompressed). A prefix
 * announcing more than readMaxBytes, and whatever follows, passes as it comes (the router
 * refuses it), as does an incomplete last envelope and a message in an unknown encoding.
 */
async function* scanEnvelopes(
  body: AsyncIterable<Uint8Array>,
  check: Check,
  options: ScanOptions,
  compression: MessageCompression,
): AsyncIterable<Uint8Array> {
  const allowance = new Allowance(options);
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
      if (length > options.readMaxBytes) {
        passOn = true;
        break;
      }
      if (buffered < 5 + length) break;
      const envelope = take(pending, 5 + length);
      buffered -= 5 + length;
      if ((envelope[0]! & COMPRESSED_FLAG) === 0) {
        allowance.count(length);
        check(envelope.subarray(5));
        yield envelope;
      } else if (compression.kind === 'known') {
        const message = await allowance.decompress(compression.compression, envelope.subarray(5));
        check(message);
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
 * given, checked, and passed on whole (uncompressed); over readMaxBytes it passes as it comes
 * (the router refuses it).
 */
async function* scanUnaryBody(
  body: AsyncIterable<Uint8Array>,
  check: Check,
  options: ScanOptions,
  compression?: Compression,
): AsyncIterable<Uint8Array> {
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
    if (size > options.readMaxBytes) {
      passOn = true;
      yield* pending.splice(0);
    }
  }
  if (passOn || size === 0) return;
  const sent = pending.length === 1 ? pending[0]! : take(pending, size);
  const bytes = compression ? await new Allowance(options).decompress(compression, sent) : sent;
  check(bytes);
  if (bytes.byteLength > 0) yield bytes;
}

/**
 * The request with its body read message by message on its way to the router (see above), for
 * the content types connect serves; other requests (GET, unknown content types or encodings)
 * as they are. `input`: the method's input type.
 */
export function scanRequest(req: UniversalServerRequest, input: DescMessage, options: ScanOptions): UniversalServerRequest {
  const body = req.body;
  if (typeof body !== 'object' || body === null || !(Symbol.asyncIterator in body)) return req;
  const stream = body as AsyncIterable<Uint8Array>;
  const contentType = req.header.get('content-type') ?? '';
  const binaryCheck: Check = (message) => {
    const refusal = binaryMessageRefusal(input, message);
    if (refusal) throw refusal;
  };
  const enveloped = ENVELOPED.exec(contentType);
  if (enveloped) {
    // Connect streaming names its compression in connect-content-encoding, gRPC and gRPC-web in grpc-encoding.
    const encoding = req.header.get(/^application\/connect/i.test(contentType) ? 'connect-content-encoding' : 'grpc-encoding');
    const check: Check = enveloped[1] || enveloped[2] ? () => {} : binaryCheck;
    return { ...req, body: scanEnvelopes(stream, check, options, compressionNamed(encoding, options.compressions)) };
  }
  const unary = req.method === 'POST' ? UNARY.exec(contentType) : null;
  if (unary) {
    const check: Check = unary[1] ? () => {} : binaryCheck;
    const compression = compressionNamed(req.header.get('content-encoding'), options.compressions);
    if (compression.kind === 'unknown') return req;
    // Plain JSON needs nothing here: the router's text decoder checks it.
    if (compression.kind === 'none') return unary[1] ? req : { ...req, body: scanUnaryBody(stream, check, options) };
    // Handed on decompressed: the router must not decompress it again, nor hold it to the compressed length.
    const header = new Headers(req.header);
    header.delete('content-encoding');
    header.delete('content-length');
    return { ...req, header, body: scanUnaryBody(stream, check, options, compression.compression) };
  }
  return req;
}
