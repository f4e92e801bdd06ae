import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCodeService } from '../src/codes/codes.ts';
import { createMemoryCodeStore } from '../src/codes/memory.ts';

const service = (length?: number) =>
  createCodeService({ store: createMemoryCodeStore(), hmacKey: randomBytes(32), ttlSeconds: 3600, maxAttempts: 5, length });

describe('code service', () => {
  it('issues 6-character A-Z0-9 codes that vary', async () => {
    const codes = service();
    const issued = await Promise.all(Array.from({ length: 1000 }, (_, i) => codes.issue(`u${i}`, 'email', 'a@example.com')));
    for (const code of issued) expect(code).toMatch(/^[A-Z0-9]{6}$/);
    expect(new Set(issued).size).toBeGreaterThan(1);
  });

  it('honours a configured length', async () => {
    expect(await service(8).issue('u', 'phone', '+15550100')).toMatch(/^[A-Z0-9]{8}$/);
  });

  it('accepts the code typed in lower case with stray whitespace', async () => {
    const codes = service();
    const code = await codes.issue('u', 'email', 'a@example.com');
    expect(await codes.verify('u', 'email', ` ${code.toLowerCase()}\n`, 'a@example.com')).toBe('ok');
  });

  it('hashes with the server key, so another key cannot verify', async () => {
    const store = createMemoryCodeStore();
    const make = () => createCodeService({ store, hmacKey: randomBytes(32), ttlSeconds: 60, maxAttempts: 5 });
    const code = await make().issue('u', 'email', 'a@example.com');
    expect(await make().verify('u', 'email', code, 'a@example.com')).toBe('wrong');
  });
});
