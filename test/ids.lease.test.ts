// Node ids leased so that two gateways never generate the same id (src/node-ids.ts): on one
// Redis, on a Redis Cluster and on MongoDB; the id timestamp fence between holders of one
// node id; and gateway processes leasing distinct node ids at start.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { UnavailableError } from '../src/errors.ts';
import { createIdGenerator, IdLimitError, idTimestamp } from '../src/model/ids.ts';
import { leaseNodeId, NodeIdTakenError, type NodeIds } from '../src/node-ids.ts';
import { createRedisLeaseStore, type NodeIdLeaseStore } from '../src/store/node-id-leases.ts';
import { createMongoLeaseStore } from '../src/store/node-id-leases-mongo.ts';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { startRedisCluster, type RedisCluster } from './support/redis-cluster.ts';
import { describeRequiring, describeWith } from './support/servers.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nodeOf = (id: string) => Number((BigInt(id) >> 12n) & 1023n);

describe('the id generator between holders of one node id', () => {
  it('issues only ids above `after`, even with its clock behind', () => {
    const after = Date.now() + 60_000;
    const gen = createIdGenerator({ nodeId: 5, after });
    const ids = Array.from({ length: 5000 }, () => gen.next());
    expect(ids.every((id) => idTimestamp(id).getTime() > after)).toBe(true);
    expect(new Set(ids).size).toBe(5000);
    expect(gen.lastTimestamp()).toBe(idTimestamp(ids.at(-1)!).getTime());
  });

  it('issues nothing above `limit`: IdLimitError, and the next id once the limit moves', () => {
    let limit = Date.now() - 1;
    const gen = createIdGenerator({ nodeId: 5, limit: () => limit });
    expect(() => gen.next()).toThrow(IdLimitError);
    limit = Date.now() + 10_000;
    expect(idTimestamp(gen.next()).getTime()).toBeLessThanOrEqual(limit);
  });
});

