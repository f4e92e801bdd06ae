// One contract for every CodeStore, exercised raw and through the code service.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeService } from '../src/codes/codes.ts';
import { UnavailableError } from '../src/errors.ts';
import { createMemoryCodeStore } from '../src/codes/memory.ts';
import { MAX_BELOW, type CodeStore, type PendingCode } from '../src/codes/port.ts';
import { createRedisCodeStore } from '../src/codes/redis.ts';
import { faultyProxy, untilItWorks } from './support/net.ts';
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
/**
 * A lifetime that runs out within the test: long enough for the few Redis round trips that
 * must come before it ends, on a loaded machine too (on Redis the test waits it out for real).
 */
const SHORT_TTL_S = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function contract(makeHarness: () => Promise<Harness>) {
  let h: Harness;
  // Records what the service hands the store, to prove only hashes leave it.
  const stored: PendingCode[] = [];
  const service = (ttlSeconds = 3600) =>
    createCodeService({
      store: {
        ...h.store,
        put: (userId, channel, code, ttl, token) => (stored.push(code), h.store.put(userId, channel, code, ttl, token)),
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
    const codes = service(SHORT_TTL_S);
    const [a, b] = [user(), user()];
    const codeA = await codes.issue(a, 'email', 'a@example.com');
    const codeB = await codes.issue(b, 'email', 'b@example.com');
    await h.store.put(a, 'phone', { hash: 'h', address: '+15550100' }, SHORT_TTL_S);
    expect(await codes.verify(a, 'email', codeA, 'a@example.com')).toBe('ok');
    await h.advance(SHORT_TTL_S + 0.2);
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

  // Undoing a put or clear (port.ts): what a mutation whose append failed does.
  const A = 'a@example.com';
  const put = (u: string, hash: string, ttl = 60) => h.store.put(u, 'email', { hash, address: A }, ttl);
  const check = (u: string, hash: string) => h.store.check(u, 'email', hash, MAX);

  it('put and clear return what they replaced: hash, address, attempts and the rest of its TTL', async () => {
    const u = user();
    expect((await put(u, 'h1')).previous).toBeNull();
    await check(u, 'x');
    await check(u, 'x');
    const second = await put(u, 'h2', 30);
    expect(second.previous).toEqual({ hash: 'h1', address: A, attempts: 2, ttlMs: expect.any(Number) });
    expect(second.previous!.ttlMs).toBeGreaterThan(50_000);
    expect(second.previous!.ttlMs).toBeLessThanOrEqual(60_000);
    const cleared = await h.store.clear(u, 'email');
    expect(cleared.previous).toMatchObject({ hash: 'h2', attempts: 0 });
    expect(cleared.previous!.ttlMs).toBeLessThanOrEqual(30_000);
    expect((await h.store.clear(u, 'email')).previous).toBeNull();
    expect((await put(u, 'h3')).previous).toBeNull();
    expect(second.token).not.toBe(cleared.token);
  });

  it('restore takes back the pending put: the code before is pending again, with its attempts', async () => {
    const u = user();
    await put(u, 'p');
    await check(u, 'x');
    await check(u, 'x');
    const mine = await put(u, 'mine');
    expect(await h.store.restore(u, 'email', mine.token)).toBe(true);
    expect(await check(u, 'mine')).toEqual({ status: 'wrong', attemptsLeft: MAX - 3 });
    expect(await check(u, 'p')).toEqual({ status: 'ok', address: A });
    // Once: the token undoes nothing more.
    expect(await h.store.restore(u, 'email', mine.token)).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'missing' });
  });

  it('restore is compare-and-set: a later put stays pending, and the undone code never comes back', async () => {
    // L put, then W put; L undone: W stays.
    const u = user();
    await put(u, 'p');
    const l = await put(u, 'l');
    await put(u, 'w');
    expect(await h.store.restore(u, 'email', l.token)).toBe(false);
    expect(await check(u, 'w')).toEqual({ status: 'ok', address: A });

    // W put, then L put; L undone: W again.
    const v = user();
    await put(v, 'p');
    await put(v, 'w');
    const l2 = await put(v, 'l');
    expect(await h.store.restore(v, 'email', l2.token)).toBe(true);
    expect(await check(v, 'w')).toEqual({ status: 'ok', address: A });

    // Both fail, undone in the order they put (a plain restore of the previous record would bring back a).
    const x = user();
    await put(x, 'p');
    const a = await put(x, 'a');
    const b = await put(x, 'b');
    expect(await h.store.restore(x, 'email', a.token)).toBe(false);
    expect(await check(x, 'a')).toEqual({ status: 'wrong', attemptsLeft: MAX - 1 }); // b pending, a is not
    expect(await h.store.restore(x, 'email', b.token)).toBe(true);
    expect(await check(x, 'a')).toMatchObject({ status: 'wrong' });
    expect(await check(x, 'p')).toEqual({ status: 'ok', address: A });

    // ... and in the other order.
    const y = user();
    await put(y, 'p');
    const a2 = await put(y, 'a');
    const b2 = await put(y, 'b');
    expect(await h.store.restore(y, 'email', b2.token)).toBe(true);
    expect(await h.store.restore(y, 'email', a2.token)).toBe(true);
    expect(await check(y, 'p')).toEqual({ status: 'ok', address: A });
  });

  it('restore takes back a clear, unless a code was put since', async () => {
    const u = user();
    await put(u, 'p');
    const cleared = await h.store.clear(u, 'email');
    expect(await check(u, 'p')).toEqual({ status: 'missing' });
    expect(await h.store.restore(u, 'email', cleared.token)).toBe(true);
    expect(await check(u, 'p')).toEqual({ status: 'ok', address: A });

    const v = user();
    await put(v, 'p');
    const c2 = await h.store.clear(v, 'email');
    await put(v, 'w');
    expect(await h.store.restore(v, 'email', c2.token)).toBe(false);
    expect(await check(v, 'w')).toEqual({ status: 'ok', address: A });

    // A put undone under a clear that won: still none.
    const x = user();
    await put(x, 'p');
    const l = await put(x, 'l');
    await h.store.clear(x, 'email');
    expect(await h.store.restore(x, 'email', l.token)).toBe(false);
    expect(await check(x, 'p')).toEqual({ status: 'missing' });
    expect(await check(x, 'l')).toEqual({ status: 'missing' });
  });

  it('a match named by its token is undone by restore: the code is pending again with its attempts and expiry', async () => {
    const u = user();
    await put(u, 'p', 60);
    await check(u, 'x');
    await check(u, 'x');
    await h.advance(1);
    expect(await h.store.check(u, 'email', 'p', MAX, 'verify-1')).toEqual({ status: 'ok', address: A });
    expect(await check(u, 'p')).toEqual({ status: 'missing' });
    expect(await h.store.restore(u, 'email', 'verify-1')).toBe(true);
    // Its attempts as they were (2), not a fresh code; its lifetime not renewed.
    const replaced = await put(u, 'q');
    expect(replaced.previous).toMatchObject({ hash: 'p', address: A, attempts: 2 });
    expect(replaced.previous!.ttlMs).toBeLessThanOrEqual(59_000);
    expect(await h.store.restore(u, 'email', replaced.token)).toBe(true);
    expect(await check(u, 'x')).toEqual({ status: 'wrong', attemptsLeft: MAX - 3 });
    expect(await check(u, 'p')).toEqual({ status: 'ok', address: A });
    // Once: the token undoes nothing more.
    expect(await h.store.restore(u, 'email', 'verify-1')).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'missing' });
  });

  it('a code put after a match stays pending when the match is undone; the matched code never comes back', async () => {
    const u = user();
    await put(u, 'p');
    expect(await h.store.check(u, 'email', 'p', MAX, 'verify-2')).toEqual({ status: 'ok', address: A });
    const resent = await put(u, 'w');
    expect(resent.previous, 'the matched code is not pending').toBeNull();
    expect(await h.store.restore(u, 'email', 'verify-2')).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'wrong', attemptsLeft: MAX - 1 });
    expect(await check(u, 'w')).toEqual({ status: 'ok', address: A });
    // Undoing the put that came after too leaves nothing: the match was undone below it.
    const v = user();
    await put(v, 'p');
    await h.store.check(v, 'email', 'p', MAX, 'verify-3');
    const later = await put(v, 'w');
    expect(await h.store.restore(v, 'email', 'verify-3')).toBe(false);
    expect(await h.store.restore(v, 'email', later.token)).toBe(true);
    expect(await check(v, 'p')).toEqual({ status: 'ok', address: A });
  });

  it('a match is not undone by a token it was not given, nor by a wrong check', async () => {
    const u = user();
    await put(u, 'p');
    expect(await h.store.check(u, 'email', 'nope', MAX, 'verify-4')).toEqual({ status: 'wrong', attemptsLeft: MAX - 1 });
    expect(await h.store.restore(u, 'email', 'verify-4')).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'ok', address: A });
    expect(await h.store.restore(u, 'email', 'another')).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'missing' });
  });

  it('the service: verifyUndoable hands back an undo that makes the code verify again', async () => {
    const codes = service();
    const u = user();
    const code = await codes.issue(u, 'email', A);
    const first = await codes.verifyUndoable(u, 'email', code, A);
    expect(first.result).toBe('ok');
    expect(await codes.verify(u, 'email', code, A)).toBe('missing');
    await first.undo();
    expect(await codes.verify(u, 'email', code, A)).toBe('ok');
    // A wrong code's undo changes nothing.
    const other = await codes.issue(u, 'email', A);
    const wrong = await codes.verifyUndoable(u, 'email', other === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA', A);
    expect(wrong.result).toBe('wrong');
    await wrong.undo();
    expect(await codes.verify(u, 'email', other, A)).toBe('ok');
  });

  it('the service: a check whose answer is lost is taken back before the error', async () => {
    const u = user();
    const codes = createCodeService({
      // The store runs the check, then the answer never arrives.
      store: { ...h.store, check: async (...args) => (await h.store.check(...args), Promise.reject(new UnavailableError('answer lost'))) },
      hmacKey: 'lost-answer-key',
      ttlSeconds: 60,
      maxAttempts: MAX,
    });
    const code = await codes.issue(u, 'email', A);
    await expect(codes.verifyUndoable(u, 'email', code, A)).rejects.toBeInstanceOf(UnavailableError);
    const plain = createCodeService({ store: h.store, hmacKey: 'lost-answer-key', ttlSeconds: 60, maxAttempts: MAX });
    expect(await plain.verify(u, 'email', code, A)).toBe('ok');
  });

  it('restore brings back nothing once the pending code was used, voided or expired', async () => {
    const u = user();
    await put(u, 'p');
    const used = await put(u, 'a');
    expect(await check(u, 'a')).toEqual({ status: 'ok', address: A });
    expect(await h.store.restore(u, 'email', used.token)).toBe(false);
    expect(await check(u, 'p')).toEqual({ status: 'missing' });

    const v = user();
    await put(v, 'p');
    const voided = await put(v, 'a');
    for (let i = 0; i < MAX; i++) await check(v, 'x');
    expect(await h.store.restore(v, 'email', voided.token)).toBe(false);
    expect(await check(v, 'p')).toEqual({ status: 'missing' });

    // The code put back keeps its own expiry.
    const w = user();
    await put(w, 'p', SHORT_TTL_S);
    const later = await put(w, 'a', 60);
    expect(await h.store.restore(w, 'email', later.token)).toBe(true);
    await h.advance(SHORT_TTL_S + 0.2);
    expect(await check(w, 'p')).toEqual({ status: 'missing' });
  });

  it('concurrent requests: the pending code is the one that was not undone, whatever the interleaving', async () => {
    for (let round = 0; round < 5; round++) {
      const u = user();
      await put(u, 'p');
      const winner = round % 4;
      const jitter = () => sleep(Math.random() * 5);
      await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          await jitter();
          const { token } = await put(u, `c${i}`);
          await jitter();
          if (i !== winner) await h.store.restore(u, 'email', token);
        }),
      );
      expect(await check(u, `c${winner}`)).toEqual({ status: 'ok', address: A });
    }
    // All fail: the code pending before.
    const v = user();
    await put(v, 'p');
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        await sleep(Math.random() * 5);
        const { token } = await put(v, `c${i}`);
        await sleep(Math.random() * 5);
        await h.store.restore(v, 'email', token);
      }),
    );
    expect(await check(v, 'p')).toEqual({ status: 'ok', address: A });
  });

  it(`keeps at most ${MAX_BELOW} entries below the pending one`, async () => {
    const u = user();
    const puts = [];
    for (let i = 0; i < MAX_BELOW + 5; i++) puts.push(await put(u, `c${i}`));
    for (const { token } of puts.slice(1).reverse()) await h.store.restore(u, 'email', token);
    // c0 fell off the bottom: nothing is left to put back.
    expect(await check(u, 'c0')).toEqual({ status: 'missing' });
  });

  it('the service: issueUndoable and clear hand back an undo', async () => {
    const codes = service();
    const u = user();
    const before = await codes.issue(u, 'email', A);
    const issued = await codes.issueUndoable(u, 'email', A);
    expect(issued.code).toMatch(/^[A-Z0-9]{6}$/);
    await issued.undo();
    const undoClear = await codes.clear(u, 'email');
    await undoClear();
    expect(await codes.verify(u, 'email', before, A)).toBe('ok');
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

  /** A code store behind a test proxy (test/support/net.ts), one straight to Redis, and a code service over either. */
  async function behindProxy(
    test: (t: {
      proxy: Awaited<ReturnType<typeof faultyProxy>>;
      proxied: CodeStore;
      direct: CodeStore;
      service: (store: CodeStore) => ReturnType<typeof createCodeService>;
    }) => Promise<void>,
  ) {
    const proxy = await faultyProxy(url);
    await proxy.up();
    const proxied = await createRedisCodeStore({ url: proxy.url, keyPrefix });
    const direct = await createRedisCodeStore({ url, keyPrefix });
    const service = (store: CodeStore) => createCodeService({ store, hmacKey: 'proxy-key', ttlSeconds: 60, maxAttempts: MAX });
    try {
      await test({ proxy, proxied, direct, service });
    } finally {
      await proxied.close();
      await direct.close();
      await proxy.down();
    }
  }

  it('a verification whose answer a stall lost (command timeout) is taken back once Redis runs it', () =>
    behindProxy(async ({ proxy, proxied, direct, service }) => {
      const u = user();
      const code = await service(direct).issue(u, 'email', 'a@example.com');
      proxy.hold();
      // The check and then its undo wait in the stalled connection; both time out here.
      await expect(service(proxied).verifyUndoable(u, 'email', code, 'a@example.com')).rejects.toBeInstanceOf(UnavailableError);
      proxy.release();
      // Redis runs the check (a match: consumed), then the undo; the ping answers after both.
      await proxied.ping();
      expect(await service(direct).verify(u, 'email', code, 'a@example.com')).toBe('ok');
    }));

  it.each([
    ['an issue for another address', (s: ReturnType<typeof createCodeService>, u: string) => s.issueUndoable(u, 'email', 'b@example.com')],
    ['a clear', (s: ReturnType<typeof createCodeService>, u: string) => s.clear(u, 'email')],
  ])('%s whose answer a stall lost is taken back once Redis runs it: the code sent before still verifies', (_, change) =>
    behindProxy(async ({ proxy, proxied, direct, service }) => {
      const u = user();
      const code = await service(direct).issue(u, 'email', 'a@example.com');
      proxy.hold();
      // The change and then its undo wait in the stalled connection; the change times out here.
      await expect(change(service(proxied), u)).rejects.toBeInstanceOf(UnavailableError);
      proxy.release();
      await proxied.ping();
      expect(await service(direct).verify(u, 'email', code, 'a@example.com')).toBe('ok');
    }),
  );

  it('a verification cut off by a dropped connection is not sent again after the reconnect (its undo was refused)', () =>
    behindProxy(async ({ proxy, proxied, direct, service }) => {
      const u = user();
      const code = await service(direct).issue(u, 'email', 'a@example.com');
      proxy.hold();
      const verifying = service(proxied).verifyUndoable(u, 'email', code, 'a@example.com');
      await sleep(100);
      // The check never reached Redis; the connection drops, and the reconnect waits in the proxy too.
      proxy.cut();
      await expect(verifying).rejects.toBeInstanceOf(UnavailableError);
      proxy.release();
      // Once the store has reconnected: a check resent now would consume the code behind the caller's back.
      await untilItWorks(() => proxied.ping());
      expect(await service(direct).verify(u, 'email', code, 'a@example.com')).toBe('ok');
    }));

  it('rejects fast with UnavailableError when nothing listens', async () => {
    const started = Date.now();
    const error = await createRedisCodeStore({ url: `redis://127.0.0.1:${await freePort()}` }).catch((e) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(Date.now() - started, 'bounded by the 1.5 s connect timeout').toBeLessThan(8000);
  });

  it('rejects calls on a closed store with UnavailableError', async () => {
    const store = await createRedisCodeStore({ url, keyPrefix });
    await store.ping();
    await store.close();
    const started = Date.now();
    await expect(store.check('u', 'email', 'h', MAX)).rejects.toBeInstanceOf(UnavailableError);
    expect(Date.now() - started, 'bounded by the 1.5 s command timeout').toBeLessThan(8000);
  });
});
