// Values of an exact length in Unicode code points, for the limit tests over GraphQL
// (test/e2e.limits.test.ts) and over the wire (test/wire.limits.test.ts).
import { hash as argon2Hash } from '@node-rs/argon2';

/** n code points, 2n UTF-16 units, 4n UTF-8 bytes: a limit counted in anything but code points fails on these. */
export const E = (n: number) => '😀'.repeat(n);
export const codePoints = (s: string) => [...s].length;
/** An ASCII prefix filled up with emoji to exactly n code points. */
export const fill = (prefix: string, n: number) => prefix + E(n - prefix.length);

/** A valid address of exactly n code points: a local part of at most 64 UTF-8 bytes, labels of at most 63. */
export function emailOf(n: number, prefix: string): string {
  const local = prefix + E(Math.floor((64 - prefix.length) / 4));
  let rest = n - codePoints(local) - 1 - '.com'.length; // the labels before .com, with their dots
  const labels: string[] = [];
  while (rest > 63) {
    const size = Math.min(63, rest - 2);
    labels.push('d'.repeat(size));
    rest -= size + 1;
  }
  labels.push('d'.repeat(rest));
  const email = `${local}@${labels.join('.')}.com`;
  if (codePoints(email) !== n) throw new Error(`emailOf(${n}) built ${codePoints(email)} code points`);
  return email;
}

/** A valid verification link template of exactly n code points. */
export function urlTemplateOf(n: number): string {
  const base = 'https://app.example/verify?u={{.UserID}}&c={{.Code}}&o={{.OrgID}}#';
  return base + E(n - base.length);
}

/** A real argon2id PHC hash of the password, exactly `length` characters long. */
export async function argon2OfLength(password: string, length: number): Promise<string> {
  const options = { memoryCost: 1024, timeCost: 1, parallelism: 1 };
  const probe = await argon2Hash(password, { ...options, outputLen: 32 });
  const prefix = probe.length - Math.ceil((32 * 4) / 3);
  const outputLen = Array.from({ length: 200 }, (_, i) => i + 4).find((n) => prefix + Math.ceil((n * 4) / 3) === length);
  if (!outputLen) throw new Error(`no argon2 output length gives a ${length}-char hash`);
  const hash = await argon2Hash(password, { ...options, outputLen });
  if (hash.length !== length) throw new Error(`argon2OfLength(${length}) built ${hash.length} characters`);
  return hash;
}
