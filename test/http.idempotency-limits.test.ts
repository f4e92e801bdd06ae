// What an Idempotency-Key may cost (src/graphql/idempotency.ts, src/http/idempotency-core.ts):
// a keyed mutation document is parsed under armor's token limit, answers over
// MAX_KEPT_ANSWER_BYTES are not kept (a retry runs again, a waiting duplicate too), the
// in-memory store stays under its byte bound, and error messages do not echo huge input
// (src/model/url-template.ts). Against the real gateway, and the real plugin and core in a
// small yoga whose mutation counts its runs; with the in-memory store and with Redis.
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { armorLimits } from '../src/graphql/armor.ts';
import {
  createIdempotency,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  MAX_KEPT_ANSWER_BYTES,
  useIdempotency,
  type IdempotencyStore,
} from '../src/graphql/idempotency.ts';
import { stateOf } from '../src/graphql/request-state.ts';
import { parseUrlTemplate } from '../src/model/url-template.ts';
import { AddHumanUserDocument } from './generated/graphql.ts';
import { expectRestStatus, onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Idem', lastName: 'Limits' };

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

describe('url template reasons do not echo unbounded input', () => {
  it('a 1 MB template gets a short reason that still says what is wrong', () => {
    const mb = 'x'.repeat(1 << 20);
    const action = parseUrlTemplate(`https://id.example.com/v?c={{${mb}}}`);
    expect(action).toMatchObject({ ok: false, reason: expect.stringContaining('unsupported action "{{xxxx') });
    expect(!action.ok && action.reason.length).toBeLessThan(200);
    const placeholder = parseUrlTemplate(`https://id.example.com/v?c={{.${'A'.repeat(1 << 20)}}}`);
    expect(placeholder).toMatchObject({ ok: false, reason: expect.stringContaining('unknown placeholder') });
    expect(!placeholder.ok && placeholder.reason).toMatch(/allowed are \{\{\.UserID\}\}, \{\{\.Code\}\} and \{\{\.OrgID\}\}$/);
    expect(!placeholder.ok && placeholder.reason.length).toBeLessThan(200);
    // Short input is quoted whole, as before.
    expect(parseUrlTemplate('https://x.ch/?a={{.Foo}}')).toMatchObject({ reason: expect.stringContaining('"{{.Foo}}"') });
  });
});

describe('the in-memory store stays under its byte bound', () => {
  const record = (owner: string) => ({ fingerprint: 'f'.repeat(43), owner });

  it('never holds more than maxBytes, drops the least recently used first, and keeps nothing larger than the bound', async () => {
    const maxBytes = 8 * 1024;
    const store = createMemoryIdempotencyStore({ maxBytes });
    const answer = 'a'.repeat(1000);
    let peak = 0;
    for (let i = 0; i < 200; i++) {
      expect(await store.claim(`k${i}`, record(`o${i}`), 60_000)).toBeNull();
      peak = Math.max(peak, store.bytes);
      await store.complete(`k${i}`, `o${i}`, answer, 60_000);
      peak = Math.max(peak, store.bytes);
      // k0 is read after each write: the most recently used, it is never the one dropped.
      if (i > 0) expect((await store.claim('k0', record('other'), 60_000))?.answer, `k0 after k${i}`).toBe(answer);
    }
    expect(peak).toBeGreaterThan(maxBytes / 2);
    expect(peak).toBeLessThanOrEqual(maxBytes);
    // What is left: k0 and the newest few (k0 first, then newest first: a record found moves to the
    // end and drops nothing); the one before them is gone (a claim gets the key).
    expect((await store.claim('k0', record('again'), 60_000))?.answer).toBe(answer);
    let kept = 0;
    while ((await store.claim(`k${199 - kept}`, record('again'), 60_000))?.answer === answer) kept++;
    expect(kept).toBeGreaterThan(1);
    expect(kept).toBeLessThan(maxBytes / answer.length);
    expect(await store.claim('k1', record('again'), 60_000)).toBeNull();
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);

    // An answer larger than the whole bound: not kept, and the claim is gone with it.
    expect(await store.claim('huge', record('h'), 60_000)).toBeNull();
    await store.complete('huge', 'h', 'z'.repeat(maxBytes + 1), 60_000);
    expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    expect(await store.claim('huge', record('h2'), 60_000)).toBeNull();
  });

  it('through the core: many large distinct answers leave at most the bound, the newest still replayed', async () => {
    const maxBytes = 64 * 1024;
    const store = createMemoryIdempotencyStore({ maxBytes });
    const idempotency = createIdempotency({ store, secret: 's', ttlSeconds: 3600 });
    for (let i = 0; i < 300; i++) {
      const claim = await idempotency.begin<{ body: string }>('caller', `key-${i}`, () => 'request');
      expect(claim.kind).toBe('proceed');
      if (claim.kind === 'proceed') await claim.finish({ body: `${i}:${'b'.repeat(4000)}` });
      expect(store.bytes).toBeLessThanOrEqual(maxBytes);
    }
    const newest = await idempotency.begin<{ body: string }>('caller', 'key-299', () => 'request');
    expect(newest.kind === 'replay' && newest.answer.body.startsWith('299:')).toBe(true);
    expect((await idempotency.begin('caller', 'key-0', () => 'request')).kind).toBe('proceed');
  });
});

