// REST request bodies sent with a Content-Encoding (RFC 9110 section 8.4): gzip (x-gzip),
// deflate (the zlib format RFC 9110 names) and br are decompressed before the JSON is read;
// identity is no encoding. The decompressed size counts against the same cap as a plain body
// (the caller's: the body cap with a valid token, UNAUTHENTICATED_BODY_BYTES without one):
// node's zlib stops at maxOutputLength, so a bomb costs time linear in the cap (about 5 ms a MB
// here) and memory up to it, then answers as a body over the cap would (413, or 401 without a
// valid token). Data that does not decompress is INVALID_ARGUMENT. Any other coding, or several
// stacked, is 415 with grpc-gateway's error body (UNIMPLEMENTED) and Accept-Encoding naming
// the ones served, as RFC 9110 section 15.5.16 has a server do.
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import { unsupportedContentEncoding } from './rest-errors.ts';

type Decompress = (bytes: Buffer, options: ZlibOptions) => Promise<Buffer>;

/** What an unsupported coding's answer lists in Accept-Encoding. */
const REST_BODY_ENCODINGS = 'gzip, deflate, br';

const DECOMPRESSORS = new Map<string, Decompress>([
  ['gzip', promisify(gunzip)],
  ['x-gzip', promisify(gunzip)],
  ['deflate', promisify(inflate)],
  ['br', promisify(brotliDecompress) as Decompress],
]);

/** How a body over the cap is refused (the caller's: 413, or 401 without a valid token). */
export type OverCap = () => Error;

/** Whether `bytes` needs decoding: the Content-Encoding header, lower-cased and trimmed; null for none or identity. */
export function contentCoding(header: string | string[] | undefined): string | null {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim().toLowerCase();
  return value === '' || value === 'identity' ? null : value;
}

/**
 * The body decoded from `coding` (contentCoding's value), at most `cap` bytes of it. Throws a
 * ConnectError for an unsupported coding (415) or data that does not decompress, and
 * `overCap()` past the cap.
 */
export async function decodeBody(bytes: Buffer, coding: string, cap: number, overCap: OverCap): Promise<Buffer> {
  const decompress = DECOMPRESSORS.get(coding);
  if (!decompress) throw unsupportedContentEncoding(REST_BODY_ENCODINGS);
  if (bytes.length === 0) return bytes;
  try {
    return await decompress(bytes, { maxOutputLength: cap });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw overCap();
    throw new ConnectError(`request body: not valid ${coding} data`, Code.InvalidArgument);
  }
}
