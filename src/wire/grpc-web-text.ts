// gRPC-web text mode (application/grpc-web-text, github.com/grpc/grpc doc/PROTOCOL-WEB.md),
// which connect-es does not serve: the body is base64 of the binary gRPC-web body. The RPC
// adapter (rpc-adapter.ts) rewrites such a request into binary gRPC-web for connect's router
// (the body decoded as it streams in, content type application/grpc-web+proto) and the answer
// back into text (each body chunk base64-encoded on its own, content type
// application/grpc-web-text+proto).
//
// Decoding goes by 4-character quanta, so a body made of several padded base64 segments (a
// client may flush its buffer at any point) decodes, and a chunk may end anywhere: fewer than
// 4 characters wait for the next one. Strict: only the standard alphabet; '=' only as the last
// one or two characters of a quantum; the body ends on a whole quantum. Whitespace and line
// breaks are refused like any other character: grpc-web clients never send them, and refusing
// them keeps the text at most 4/3 of the bytes it carries plus padding, so the text cap below is
// the binary cap's image. A violation answers INVALID_ARGUMENT.
//
// Bounded and linear: each chunk is decoded once, at most 3 characters are held between chunks,
// and the text is cut at the largest legal encoding of one message (readMaxBytes plus its 5-byte
// envelope prefix, plus slack for segment padding) with RESOURCE_EXHAUSTED. (connect's router
// caps the decoded message at readMaxBytes anyway, from the envelope prefix.)
//
// The answer: each chunk the router writes (one per envelope: a message, then the trailer
// envelope) is encoded and padded on its own, as PROTOCOL-WEB describes a server doing
// ("base64-encode and flush gRPC messages atomically"): a message goes out whole as soon as it
// is written, and clients decode concatenated padded segments. An answer without a body (a
// trailers-only error, 415, 405) keeps its headers, the content type made text.
import { Code, ConnectError } from '@connectrpc/connect';
import type { UniversalServerRequest, UniversalServerResponse } from '@connectrpc/connect/protocol';

const TEXT_CONTENT_TYPE = /^application\/grpc-web-text(?:\+proto)?$/i;
const BINARY_CONTENT_TYPE = /^application\/grpc-web(?:\+proto)?$/i;

/** What the request is handed to the router as, and what a text answer is sent as. */
export const GRPC_WEB_PROTO = 'application/grpc-web+proto';
export const GRPC_WEB_TEXT_PROTO = 'application/grpc-web-text+proto';

/** Extra text beyond the encoding of the largest message: padding of a body sent in several segments (4 characters at most per segment). */
const SEGMENT_SLACK = 4096;

/** True for application/grpc-web-text and application/grpc-web-text+proto (the text mode served here). */
export const isGrpcWebText = (contentType: string | null | undefined): boolean => TEXT_CONTENT_TYPE.test((contentType ?? '').trim());

/** Characters of base64 text accepted for a message of at most readMaxBytes bytes. */
export const maxTextLength = (readMaxBytes: number) => Math.ceil((readMaxBytes + 5) / 3) * 4 + SEGMENT_SLACK;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PAD = 64;
const INVALID = 255;
/** Character code → 6-bit value, PAD for '=', INVALID otherwise. */
const VALUE = new Uint8Array(256).fill(INVALID);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
VALUE['='.charCodeAt(0)] = PAD;

const invalid = (why: string, at: number) =>
  new ConnectError(`invalid grpc-web-text body: ${why} at character ${at}`, Code.InvalidArgument);

/**
 * A streaming decoder of base64 text made of padded segments. `push` returns the bytes of the
 * whole quanta so far (at most 3 characters are kept for the next chunk); `end` checks that
 * nothing is left over. Both throw an INVALID_ARGUMENT ConnectError on bad text.
 */
export function createBase64Decoder() {
  let rest = new Uint8Array(0);
  /** Characters consumed before `rest`, for error positions. */
  let seen = 0;
  return {
    push(chunk: Uint8Array): Uint8Array {
      const text = rest.length === 0 ? chunk : concat(rest, chunk);
      const whole = text.length - (text.length % 4);
      const out = new Uint8Array((whole / 4) * 3);
      let o = 0;
      for (let i = 0; i < whole; i += 4) {
        const a = VALUE[text[i]!]!;
        const b = VALUE[text[i + 1]!]!;
        const c = VALUE[text[i + 2]!]!;
        const d = VALUE[text[i + 3]!]!;
        if ((a | b | c | d) < PAD) {
          out[o++] = (a << 2) | (b >> 4);
          out[o++] = ((b & 15) << 4) | (c >> 2);
          out[o++] = ((c & 3) << 6) | d;
          continue;
        }
        // A padded quantum ("xx==" or "xxx="), or a bad one.
        if (a >= PAD) throw invalid(a === PAD ? "'=' not at the end of a quantum" : 'not a base64 character', seen + i);
        if (b >= PAD) throw invalid(b === PAD ? "'=' not at the end of a quantum" : 'not a base64 character', seen + i + 1);
        if (c === INVALID) throw invalid('not a base64 character', seen + i + 2);
        if (d !== PAD)
          throw invalid(d === INVALID ? 'not a base64 character' : "'=' not at the end of a quantum", seen + i + (d === INVALID ? 3 : 2));
        out[o++] = (a << 2) | (b >> 4);
        if (c !== PAD) out[o++] = ((b & 15) << 4) | (c >> 2);
      }
      seen += whole;
      // A copy: the chunk's buffer is not kept alive by 3 characters.
      rest = text.slice(whole);
      return o === out.length ? out : out.subarray(0, o);
    },
    end(): void {
      if (rest.length > 0) throw invalid('incomplete base64 quantum (missing padding)', seen + rest.length);
    },
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The decoded bytes of a base64 body as it streams in, at most `maxText` characters of it. */
export async function* decodeGrpcWebText(body: AsyncIterable<Uint8Array>, maxText: number): AsyncIterable<Uint8Array> {
  const decoder = createBase64Decoder();
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxText) throw new ConnectError(`grpc-web-text request body over ${maxText} characters`, Code.ResourceExhausted);
    const bytes = decoder.push(chunk);
    if (bytes.length > 0) yield bytes;
  }
  decoder.end();
}

/** The request as binary gRPC-web for the router: its body decoded as it is read, content type application/grpc-web+proto. */
export function grpcWebTextRequest(req: UniversalServerRequest, readMaxBytes: number): UniversalServerRequest {
  const header = new Headers(req.header);
  header.set('content-type', GRPC_WEB_PROTO);
  // The length of the text, not of what the router reads.
  header.delete('content-length');
  const body = req.body;
  const isStream = typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
  // (A parsed JSON body never comes with this content type; the router would refuse it as it is.)
  return { ...req, header, body: isStream ? decodeGrpcWebText(body as AsyncIterable<Uint8Array>, maxTextLength(readMaxBytes)) : body };
}

async function* encodeChunks(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    if (chunk.byteLength === 0) continue;
    yield Buffer.from(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64'), 'latin1');
  }
}

/** The router's binary gRPC-web answer as text: each body chunk base64-encoded (padded), content type application/grpc-web-text+proto. */
export function grpcWebTextResponse(res: UniversalServerResponse): UniversalServerResponse {
  const header = new Headers(res.header);
  if (BINARY_CONTENT_TYPE.test((header.get('content-type') ?? '').trim())) header.set('content-type', GRPC_WEB_TEXT_PROTO);
  header.delete('content-length');
  return { ...res, header, body: res.body === undefined ? undefined : encodeChunks(res.body) };
}