/** The same tests on every store that can hold leases; `store()` opens a client on one namespace per test. */
function leaseSuite(name: string, open: (ns: string) => Promise<NodeIdLeaseStore>) {
  describe(name, () => {
    const live: NodeIds[] = [];
    let ns = '';
    const lease = async (opts: { nodeId?: number; ttlMs?: number; now?: () => number; store?: NodeIdLeaseStore } = {}) => {
      const ids = await leaseNodeId({
        store: opts.store ?? (await open(ns)),
        ttlMs: opts.ttlMs ?? 5000,
        nodeId: opts.nodeId,
        now: opts.now,
      });
      live.push(ids);
      return ids;
    };
    afterEach(async () => {
      await Promise.all(live.splice(0).map((l) => l.close()));
    });

    it('leasers sharing the store never get the same node id', async () => {
      ns = unique('ns');
      const leased = await Promise.all(Array.from({ length: 12 }, () => lease()));
      const nodeIds = leased.map((l) => l.nodeId);
      expect(nodeIds.every((n) => typeof n === 'number' && n >= 0 && n < 1024)).toBe(true);
      expect(new Set(nodeIds).size).toBe(12);
      const ids = leased.flatMap((l) => Array.from({ length: 200 }, () => l.next()));
      expect(new Set(ids).size).toBe(ids.length);
      for (const l of leased) expect(nodeOf(l.next())).toBe(l.nodeId);
    });

    it('a GATEWAY_NODE_ID held by another is refused; a free one is leased as given', async () => {
      ns = unique('ns');
      const first = await lease();
      const refused = await lease({ nodeId: first.nodeId! }).catch((e) => e);
      expect(refused).toBeInstanceOf(NodeIdTakenError);
      expect(String(refused.message)).toContain(`GATEWAY_NODE_ID=${first.nodeId} is leased by another gateway`);
      const free = (first.nodeId! + 1) % 1024;
      const fixed = await lease({ nodeId: free });
      expect(fixed.nodeId).toBe(free);
      expect(nodeOf(fixed.next())).toBe(free);
    });

    it('an expired lease is taken over: the old holder stops, the new one issues above it with its clock an hour behind; healed, the old holder leases another id', async () => {
      ns = unique('ns');
      // The old holder loses its store (a partition): renewals fail from now on.
      const real = await open(ns);
      let cut = false;
      const partitioned: NodeIdLeaseStore = {
        kind: real.kind,
        acquire: (...a) => (cut ? Promise.reject(new UnavailableError('cut')) : real.acquire(...a)),
        renew: (...a) => (cut ? Promise.reject(new UnavailableError('cut')) : real.renew(...a)),
        release: (...a) => (cut ? Promise.reject(new UnavailableError('cut')) : real.release(...a)),
        close: () => real.close(),
      };
      // Long enough that the takeover attempt below reaches the store well before the lease
      // runs out, on a loaded machine too (at 2 s the margin was about 1.5 s).
      const ttlMs = 4000;
      const old = await lease({ store: partitioned, ttlMs });
      const nodeId = old.nodeId!;
      await sleep(1600); // one renewal at least (every third of the TTL), which moves the fence ahead
      const oldIds: string[] = [];
      cut = true;
      // Still within its TTL: it keeps issuing, below the fence it stored.
      const until = Date.now() + 300;
      while (Date.now() < until) oldIds.push(old.next());

      // Held until the TTL runs out: refused, then taken over.
      const early = await lease({ nodeId, ttlMs }).catch((e) => e);
      expect(early).toBeInstanceOf(NodeIdTakenError);
      const behind = () => Date.now() - 3_600_000;
      let successor: NodeIds | undefined;
      for (const giveUp = Date.now() + 30_000; !successor && Date.now() < giveUp;) {
        successor = await lease({ nodeId, ttlMs, now: behind }).catch(async (e) => {
          if (!(e instanceof NodeIdTakenError)) throw e;
          await sleep(100);
          return undefined;
        });
      }
      expect(successor?.nodeId).toBe(nodeId);
      // The old holder has stopped by now (its TTL passed without a renewal).
      expect(() => old.next()).toThrow(UnavailableError);
      expect(old.nodeId).toBeNull();

      const newIds = Array.from({ length: 5000 }, () => successor!.next());
      const highestOld = oldIds.map(BigInt).reduce((a, b) => (a > b ? a : b));
      expect(newIds.every((id) => BigInt(id) > highestOld)).toBe(true);
      expect(newIds.every((id) => nodeOf(id) === nodeId)).toBe(true);

      // The partition heals: the old holder finds its lease gone and leases another node id.
      cut = false;
      for (const giveUp = Date.now() + 20_000; old.nodeId === null && Date.now() < giveUp;) await sleep(100);
      expect(old.nodeId).not.toBeNull();
      expect(old.nodeId).not.toBe(nodeId);
      expect(nodeOf(old.next())).toBe(old.nodeId);
    });

    it('a graceful stop releases the lease: the next holder takes it at once and issues above the last id', async () => {
      ns = unique('ns');
      const first = await lease({ ttlMs: 60_000 });
      const nodeId = first.nodeId!;
      const last = Array.from({ length: 100 }, () => first.next()).at(-1)!;
      await first.close();
      expect(() => first.next()).toThrow(UnavailableError);
      const next = await lease({ nodeId, ttlMs: 60_000, now: () => Date.now() - 3_600_000 });
      expect(next.nodeId).toBe(nodeId);
      const id = next.next();
      expect(BigInt(id)).toBeGreaterThan(BigInt(last));
      // The fence after a release is the last id really used, not the lease's ceiling: no id far in the future.
      expect(idTimestamp(id).getTime() - idTimestamp(last).getTime()).toBeLessThan(1000);
    });
  });
}

describeWith('redis', 'node-id leases in Redis', (url) => {
  leaseSuite('one Redis', (ns) => createRedisLeaseStore({ url, keyPrefix: `${ns}:` }));
});

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (these tests start a Redis Cluster of their own)',
  'node-id leases in a Redis Cluster',
  () => {
    let cluster: RedisCluster;
    beforeAll(async () => {
      cluster = await startRedisCluster(inject('redisServerBin'));
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    leaseSuite('Redis Cluster', (ns) =>
      createRedisLeaseStore({
        url: { kind: 'cluster', nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) },
        keyPrefix: `${ns}:`,
      }),
    );
  },
);

describeWith('mongo', 'node-id leases in MongoDB', (url) => {
  leaseSuite('MongoDB', (ns) => createMongoLeaseStore({ url, dbName: `leases_${ns}` }));
});