/** A yoga with the real plugin and core: `run(size)` counts its runs and answers `size` characters. */
function countingYoga(store: IdempotencyStore, caller = 'caller-1') {
  let runs = 0;
  const outcomes: string[] = [];
  const idempotency = createIdempotency({ store, secret: 'test-secret', ttlSeconds: 3600, onOutcome: (o) => outcomes.push(o) });
  const withCaller: Plugin = {
    onRequest({ request }) {
      stateOf(request).caller = caller;
    },
  };
  const yoga = createYoga({
    logging: false,
    plugins: [withCaller, useIdempotency(idempotency)],
    schema: createSchema({
      typeDefs: 'type Query { ok: Boolean } type Mutation { run(size: Int!, delayMs: Int): String }',
      resolvers: {
        Mutation: {
          run: async (_: unknown, { size, delayMs }: { size: number; delayMs?: number }) => {
            const n = ++runs;
            if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
            return `run ${n} ${'x'.repeat(size)}`;
          },
        },
      },
    }),
  });
  const send = async (key: string, size: number, delayMs = 0) => {
    const res = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({
        query: 'mutation($size: Int!, $delayMs: Int) { run(size: $size, delayMs: $delayMs) }',
        variables: { size, delayMs },
      }),
    });
    const text = await res.text();
    return { status: res.status, replayed: res.headers.get('idempotency-replayed'), text, run: /"run (\d+) /.exec(text)?.[1] };
  };
  return { send, outcomes, runs: () => runs };
}

function largeAnswerSuite(name: string, makeStore: () => Promise<IdempotencyStore>) {
  describe(name, () => {
    let store: IdempotencyStore;
    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(async () => store?.close());

    it('an answer under the bound is replayed; one over it is not kept and the retry runs again', async () => {
      const y = countingYoga(store);
      const smallKey = unique('small-');
      const first = await y.send(smallKey, 100);
      const again = await y.send(smallKey, 100);
      expect(again.replayed).toBe('true');
      expect(again.text).toBe(first.text);
      expect(y.runs()).toBe(1);

      const bigKey = unique('big-');
      const big1 = await y.send(bigKey, MAX_KEPT_ANSWER_BYTES + 1);
      expect(big1.status).toBe(200);
      expect(big1.run).toBe('2');
      const big2 = await y.send(bigKey, MAX_KEPT_ANSWER_BYTES + 1);
      expect(big2.status).toBe(200);
      expect(big2.replayed).toBeNull();
      expect(big2.run).toBe('3'); // ran again
      expect(y.runs()).toBe(3);
      expect(y.outcomes).toEqual(['stored', 'replayed', 'not_stored', 'not_stored']);
    });

    it('a duplicate waiting for an answer that is not kept gets one: it runs itself, nothing hangs', async () => {
      const y = countingYoga(store);
      const key = unique('wait-');
      const first = y.send(key, MAX_KEPT_ANSWER_BYTES + 1, 300);
      await new Promise((r) => setTimeout(r, 50)); // the first holds the key
      const second = await y.send(key, MAX_KEPT_ANSWER_BYTES + 1, 300); // the same request
      const one = await first;
      expect([one.run, second.run].sort()).toEqual(['1', '2']);
      expect(one.replayed).toBeNull();
      expect(second.replayed).toBeNull();
      expect(y.outcomes).toEqual(['not_stored', 'not_stored']);
    });
  });
}

largeAnswerSuite('large answers with the in-memory store', async () => createMemoryIdempotencyStore());
describeWith('redis', 'large answers with Redis', (redisUrl) => {
  largeAnswerSuite('the same suite', () => createRedisIdempotencyStore({ url: redisUrl, keyPrefix: unique('idem-limits-') + ':' }));
});

describe('the real gateway', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it("a keyed mutation document over the token limit gets armor's usual error and nothing is stored", async () => {
    const query = `mutation { ${'a '.repeat(armorLimits.maxTokens.n + 1)}}`;
    const key = unique('tokens-');
    const before = await outcomes(gw);
    for (let i = 0; i < 2; i++) {
      const res = await gw.raw({ query }, { 'idempotency-key': key });
      expectRestStatus(res, 400, res.text);
      expect(res.headers.get('idempotency-replayed')).toBeNull();
      const err = onlyError(res);
      expect(err.extensions?.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(new RegExp(`Token limit of ${armorLimits.maxTokens.n} exceeded`));
    }
    expect(delta(before, await outcomes(gw))).toEqual({}); // not a keyed mutation: neither stored nor counted
  });

  it('a 1 MB urlTemplate: a short INVALID_ARGUMENT answer, kept and replayed', async () => {
    const username = unique('tpl');
    const input = {
      username,
      profile,
      email: { email: `${username}@example.com`, sendCode: { urlTemplate: `https://x.ch/{{${'x'.repeat(1 << 20)}}}` } },
    };
    const key = unique('tpl-');
    const first = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
    expectRestStatus(first, 400);
    expect(onlyError(first).extensions?.code).toBe('INVALID_ARGUMENT');
    expect(first.text.length).toBeLessThan(4096);
    const again = await gw.send(AddHumanUserDocument, { input }, { headers: { 'idempotency-key': key } });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });
});
