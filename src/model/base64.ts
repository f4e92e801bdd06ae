// Standard base64 (RFC 4648 section 4, padded, canonical), checked in time linear
// in the input with no regular expression: a backtracking pattern over a
// several-megabyte value overflowed the regular expression stack.

export function isStandardBase64(s: string): boolean {
  if (s.length % 4 !== 0) return false;
  // Decoding skips what is not base64 and accepts the URL alphabet; encoding back
  // gives the input only when every character was canonical standard base64.
  return Buffer.from(s, 'base64').toString('base64') === s;
}

/** Bytes that a valid standard base64 string decodes to. */
export const base64ByteLength = (s: string) => (s.length / 4) * 3 - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
