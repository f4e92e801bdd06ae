// What GET /ready says about a Redis Cluster with one master down (docs/scaling.md quotes it).
// The readiness check is a PING, which carries no key: ioredis sends it to a master it picks at
// random among the connections it holds, and Redis answers PING even while it refuses every keyed
// command with CLUSTERDOWN. So /ready keeps answering 200 ("redis":"ok") while the dead master's
// keys (and, under cluster-require-full-coverage yes, every key) fail. What turns /ready to 503
// is the node-id lease: its renewal is a keyed command, and once it has failed for
// NODE_ID_LEASE_TTL_MS the check "node_id" is down.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { slotOf, startRedisCluster, type RedisCluster } from './support/redis-cluster.ts';
import { describeRequiring } from './support/servers.ts';

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (this test starts a Redis Cluster of its own)',
  'GET /ready with a Redis Cluster master down',
  () => {
    let cluster: RedisCluster;
    let gw: TestGateway;

    beforeAll(async () => {
      cluster = await startRedisCluster(inject('redisServerBin'), { masters: 3, nodeTimeoutMs: 2000 });
      gw = await startGateway({ env: { REDIS_CLUSTER_NODES: cluster.seeds, NODE_ID_LEASE_TTL_MS: '3000' } });
    });
    afterAll(async () => {
      await gw?.close();
      await cluster?.stop();
    });

    const ready = async () => {
      const res = await fetch(new URL('/ready', gw.baseUrl));
      return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
    };

    it('keeps "redis":"ok" while a master is down and keys fail CLUSTERDOWN, and turns 503 on the node-id lease', async () => {
      expect(await ready()).toMatchObject({ status: 200, body: { checks: { redis: 'ok' } } });
      const nodes = await cluster.nodes();
      const victim = nodes.find((n) => n.role === 'master')!;
      const survivor = nodes.find((n) => n.role === 'master' && n.id !== victim.id)!;
      await cluster.kill(cluster.ports.indexOf(victim.port));

      // Wait (bounded) until the survivor has marked the cluster failed: a keyed command there is refused.
      const plain = new Redis(survivor.port, '127.0.0.1', { maxRetriesPerRequest: 0 });
      plain.on('error', () => {});
      const ownKey = (() => {
        for (let i = 0; ; i++) {
          const k = `probe:${i}`;
          const s = slotOf(k);
          if (survivor.slots.some(([a, b]) => s >= a && s <= b)) return k;
        }
      })();
      let refused = '';
      for (const deadline = Date.now() + 60_000; !refused && Date.now() < deadline;) {
        refused = await plain.get(ownKey).then(
          () => '',
          (e: Error) => e.message,
        );
        if (!refused) await new Promise((r) => setTimeout(r, 200));
      }
      expect(refused).toMatch(/CLUSTERDOWN/);
      expect(await plain.ping()).toBe('PONG');
      plain.disconnect();

      // Every PING lands on a live master (the dead one's connection is gone from the pool): never "down".
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) seen.add((await ready()).body.checks.redis!);
      expect([...seen]).toEqual(['ok']);

      // The lease cannot be renewed under CLUSTERDOWN: /ready turns 503 on node_id, redis still "ok".
      let last = await ready();
      for (const deadline = Date.now() + 60_000; last.status === 200 && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 200));
        last = await ready();
      }
      expect(last).toMatchObject({ status: 503, body: { checks: { redis: 'ok', node_id: 'down' } } });
    });
  },
);
