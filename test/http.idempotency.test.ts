// Idempotency-Key on mutations (src/graphql/idempotency.ts), over HTTP against the real
// gateway: on the embedded stores (keys in memory) and with Redis (keys in Redis).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, MeDocument } from './generated/graphql.ts';
import { expectRestStatus, onlyError, startGateway, startGatewayBehindProxy, type TestGateway } from './support/gateway.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { createHmac } from 'node:crypto';
import { print } from 'graphql';
import { canonical, createMemoryIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStore } from '../src/graphql/idempotency.ts';
import { UnavailableError } from '../src/errors.ts';
import { cutOffBehind, faultyProxy } from './support/net.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Idem', lastName: 'Potent' };

/** The gateway's idempotency counter for one outcome. */
async function outcomes(gw: TestGateway): Promise<Record<string, number>> {
  const metric = await gw.gateway.metrics.registry.getSingleMetric('gateway_idempotency_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}
const delta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(
    Object.keys(after)
      .map((k) => [k, after[k]! - (before[k] ?? 0)])
      .filter(([, v]) => v !== 0),
  );

function idempotencySuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const addUser = (username: string, key: string | null, extra: Record<string, unknown> = {}, token?: string | null) =>
      gw.send(
        AddHumanUserDocument,
        { input: { username, profile, email: { email: `${username}@example.com`, returnCode: true }, ...extra } as any },
        { headers: key ? { 'idempotency-key': key } : {}, ...(token !== undefined ? { token } : {}) },
      );
    const holder = (username: string) => gw.gateway.deps.store.lookup(`username:${username.toLowerCase()}`);

    it('the same key and body twice: the stored answer comes back and the user is created once', async () => {
      const username = unique('once');
      const key = unique('key-');
      const before = await outcomes(gw);
      const first = await addUser(username, key);
      expect(first.status, first.text).toBe(200);
      expect(first.headers.get('idempotency-replayed')).toBeNull();
      const { userId, emailCode } = first.data!.addHumanUser;
      expect(emailCode).toMatch(/^[A-Z0-9]{6}$/);

      const again = await addUser(username, key);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(first.text); // the very answer, the same code included
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));

      expect((await holder(username))?.aggregateId).toBe(userId);
      expect((await gw.gateway.deps.store.events('user', userId)).length).toBe(1);
      expect(delta(before, await outcomes(gw))).toEqual({ stored: 1, replayed: 1 });

      // Without the key the same body runs again, and the username is taken.
      const unkeyed = await addUser(username, null);
      expect(onlyError(unkeyed).extensions?.code).toBe('ALREADY_EXISTS');
    });

    it('concurrent requests with the same key: exactly one user, and every request gets its answer', async () => {
      const username = unique('race');
      const key = unique('key-');
      const before = await outcomes(gw);
      const answers = await Promise.all(Array.from({ length: 6 }, () => addUser(username, key)));
      for (const a of answers) {
        expect(a.status, a.text).toBe(200);
        expect(a.text).toBe(answers[0]!.text);
      }
      const userId = answers[0]!.data!.addHumanUser.userId;
      expect((await holder(username))?.aggregateId).toBe(userId);
      expect(answers.filter((a) => a.headers.get('idempotency-replayed') === 'true')).toHaveLength(5);
      expect(delta(before, await outcomes(gw))).toEqual({ stored: 1, replayed: 5 });
    });

    it('the same key with another body is FAILED_PRECONDITION (409) and runs nothing', async () => {
      const key = unique('key-');
      const first = await addUser(unique('first'), key);
      expect(first.status).toBe(200);
      const otherName = unique('other');
      const other = await addUser(otherName, key);
      expect(other.status).toBe(409);
      const err = onlyError(other);
      expect(err.extensions?.code).toBe('FAILED_PRECONDITION');
      expect(err.extensions?.grpcCode).toBe(9);
      expect(err.message).toMatch(/Idempotency-Key/);
      expect(await holder(otherName)).toBeNull();
    });

    it('the key belongs to its caller: another caller with the same key runs its own request', async () => {
      const key = unique('shared-');
      const username = unique('mine');
      const mine = await addUser(username, key);
      expect(mine.status).toBe(200);
      // A second caller: the user just made, with no rights to create users (PERMISSION_DENIED is its own answer).
      const otherToken = await gw.tokenFor(mine.data!.addHumanUser.userId);
      const theirs = await addUser(username, key, {}, otherToken);
      expect(theirs.headers.get('idempotency-replayed')).toBeNull();
      expect(onlyError(theirs).extensions?.code).toBe('PERMISSION_DENIED');
    });

    it('a deterministic error is kept and replayed like a success: 200 with its REST status in the body, on either media type', async () => {
      const bad = { username: unique('bad'), profile: { firstName: '', lastName: 'X' }, email: { email: 'not-an-email' } };
      // The mutation ran and failed: 200 on application/json and on application/graphql-response+json alike.
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const headers = { 'idempotency-key': unique('key-'), accept };
        const first = await gw.send(AddHumanUserDocument, { input: bad as any }, { headers });
        expect(first.status, `${accept}: ${first.text}`).toBe(200);
        expect(first.headers.get('content-type')).toMatch(new RegExp(`^${accept.replace('+', '\\+')};`));
        expect(onlyError(first).extensions).toMatchObject({ code: 'INVALID_ARGUMENT', httpStatus: 400 });
        const again = await gw.send(AddHumanUserDocument, { input: bad as any }, { headers });
        expect(again.status, accept).toBe(200);
        expect(again.headers.get('idempotency-replayed')).toBe('true');
        expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
        expect(again.text).toBe(first.text);
      }
    });

    it('queries, unauthenticated requests and malformed keys', async () => {
      const key = unique('key-');
      const q1 = await gw.send(MeDocument, {}, { headers: { 'idempotency-key': key } });
      const q2 = await gw.send(MeDocument, {}, { headers: { 'idempotency-key': key } });
      expect(q1.status).toBe(200);
      expect(q2.headers.get('idempotency-replayed')).toBeNull();

      const anon = await addUser(unique('anon'), key, {}, null);
      expectRestStatus(anon, 401);
      expect(onlyError(anon).extensions?.code).toBe('UNAUTHENTICATED');
      const anon2 = await addUser(unique('anon'), key, {}, null);
      expectRestStatus(anon2, 401);
      expect(anon2.headers.get('idempotency-replayed')).toBeNull();

      const long = await addUser(unique('long'), 'k'.repeat(256));
      expect(long.status).toBe(400);
      expect(onlyError(long).extensions?.code).toBe('INVALID_ARGUMENT');
    });
  });
}

