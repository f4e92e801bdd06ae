// One contract for every CodeStore, exercised raw and through the code service.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeService } from '../src/codes/codes.ts';
import { UnavailableError } from '../src/errors.ts';
import { createMemoryCodeStore } from '../src/codes/memory.ts';
import type { CodeStore, PendingCode } from '../src/codes/port.ts';
import { createRedisCodeStore } from '../src/codes/redis.ts';
import { describeWith } from './support/servers.ts';

interface Harness {
  store: CodeStore;
  /** Let `seconds` pass for TTL purposes. */
  advance(seconds: number): Promise<void>;
  /** Every key name and value the backend holds, when it can be read. */
  dump?(): Promise<string[]>;
  close(): Promise<void>;
}

const MAX = 5;
const user = () => `u-${randomUUID()}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function contract(makeHarness: () => Promise<Harness>) {
  let h: Harness;
  // Records what the service hands the store, to prove only hashes leave it.
  const stored: PendingCode[] = [];
  const service = (ttlSeconds = 3600) =>
    createCodeService({
      store: {
        ...h.store,
        put: (userId, channel, code, ttl) => (stored.push(code), h.store.put(userId, channel, code, ttl)),
      },
      hmacKey: randomBytes(32),
      ttlSeconds,
      maxAttempts: MAX,
    });

  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('expires codes after their TTL', async () => {
    const codes = service(1);
    const [a, b] = [user(), user()];
    const codeA = await codes.issue(a, 'email', 'a@example.com');
    const codeB = await codes.issue(b, 'email', 'b@example.com');
    await h.store.put(a, 'phone', { hash: 'h', address: '+15550100' }, 1);
    expect(await codes.verify(a, 'email', codeA, 'a@example.com')).toBe('ok');
    await h.advance(1.2);
    expect(await codes.verify(b, 'email', codeB, 'b@example.com')).toBe('missing');
    expect(await h.store.check(a, 'phone', 'h', MAX)).toEqual({ status: 'missing' });
  });

  it('stores only the hash of a code', async () => {
    const u = user();
    const code = await service().issue(u, 'email', 'a@example.com');
    const payload = stored.at(-1);
    expect(payload?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(payload)).not.toContain(code);
    if (h.dump) {
      const everything = await h.dump();
      expect(everything.some((s) => s.includes(u))).toBe(true); // the dump does see our key
      expect(everything.filter((s) => s.includes(code))).toEqual([]);
    }
  });

  it('voids a code after maxAttempts wrong tries', async () => {
    const codes = service();
    const u = user();
    const code = await codes.issue(u, 'email', 'a@example.com');
    const left: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await h.store.check(u, 'email', `wrong-${i}`, MAX);
      left.push(r.status === 'wrong' ? r.attemptsLeft : -1);
    }
    expect(left).toEqual([4, 3, 2, 1]);
    expect(await codes.verify(u, 'email', code, 'a@example.com')).toBe('ok');

    const v = user();
    const code2 = await codes.issue(v, 'email', 'a@example.com');
    const wrong = code2 === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    for (let i = 0; i < 4; i++) expect(await codes.verify(v, 'email', wrong, 'a@example.com')).toBe('wrong');
    expect(await h.store.check(v, 'email', 'nope', MAX)).toEqual({ status: 'wrong', attemptsLeft: 0 });
    expect(await codes.verify(v, 'email', code2, 'a@example.com')).toBe('missing');
  });

  it('consumes a code on success (single use)', async () => {
    const codes = service();
    const u = user();
    const code = await codes.issue(u, 'phone', '+15550100');
    expect(await codes.verify(u, 'phone', code, '+15550100')).toBe('ok');
    expect(await codes.verify(u, 'phone', code, '+15550100')).toBe('missing');
    await h.store.put(u, 'phone', { hash: 'h', address: '+15550100' }, 60);
    expect(await h.store.check(u, 'phone', 'h', MAX)).toEqual({ status: 'ok', address: '+15550100' });
    expect(await h.store.check(u, 'phone', 'h', MAX)).toEqual({ status: 'missing' });
  });

  it('replaces the pending code and its attempt count on put', async () => {
    const codes = service();
    const u = user();
    const old = await codes.issue(u, 'email', 'a@example.com');
    const fresh = await codes.issue(u, 'email', 'a@example.com');
    if (old !== fresh) expect(await codes.verify(u, 'email', old, 'a@example.com')).toBe('wrong');
    expect(await codes.verify(u, 'email', fresh, 'a@example.com')).toBe('ok');

    await h.store.put(u, 'email', { hash: 'h1', address: 'a@example.com' }, 60);
    for (let i = 0; i < 3; i++) await h.store.check(u, 'email', 'x', MAX);
    await h.store.put(u, 'email', { hash: 'h2', address: 'b@example.com' }, 60);
    expect(await h.store.check(u, 'email', 'h1', MAX)).toEqual({ status: 'wrong', attemptsLeft: 4 });
    expect(await h.store.check(u, 'email', 'h2', MAX)).toEqual({ status: 'ok', address: 'b@example.com' });
  });

  it('keeps channels and users independent', async () => {
    const codes = service();
    const [a, b] = [user(), user()];
    const aEmail = await codes.issue(a, 'email', 'a@example.com');
    const aPhone = await codes.issue(a, 'phone', '+15550100');
    const bEmail = await codes.issue(b, 'email', 'b@example.com');
    expect(await codes.verify(a, 'email', aEmail, 'a@example.com')).toBe('ok');
    expect(await codes.verify(b, 'email', aEmail, 'b@example.com')).not.toBe('ok');
    expect(await codes.verify(a, 'phone', aPhone, '+15550100')).toBe('ok');
    expect(await codes.verify(b, 'email', bEmail, 'b@example.com')).toBe('ok');
    expect(await codes.verify(b, 'phone', bEmail, '+15550100')).toBe('missing');
  });

  it('refuses a code issued for an address that has since changed', async () => {
    const codes = service();
    const u = user();
    const code = await codes.issue(u, 'email', 'a@example.com');
    expect(await codes.verify(u, 'email', code, 'b@example.com')).toBe('address-changed');
    // Consumed: it can never be valid again, not even for the old address.
    expect(await codes.verify(u, 'email', code, 'a@example.com')).toBe('missing');
  });

  it('voids a pending code on request', async () => {
    const codes = service();
    const u = user();
    const code = await codes.issue(u, 'email', 'a@example.com');
    await codes.clear(u, 'email');
    expect(await codes.verify(u, 'email', code, 'a@example.com')).toBe('missing');
  });
}

describe('memory code store', () => {
  contract(async () => {
    let t = Date.now();
    return {
      store: createMemoryCodeStore({ now: () => t }),
      advance: async (seconds) => {
        t += seconds * 1000;
      },
      close: async () => {},
    };
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function readAll(redis: Redis): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', '500');
    cursor = next;
    for (const key of keys) {
      out.push(key);
      const type = await redis.type(key);
      if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'string') out.push((await redis.get(key)) ?? '');
      else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') out.push(...(await redis.smembers(key)));
      else if (type === 'zset') out.push(...(await redis.zrange(key, '0', '-1')));
    }
  } while (cursor !== '0');
  return out;
}

describeWith('redis', 'redis code store', (url) => {
  const keyPrefix = `test-${randomUUID()}:`;

  contract(async () => {
    const store = await createRedisCodeStore({ url, keyPrefix });
    const admin = new Redis(url);
    return {
      store,
      advance: (seconds) => sleep(seconds * 1000),
      dump: () => readAll(admin),
      close: async () => {
        const keys = await admin.keys(`${keyPrefix}*`);
        if (keys.length) await admin.del(...keys);
        await admin.quit();
        await store.close();
      },
    };
  });

  it('rejects fast with UnavailableError when nothing listens', async () => {
    const started = Date.now();
    const error = await createRedisCodeStore({ url: `redis://127.0.0.1:${await freePort()}` }).catch((e) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('rejects calls on a closed store with UnavailableError', async () => {
    const store = await createRedisCodeStore({ url, keyPrefix });
    await store.ping();
    await store.close();
    const started = Date.now();
    await expect(store.check('u', 'email', 'h', MAX)).rejects.toBeInstanceOf(UnavailableError);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
