// AES-256-GCM sealing of OIDC client secrets (DESIGN.md section 3).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, partsOf, seal, SecretBoxError } from '../src/model/secret-box.ts';

const key = randomBytes(32);
const secret = 'client-s3cr3t-😀-äöü';

/** Flips one bit of one base64 part of a sealed secret. */
function flip(sealed: string, part: 'iv' | 'tag' | 'data'): string {
  const parts = partsOf(sealed);
  const bytes = Buffer.from(parts[part], 'base64');
  bytes[0]! ^= 0x01;
  return `v1:${(['iv', 'tag', 'data'] as const).map((p) => (p === part ? bytes.toString('base64') : parts[p])).join(':')}`;
}

describe('secret box', () => {
  it('round-trips a secret, in the string form and in the object form', () => {
    const sealed = seal(key, 'idp-a', secret);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(secret);
    expect(open(key, 'idp-a', sealed)).toBe(secret);
    const parts = partsOf(sealed);
    expect(Buffer.from(parts.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(parts.tag, 'base64')).toHaveLength(16);
    expect(open(key, 'idp-a', parts)).toBe(secret);
    expect(open(key, 'idp-a', seal(key, 'idp-a', ''))).toBe('');
  });

  it('fails on a tampered ciphertext, tag or IV', () => {
    const sealed = seal(key, 'idp-a', secret);
    for (const part of ['data', 'tag', 'iv'] as const) {
      expect(() => open(key, 'idp-a', flip(sealed, part)), part).toThrow(SecretBoxError);
    }
    const parts = partsOf(sealed);
    expect(() =>
      open(key, 'idp-a', { ...parts, data: Buffer.concat([Buffer.from(parts.data, 'base64'), Buffer.from([0])]).toString('base64') }),
    ).toThrow(SecretBoxError);
    expect(() => open(key, 'idp-a', { ...parts, tag: Buffer.from(parts.tag, 'base64').subarray(0, 12).toString('base64') })).toThrow(
      SecretBoxError,
    );
    expect(() => open(key, 'idp-a', 'v2:' + sealed.slice(3))).toThrow(SecretBoxError);
    expect(() => open(key, 'idp-a', 'garbage')).toThrow(SecretBoxError);
  });

  it('binds the ciphertext to its IDP: sealed for IDP a, it does not open as IDP b', () => {
    const sealed = seal(key, 'idp-a', secret);
    expect(() => open(key, 'idp-b', sealed)).toThrow(SecretBoxError);
    expect(open(key, 'idp-a', sealed)).toBe(secret);
  });

  it('does not open with another key', () => {
    expect(() => open(randomBytes(32), 'idp-a', seal(key, 'idp-a', secret))).toThrow(SecretBoxError);
  });

  it('gives a different result each time the same secret is sealed', () => {
    const a = seal(key, 'idp-a', secret);
    const b = seal(key, 'idp-a', secret);
    expect(a).not.toBe(b);
    expect(partsOf(a).iv).not.toBe(partsOf(b).iv);
    expect(partsOf(a).data).not.toBe(partsOf(b).data);
    expect(open(key, 'idp-a', a)).toBe(open(key, 'idp-a', b));
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => seal(randomBytes(16), 'idp-a', secret)).toThrow(RangeError);
    expect(() => open(randomBytes(31), 'idp-a', seal(key, 'idp-a', secret))).toThrow(RangeError);
  });
});