/** The node id a gateway logged at start. */
function leasedNodeId(gw: ChildGateway): { nodeId: number; lease: string } {
  const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'node id leased');
  if (!line) throw new Error(`no "node id leased" line:\n${gw.logs.join('\n')}`);
  return line;
}

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (this test starts a Redis of its own)',
  'gateway processes on one Redis',
  () => {
    // A Redis of its own: no other test's gateway can lease the node id this one frees and takes again.
    let redis: Awaited<ReturnType<typeof ownRedis>>;
    beforeAll(async () => {
      redis = await ownRedis(inject('redisServerBin'));
    });
    afterAll(async () => {
      await redis?.close();
    });

    it('lease different node ids; GATEWAY_NODE_ID held by a running one refuses to start; released at stop, it starts', async () => {
      const env = { REDIS_URL: redis.url, CODE_HMAC_KEY: 'lease-test-key', RUN_WORKER: 'false' };
      const a = await spawnGateway({ env });
      const b = await spawnGateway({ env });
      try {
        const [la, lb] = [leasedNodeId(a), leasedNodeId(b)];
        expect(la.lease).toBe('redis');
        expect(lb.lease).toBe('redis');
        expect(la.nodeId).not.toBe(lb.nodeId);

        const refused = await spawnGateway({ env: { ...env, GATEWAY_NODE_ID: String(la.nodeId) } }).catch((e) => e);
        expect(String(refused?.message)).toMatch(new RegExp(`GATEWAY_NODE_ID=${la.nodeId} is leased by another gateway`));

        expect(await a.stop()).toBe(0);
        const c = await spawnGateway({ env: { ...env, GATEWAY_NODE_ID: String(la.nodeId) } });
        try {
          expect(leasedNodeId(c).nodeId).toBe(la.nodeId);
          // Its ids carry that node id.
          const added = await c.post({
            query:
              'mutation { addHumanUser(input: { profile: { firstName: "N", lastName: "Id" }, email: { email: "n.id@example.com" } }) { userId } }',
          });
          expect(added.json.errors, added.text).toBeUndefined();
          expect(nodeOf(added.json.data.addHumanUser.userId)).toBe(la.nodeId);
        } finally {
          await c.stop();
        }
      } finally {
        await a.stop();
        await b.stop();
      }
    });
    it('a gateway whose lease is taken from it is not ready and creates nothing until it holds one again', async () => {
      const nodeId = 900;
      const env = {
        REDIS_URL: redis.url,
        CODE_HMAC_KEY: 'lease-test-key',
        RUN_WORKER: 'false',
        GATEWAY_NODE_ID: String(nodeId),
        NODE_ID_LEASE_TTL_MS: '3000',
      };
      const gw = await spawnGateway({ env });
      const direct = new Redis(redis.url);
      const ready = async () => {
        const res = await fetch(`${gw.base}/ready`);
        return { status: res.status, checks: ((await res.json()) as { checks: Record<string, string> }).checks };
      };
      const until = async (want: number) => {
        for (let t = Date.now(); Date.now() - t < 10_000; await new Promise((r) => setTimeout(r, 50))) {
          const r = await ready();
          if (r.status === want) return r;
        }
        throw new Error(`/ready did not answer ${want} within 10 s`);
      };
      const add = (email: string) =>
        gw.post({
          query: `mutation { addHumanUser(input: { profile: { firstName: "N", lastName: "Id" }, email: { email: "${email}" } }) { userId } }`,
        });
      try {
        expect(await ready()).toEqual({ status: 200, checks: { store: 'ok', redis: 'ok', node_id: 'ok' } });
        // Another holder takes the lease (as after this gateway was paused past its TTL).
        await direct.set(`{node-ids}:lease:${nodeId}`, 'another-gateway', 'PX', 60_000);
        expect(await until(503)).toEqual({ status: 503, checks: { store: 'ok', redis: 'ok', node_id: 'down' } });
        const refused = await add('no.lease@example.com');
        expect(refused.json.errors?.[0]?.extensions?.code, refused.text).toBe('UNAVAILABLE');
        // Freed, it is leased again: ready, and its ids carry the node id.
        await direct.del(`{node-ids}:lease:${nodeId}`);
        expect((await until(200)).checks.node_id).toBe('ok');
        const added = await add('leased.again@example.com');
        expect(added.json.errors, added.text).toBeUndefined();
        expect(nodeOf(added.json.data.addHumanUser.userId)).toBe(nodeId);
      } finally {
        direct.disconnect();
        await gw.stop();
      }
    });
  },
);

describeWith('mongo', 'gateway processes on MongoDB without Redis', (url) => {
  it('lease different node ids in MongoDB', async () => {
    const env = { MONGODB_URL: url, MONGODB_DB: unique('lease_gw_'), RUN_WORKER: 'false' };
    const a = await spawnGateway({ env });
    const b = await spawnGateway({ env });
    try {
      const [la, lb] = [leasedNodeId(a), leasedNodeId(b)];
      expect([la.lease, lb.lease]).toEqual(['mongodb', 'mongodb']);
      expect(la.nodeId).not.toBe(lb.nodeId);
      const added = await b.post({
        query:
          'mutation { addHumanUser(input: { profile: { firstName: "M", lastName: "Id" }, email: { email: "m.id@example.com" } }) { userId } }',
      });
      expect(added.json.errors, added.text).toBeUndefined();
      expect(nodeOf(added.json.data.addHumanUser.userId)).toBe(lb.nodeId);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
