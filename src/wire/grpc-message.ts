// grpc-message as grpc-go (and so ZITADEL) writes it: only the bytes of the UTF-8 message
// outside 0x20-0x7E, and '%', percent-encoded (gRPC's PROTOCOL-HTTP2.md "Status-Message").
// connect-node writes encodeURIComponent(message) instead, which escapes ':', ';', ',', '/'
// and the like too; grpc-js decodes with decodeURI, which leaves those escapes in place, so
// ZITADEL's Node SDK showed "Invalid input%3A first_name%3A must not be empty". Every gRPC
// client decodes the grpc-go form, since it is the one the protocol describes.
//
// connect writes the header in three places, all rewritten here: the headers of a
// trailers-only answer, the HTTP/2 trailers of a gRPC answer (set once the body has ended),
// and the trailer envelope at the end of a gRPC-web body, which the body stream below rewrites
// as it passes (messages pass through unread and uncopied; only the small trailer envelope is
// held).
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';

const HEADER = 'grpc-message';
const TRAILER_FLAG = 0x80;

/** grpc-go's encodeGrpcMessage: UTF-8 bytes outside 0x20-0x7E and '%' as %XX (upper-case hex). */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length && plain; i++) {
    const c = message.charCodeAt(i);
    plain = c >= 0x20 && c <= 0x7e && c !== 0x25;
  }
  if (plain) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A grpc-message as connect wrote it (encodeURIComponent), in grpc-go's form; anything that does not decode is left as it is. */
export function reencodeGrpcMessage(written: string): string {
  let message: string;
  try {
    message = decodeURIComponent(written);
  } catch {
    return written;
  }
  return encodeGrpcMessage(message);
}

/** Rewrites the grpc-message of a Headers object in place, if it has one. */
export function reencodeHeaders(headers: Headers | undefined): void {
  const written = headers?.get(HEADER);
  if (written !== null && written !== undefined) headers!.set(HEADER, reencodeGrpcMessage(written));
}

/** A gRPC-web trailer envelope's block ("name: value\r\n" lines) with its grpc-message rewritten. */
function reencodeTrailerBlock(block: Uint8Array): Uint8Array {
  const text = Buffer.from(block).toString('latin1'); // header values are ASCII; latin1 keeps any byte as it is
  const lines = text.split('\r\n').map((line) => {
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon).trim().toLowerCase() !== HEADER) return line;
    return `${line.slice(0, colon)}: ${reencodeGrpcMessage(line.slice(colon + 1).trim())}`;
  });
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/**
 * The body of a gRPC-web answer with its trailer envelope's grpc-message rewritten. Envelopes
 * may be split or joined across chunks: the 5-byte prefixes are read as they come, message
 * bytes are passed on as they arrive, and a trailer envelope is gathered and sent rewritten.
 */
async function* reencodeGrpcWebBody(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let prefix = Buffer.alloc(0); // an envelope prefix being read (up to 5 bytes)
  let remaining = 0; // bytes left of the current envelope's data
  let trailer: Buffer[] | null = null; // the trailer envelope's prefix and data, while it is read
  for await (const chunk of body) {
    let at = 0;
    const out: Uint8Array[] = [];
    while (at < chunk.byteLength) {
      if (remaining === 0 && trailer === null) {
        const take = Math.min(5 - prefix.byteLength, chunk.byteLength - at);
        prefix = Buffer.concat([prefix, chunk.subarray(at, at + take)]);
        at += take;
        if (prefix.byteLength < 5) break;
        remaining = prefix.readUInt32BE(1);
        if (prefix[0]! & TRAILER_FLAG) trailer = [prefix];
        else out.push(prefix);
        if (remaining === 0 && trailer !== null) {
          out.push(trailerEnvelope(trailer));
          trailer = null;
        }
        prefix = Buffer.alloc(0);
        continue;
      }
      const take = Math.min(remaining, chunk.byteLength - at);
      const piece = chunk.subarray(at, at + take);
      at += take;
      remaining -= take;
      if (trailer === null) {
        out.push(piece);
        continue;
      }
      trailer.push(Buffer.from(piece));
      if (remaining === 0) {
        out.push(trailerEnvelope(trailer));
        trailer = null;
      }
    }
    if (out.length === 1) yield out[0]!;
    else if (out.length > 1) yield Buffer.concat(out);
  }
  // A body cut short passes on as it came.
  if (prefix.byteLength > 0) yield prefix;
  if (trailer !== null) yield Buffer.concat(trailer);
}

/** A whole trailer envelope (its prefix, then its data) with the block rewritten and the length set anew. */
function trailerEnvelope([prefix, ...data]: Buffer[]): Uint8Array {
  const block = reencodeTrailerBlock(Buffer.concat(data));
  const head = Buffer.alloc(5);
  head[0] = prefix![0]!;
  head.writeUInt32BE(block.byteLength, 1);
  return Buffer.concat([head, block]);
}

/** A gRPC or gRPC-web answer of connect's router with every grpc-message in grpc-go's form. */
export function grpcGoMessages(res: UniversalServerResponse, protocol: 'grpc' | 'grpc-web'): UniversalServerResponse {
  reencodeHeaders(res.header);
  if (res.body === undefined || !(Symbol.asyncIterator in Object(res.body))) return res;
  const body = res.body as AsyncIterable<Uint8Array>;
  if (protocol === 'grpc-web') return { ...res, body: reencodeGrpcWebBody(body) };
  const trailer = res.trailer;
  // connect sets the trailers when its body ends; the adapter sends them after the last chunk.
  async function* thenTrailers(): AsyncIterable<Uint8Array> {
    yield* body;
    reencodeHeaders(trailer);
  }
  return { ...res, body: thenTrailers() };
}