idempotencySuite('idempotency keys on the embedded stores (in memory)', () => ({}));

describeWith('redis', 'idempotency keys in Redis', (redisUrl) => {
  idempotencySuite('shared Redis', () => ({ REDIS_URL: redisUrl, CODE_HMAC_KEY: 'idempotency-test-key' }));

  it('a stored answer holding a verification code is not readable in Redis', async () => {
    const gw = await startGateway({ env: { REDIS_URL: redisUrl, CODE_HMAC_KEY: 'idempotency-test-key' } });
    try {
      const key = unique('secret-');
      const username = unique('coded');
      const input = { username, profile, email: { email: `${username}@example.com`, returnCode: true } };
      const res = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
      const code = res.data!.addHumanUser.emailCode!;
      expect(code).toMatch(/^[A-Z0-9]{6}$/);
      const dump = await everythingInRedis(redisUrl);
      expect(dump).toMatch(/idem:/);
      expect(holdsCode(dump, code)).toBe(false);
      expect(dump).not.toContain('emailCode'); // the answer is stored encrypted
      expect(dump).not.toContain(key);
    } finally {
      await gw.close();
    }
  });
});

describeWith('redis', 'idempotency records and passwords', (redisUrl) => {
  it('a Redis dump and the server secret are not enough to test password guesses against a stored request', async () => {
    const secret = 'idempotency-test-key';
    const gw = await startGateway({ env: { REDIS_URL: redisUrl, CODE_HMAC_KEY: secret } });
    try {
      const username = unique('pw');
      const password = `Guess-${unique('me')}-1!`;
      const input = { username, profile, email: { email: `${username}@example.com`, isVerified: true }, password: { password } };
      const res = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': unique('k-') } });
      expect(res.status, res.text).toBe(200);
      const dump = await everythingInRedis(redisUrl);
      expect(dump).not.toContain(password);
      // The attacker's test: the body with a guessed password, HMAC'd under the server secret alone.
      const guess = (pw: string) => {
        const body = canonical({
          query: print(AddHumanUserDocument),
          operationName: null,
          variables: { input: { ...input, password: { password: pw } } },
        });
        return createHmac('sha256', secret).update(`body\n${body}`).digest('base64url');
      };
      for (const candidate of ['wrong-1!', password]) expect(dump, candidate).not.toContain(guess(candidate));
    } finally {
      await gw.close();
    }
  });
});

