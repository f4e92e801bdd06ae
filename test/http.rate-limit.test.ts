// Per-caller and per-IP request limits held in Redis: two gateway processes
// (the bundled gateway, test/support/child-gateway.ts) share one redis-server started here, and the
// requests spread over both count against one window.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { describeWith } from './support/servers.ts';

const PER_CALLER = 8;
const PER_IP = 5;
const typename = { query: 'query Ping { __typename }' };

/** When the window's first (oldest) hit was made: between the send of the first request and its answer. */
interface FirstHit {
  from: number;
  to: number;
}

type Answer = { status: number; headers: Headers; json: any };

/** Sends a request that must be limited and checks its answer; Retry-After within what the clock allows. */
async function expectLimited(send: () => Promise<Answer>, first: FirstHit) {
  const sentAt = Date.now();
  const res = await send();
  const answeredAt = Date.now();
  expect(res.status).toBe(429);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  // The oldest hit leaves the one-minute window 60 s after it was made (rounded up to whole
  // seconds); when exactly it was made and answered is known to within the requests' times.
  expect(seconds).toBeGreaterThanOrEqual(Math.max(1, Math.floor((first.from + 60_000 - answeredAt) / 1000)));
  expect(seconds).toBeLessThanOrEqual(Math.min(60, Math.ceil((first.to + 60_000 - sentAt) / 1000)));
  expect(res.json.errors).toHaveLength(1);
  expect(res.json.errors[0].extensions).toMatchObject({ code: 'RESOURCE_EXHAUSTED', grpcCode: 8 });
  expect(res.json.errors[0].extensions.details[0]).toEqual({
    '@type': 'type.googleapis.com/google.rpc.RetryInfo',
    retryDelay: `${seconds}s`,
  });
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

/** Sends the first request of a window; when its hit was made. */
async function firstOf(send: () => Promise<Answer & { text: string }>): Promise<FirstHit> {
  const from = Date.now();
  const res = await send();
  expect(res.status, `request 1: ${res.text}`).toBe(200);
  return { from, to: Date.now() };
}

describeWith('redis', 'rate limits shared by two gateway processes on one Redis', () => {
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let a: ChildGateway;
  let b: ChildGateway;
  let bData: string;

  beforeAll(async () => {
    redis = await ownRedis(inject('redisServerBin'));
    const env = {
      REDIS_URL: redis.url,
      CODE_HMAC_KEY: 'rate-limit-test',
      RATE_LIMIT_PER_CALLER_PER_MINUTE: String(PER_CALLER),
      RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP),
      // Both gateways sit behind "one proxy": the client address is the last X-Forwarded-For entry.
      TRUST_PROXY: '1',
    };
    a = await spawnGateway({ env });
    // Replicas verify the same tokens: B gets A's signing key (in production: the same JWKS_URL).
    bData = mkdtempSync(path.join(tmpdir(), 'gw-child-b-'));
    copyFileSync(path.join(a.dataDir, 'signing-key.json'), path.join(bData, 'signing-key.json'));
    b = await spawnGateway({ env, dataDir: bData });
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (bData) rmSync(bData, { recursive: true, force: true });
    await redis?.close();
  });

  it('per caller: the first N requests over both gateways pass, then both answer 429 with Retry-After', async () => {
    const token = a.adminToken;
    const auth = { authorization: `Bearer ${token}` };
    const first = await firstOf(() => a.post(typename, auth));
    for (let i = 1; i < PER_CALLER; i++) {
      const res = await (i % 2 ? b : a).post(typename, auth);
      expect(res.status, `request ${i + 1}: ${res.text}`).toBe(200);
      expect(res.json.data.__typename).toBe('Query');
    }
    await expectLimited(() => a.post(typename, auth), first);
    await expectLimited(() => b.post(typename, auth), first);

    // Another caller (B's own administrator) has its own window.
    const other = await a.post(typename, { authorization: `Bearer ${b.adminToken}` });
    expect(other.status).toBe(200);
    // The refused requests were logged with their status, and counted.
    const limitedLine = [...a.logs, ...b.logs].map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.status === 429);
    expect(limitedLine).toMatchObject({ caller: a.adminId, errors: ['RESOURCE_EXHAUSTED'] });
    const metrics = await (await fetch(`${a.base}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_rate_limited_total\{scope="caller"\} 1$/m);
  });

  it('per IP, for requests without a valid token: one window per client address, across both gateways', async () => {
    const client = { 'x-forwarded-for': '198.51.100.7' };
    const first = await firstOf(() => a.post(typename, { ...client, authorization: '' }));
    for (let i = 1; i < PER_IP; i++) {
      const res = await (i % 2 ? b : a).post(typename, { ...client, authorization: '' });
      expect(res.status, `request ${i + 1}: ${res.text}`).toBe(200);
    }
    await expectLimited(() => b.post(typename, { ...client, authorization: '' }), first);
    // A forged token counts as no token: still this address's window.
    await expectLimited(() => a.post(typename, { ...client, authorization: 'Bearer forged.token.here' }), first);
    // A leftmost X-Forwarded-For entry is the client's own claim: only the proxy's (last) entry counts.
    await expectLimited(() => a.post(typename, { 'x-forwarded-for': '203.0.113.99, 198.51.100.7', authorization: '' }), first);

    // Another client address is not affected, nor is an authenticated caller from the limited address.
    const elsewhere = await a.post(typename, { 'x-forwarded-for': '198.51.100.8', authorization: '' });
    expect(elsewhere.status).toBe(200);
    const signedIn = await b.post(typename, { ...client, authorization: `Bearer ${b.adminToken}` });
    expect(signedIn.status).toBe(200);
  });
});
