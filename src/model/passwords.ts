import { availableParallelism } from 'node:os';
import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';
import { hash as argon2Hash, verify as argon2Verify, parseOptions as argon2Parse } from '@node-rs/argon2';
import type { PasswordPolicy } from '../config.ts';
import { codePoints } from './text.ts';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
}

/** bcrypt reads only the first 72 bytes of a password; longer ones would be silently truncated. */
export const BCRYPT_MAX_BYTES = 72;

/**
 * bcrypt through @node-rs (async: libuv worker threads, never the Sync variants).
 * A password longer than bcrypt's 72 bytes (a 72-character non-ASCII one, or a
 * 200-character one on create) is hashed with argon2id instead, so no part of
 * it is ignored; both formats verify through verifyImportedHash.
 */
export function createPasswordHasher({
  cost,
  concurrency = defaultHashConcurrency(),
}: {
  cost: number;
  concurrency?: number;
}): PasswordHasher {
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new RangeError('bcrypt cost must be an integer in 4..31');
  const slot = limiter(concurrency);
  return {
    hash: (password) =>
      slot(() => (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_BYTES ? argon2Hash(password) : bcryptHash(password, cost))),
    verify: (password, hash) => verifyImportedHash(password, hash),
  };
}

/**
 * Hashes run on libuv's threads, but as many at once as there are threads would
 * leave the event loop no core: at most one fewer than the cores hash at a time.
 */
const defaultHashConcurrency = () => Math.max(1, availableParallelism() - 1);

/** Runs at most `max` tasks at once; the rest wait in order. */
export function limiter(max: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running < max) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve)); // the slot is handed over
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

export type PasswordRule = 'min_length' | 'lower' | 'upper' | 'digit' | 'symbol';

export interface PolicyViolation {
  rule: PasswordRule;
  description: string;
}

/** Every rule of the policy the password breaks, in a fixed order; empty when it complies. */
export function checkPolicy(password: string, policy: PasswordPolicy): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  if (codePoints(password) < policy.minLength) {
    out.push({ rule: 'min_length', description: `must be at least ${policy.minLength} characters` });
  }
  if (policy.requireLower && !/\p{Ll}/u.test(password)) {
    out.push({ rule: 'lower', description: 'must contain a lower-case letter' });
  }
  if (policy.requireUpper && !/\p{Lu}/u.test(password)) {
    out.push({ rule: 'upper', description: 'must contain an upper-case letter' });
  }
  if (policy.requireDigit && !/\p{Nd}/u.test(password)) {
    out.push({ rule: 'digit', description: 'must contain a digit' });
  }
  // A symbol is anything that is neither a letter, a digit nor white space.
  if (policy.requireSymbol && !/[^\p{L}\p{N}\p{M}\s]/u.test(password)) {
    out.push({ rule: 'symbol', description: 'must contain a symbol' });
  }
  return out;
}

export type ImportedHashKind = 'bcrypt' | 'argon2id' | 'argon2i';

const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;
const B64 = '[A-Za-z0-9+/]';
// PHC: $argon2{id,i}$v=19$m=..,t=..,p=..$salt$hash, unpadded standard base64 parts.
const ARGON2 = new RegExp(
  `^\\$(argon2id|argon2i)\\$(?:v=(?:16|19)\\$)?m=(\\d{1,10}),t=(\\d{1,10}),p=(\\d{1,3})\\$(${B64}{11,})\\$(${B64}{6,})$`,
);

const isB64Length = (s: string) => s.length % 4 !== 1;

/** The kind of an imported password hash, or null when it is not one we can verify. */
export function classifyImportedHash(hash: string): ImportedHashKind | null {
  if (BCRYPT.test(hash)) return 'bcrypt';
  const m = ARGON2.exec(hash);
  if (!m) return null;
  const [, kind = '', mem = '', time = '', par = '', salt = '', digest = ''] = m;
  const p = Number(par);
  if (p < 1 || p > 255 || Number(time) < 1 || Number(mem) < 8 * p || Number(mem) > 0xffffffff) return null;
  if (!isB64Length(salt) || !isB64Length(digest)) return null;
  try {
    argon2Parse(hash);
  } catch {
    return null;
  }
  return kind as ImportedHashKind;
}

/** Verifies a password against a bcrypt or argon2id/argon2i hash; false for anything else. */
export async function verifyImportedHash(password: string, hash: string): Promise<boolean> {
  switch (classifyImportedHash(hash)) {
    case 'bcrypt':
      return bcryptVerify(password, hash);
    case 'argon2id':
    case 'argon2i':
      return argon2Verify(hash, password);
    default:
      return false;
  }
}