describeWith('mongo', 'idempotency across an outage', (mongoUrl) => {
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof startGatewayBehindProxy>>['proxy'];
  beforeAll(async () => {
    ({ gw, proxy } = await startGatewayBehindProxy(mongoUrl, 'idem'));
  });
  afterAll(async () => gw?.close());

  it('an UNAVAILABLE answer is not kept: the retry with the same key does the work', async () => {
    const key = unique('outage-');
    const username = unique('outage');
    const input = { username, profile, email: { email: `${username}@example.com`, isVerified: true } };
    await proxy.down();
    const down = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
    expectRestStatus(down, 503);
    expect(onlyError(down).extensions?.code).toBe('UNAVAILABLE');
    await proxy.up();
    let retried = down;
    for (let i = 0; i < 60 && retried.errors?.[0]?.extensions?.code === 'UNAVAILABLE'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      retried = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
    }
    expect(retried.status, retried.text).toBe(200);
    expect(retried.errors, retried.text).toBeUndefined();
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    const again = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(retried.text);
  });
});

/** A claim that meets its own record (its SET ran twice: a resend after a reconnect) holds the key. */
function ownClaimSuite(name: string, open: () => Promise<IdempotencyStore>) {
  it(`${name}: a claim that finds the record of its own owner holds the key; another owner gets the record`, async () => {
    const store = await open();
    try {
      const key = unique('own-');
      expect(await store.claim(key, { fingerprint: 'f', owner: 'first' }, 60_000)).toBeNull();
      expect(await store.claim(key, { fingerprint: 'f', owner: 'first' }, 60_000)).toBeNull();
      expect(await store.claim(key, { fingerprint: 'f', owner: 'second' }, 60_000)).toEqual({ fingerprint: 'f', owner: 'first' });
    } finally {
      await store.close();
    }
  });
}

describe('idempotency claims', () => ownClaimSuite('in memory', async () => createMemoryIdempotencyStore()));

describeWith('redis', 'idempotency claims when the Redis connection drops', (redisUrl) => {
  ownClaimSuite('in Redis', () => createRedisIdempotencyStore({ url: redisUrl, keyPrefix: unique('idem-own-') + ':' }));

  /** A store behind the test proxy (test/support/net.ts) and one straight to Redis, on one key prefix. */
  async function behindProxy(
    test: (t: { proxy: Awaited<ReturnType<typeof faultyProxy>>; proxied: IdempotencyStore; direct: IdempotencyStore }) => Promise<void>,
  ) {
    const proxy = await faultyProxy(redisUrl);
    await proxy.up();
    const keyPrefix = unique('idem-drop-') + ':';
    const proxied = await createRedisIdempotencyStore({ url: proxy.url, keyPrefix });
    const direct = await createRedisIdempotencyStore({ url: redisUrl, keyPrefix });
    try {
      await test({ proxy, proxied, direct });
    } finally {
      await proxied.close();
      await direct.close();
      await proxy.down();
    }
  }
  /** `call` cut off by a dropped connection (test/support/net.ts); once both connections of the store are back. */
  async function cutOff(proxy: Awaited<ReturnType<typeof faultyProxy>>, proxied: IdempotencyStore, call: () => Promise<unknown>) {
    const probe = unique('probe-');
    const error = await cutOffBehind(proxy, call, async () => {
      await proxied.claim(probe, { fingerprint: 'p', owner: 'probe' }, 1000);
      await proxied.release(probe, 'probe');
    });
    expect(error).toBeInstanceOf(UnavailableError);
  }

  it('a claim cut off by a dropped connection is not sent again after the reconnect: the retry gets the key, not "in progress" for 2 minutes', () =>
    behindProxy(async ({ proxy, proxied, direct }) => {
      const key = unique('k-');
      await cutOff(proxy, proxied, () => proxied.claim(key, { fingerprint: 'f', owner: 'told-unavailable' }, 120_000));
      expect(await direct.claim(key, { fingerprint: 'f', owner: 'retry' }, 120_000)).toBeNull();
    }));

  it('a release cut off by a dropped connection is sent again after the reconnect: the key does not stay pending', () =>
    behindProxy(async ({ proxy, proxied, direct }) => {
      const key = unique('k-');
      expect(await proxied.claim(key, { fingerprint: 'f', owner: 'first' }, 120_000)).toBeNull();
      await cutOff(proxy, proxied, () => proxied.release(key, 'first'));
      expect(await direct.claim(key, { fingerprint: 'f', owner: 'retry' }, 120_000)).toBeNull();
    }));
});
