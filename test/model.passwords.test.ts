import { describe, expect, it } from 'vitest';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { hash as argon2Hash } from '@node-rs/argon2';
import type { PasswordPolicy } from '../src/config.ts';
import { checkPolicy, classifyImportedHash, createPasswordHasher, limiter, verifyImportedHash } from '../src/model/passwords.ts';

const policy: PasswordPolicy = { minLength: 8, requireLower: true, requireUpper: true, requireDigit: true, requireSymbol: true };
const rules = (pw: string, p = policy) => checkPolicy(pw, p).map((v) => v.rule);

// @node-rs/argon2 declares Algorithm as a const enum, which isolatedModules cannot read: 1 = Argon2i, 2 = Argon2id.
const ARGON2I = 1;
const ARGON2ID = 2;
const argon2Fast = { memoryCost: 1024, timeCost: 1 };

describe('password policy', () => {
  it('names each broken rule', () => {
    expect(rules('Ab1!xyz')).toEqual(['min_length']);
    expect(rules('AB1!XYZW')).toEqual(['lower']);
    expect(rules('ab1!xyzw')).toEqual(['upper']);
    expect(rules('Abc!xyzw')).toEqual(['digit']);
    expect(rules('Abc1xyzw')).toEqual(['symbol']);
  });

  it('lists every broken rule with a description', () => {
    expect(rules('')).toEqual(['min_length', 'lower', 'upper', 'digit', 'symbol']);
    expect(checkPolicy('', policy)[0]).toEqual({ rule: 'min_length', description: 'must be at least 8 characters' });
    expect(checkPolicy('A', policy).find((v) => v.rule === 'lower')?.description).toBe('must contain a lower-case letter');
  });

  it('accepts a compliant password', () => {
    expect(checkPolicy('Secret1!x', policy)).toEqual([]);
    expect(checkPolicy('Äöü1ß-Ωλ', policy)).toEqual([]);
  });

  it('counts code points for the minimum length', () => {
    expect(rules('Aa1!😀😀😀', policy)).toEqual(['min_length']);
  });

  it('accepts anything when every rule is off', () => {
    const off: PasswordPolicy = { minLength: 0, requireLower: false, requireUpper: false, requireDigit: false, requireSymbol: false };
    expect(checkPolicy('a', off)).toEqual([]);
  });
});

describe('password hasher', () => {
  it('hashes with bcrypt and verifies', async () => {
    const hasher = createPasswordHasher({ cost: 4 });
    const h = await hasher.hash('Secret1!');
    expect(h).toMatch(/^\$2[by]\$04\$/);
    expect(await hasher.verify('Secret1!', h)).toBe(true);
    expect(await hasher.verify('secret1!', h)).toBe(false);
    expect(await hasher.verify('Secret1!', 'not a hash')).toBe(false);
  });

  it('rejects an out-of-range cost', () => {
    expect(() => createPasswordHasher({ cost: 3 })).toThrow(RangeError);
  });

  it('does not block the event loop', async () => {
    const hasher = createPasswordHasher({ cost: 10 });
    let ticks = 0;
    let pending = true;
    const timer = setInterval(() => {
      if (pending) ticks++;
    }, 5);
    try {
      await Promise.all(Array.from({ length: 8 }, (_, i) => hasher.hash(`Secret${i}!`)));
    } finally {
      pending = false;
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThanOrEqual(3);
  });
});

describe('imported hashes', () => {
  it('classifies and verifies bcrypt and argon2 hashes', async () => {
    const b = (await bcryptHash('imported', 4)).replace(/^\$2y\$/, '$2b$');
    const kinds: Array<[string, string]> = [
      [b, 'bcrypt'],
      [b.replace(/^\$2b\$/, '$2a$'), 'bcrypt'],
      [b.replace(/^\$2b\$/, '$2y$'), 'bcrypt'],
      [await argon2Hash('imported', { ...argon2Fast, algorithm: ARGON2ID }), 'argon2id'],
      [await argon2Hash('imported', { ...argon2Fast, algorithm: ARGON2I }), 'argon2i'],
    ];
    for (const [h, kind] of kinds) {
      expect(classifyImportedHash(h), h).toBe(kind);
      expect(await verifyImportedHash('imported', h), h).toBe(true);
      expect(await verifyImportedHash('other', h), h).toBe(false);
    }
    expect(kinds[3]![0]).toMatch(/^\$argon2id\$v=19\$/);
    expect(kinds[4]![0]).toMatch(/^\$argon2i\$v=19\$/);
  });

  it('rejects everything else', async () => {
    const b = (await bcryptHash('imported', 4)).replace(/^\$2y\$/, '$2b$');
    const argon2d = await argon2Hash('imported', { ...argon2Fast, algorithm: 0 });
    expect(argon2d).toMatch(/^\$argon2d\$/);
    const rejected = [
      argon2d,
      '$1$abc$def',
      '5f4dcc3b5aa765d61d8327deb882cf99',
      'plain',
      '',
      b.replace(/^\$2b\$04\$/, '$2b$99$'),
      b.replace(/^\$2b\$04\$/, '$2b$4$'),
      b.replace(/^\$2b\$/, '$2x$'),
      b.slice(0, -1),
      b + 'A',
      '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$',
      '$argon2id$v=19$m=1024,t=1,p=1$!!notbase64!!$aGFzaGhhc2hoYXNo',
    ];
    for (const h of rejected) {
      expect(classifyImportedHash(h), h).toBeNull();
      expect(await verifyImportedHash('imported', h), h).toBe(false);
    }
  });
});

describe('passwords longer than bcrypt reads', () => {
  it('hashes them whole: the first 72 bytes alone do not verify', async () => {
    const hasher = createPasswordHasher({ cost: 4 });
    const long = 'Aa1!' + '😀'.repeat(68); // 72 code points, 276 UTF-8 bytes
    const prefix = Buffer.from(long, 'utf8').subarray(0, 72).toString('utf8');
    const stored = await hasher.hash(long);
    expect(await hasher.verify(long, stored)).toBe(true);
    expect(await hasher.verify(prefix, stored)).toBe(false);
    expect(await hasher.verify(long.slice(0, -2), stored)).toBe(false);
  });

  it('keeps bcrypt for passwords bcrypt reads whole', async () => {
    const stored = await createPasswordHasher({ cost: 4 }).hash('A'.repeat(71) + '!');
    expect(classifyImportedHash(stored)).toBe('bcrypt');
  });
});

describe('hashing concurrency', () => {
  it('the limiter runs at most `max` tasks at once, in order, and all of them', async () => {
    const slot = limiter(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      order.push(i);
      return i;
    };
    const results = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => slot(task(i))));
    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
    expect(order).toHaveLength(6);
  });

  it('a hasher limited to one hash at a time still hashes every password', async () => {
    const hasher = createPasswordHasher({ cost: 4, concurrency: 1 });
    const hashes = await Promise.all(Array.from({ length: 4 }, (_, i) => hasher.hash(`Pw${i}!abcd`)));
    for (const [i, h] of hashes.entries()) expect(await hasher.verify(`Pw${i}!abcd`, h)).toBe(true);
  });
});
