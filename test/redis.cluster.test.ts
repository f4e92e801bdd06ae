// The gateway's Redis uses against a real Redis Cluster (3 masters of redis-server, started
// here): verification codes, rate limits, idempotency records and the delivery queue through
// the gateway's own modules; a client given one seed reaching keys on the other masters; a
// master killed (SIGKILL) and restarted under a live client; and the gateway process itself
// started with REDIS_CLUSTER_NODES. Then a cluster with a replica per master: a slot migrated
// between masters under live clients (ASK, then MOVED), and a master killed for good, failed
// over to its replica, and started again as a replica. And the same factory through Sentinel.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { createCodeService } from '../src/codes/codes.ts';
import { createRedisCodeStore } from '../src/codes/redis.ts';
import { loadConfig } from '../src/config.ts';
import { UnavailableError } from '../src/errors.ts';
import { createIdempotency, createRedisIdempotencyStore } from '../src/http/idempotency-core.ts';
import { createRedisRateLimiter } from '../src/notify/rate-limit.ts';
import { createRedisQueue } from '../src/notify/redis-queue.ts';
import { createCodeSeal } from '../src/notify/seal.ts';
import { failFastRedis, type RedisConnection } from '../src/redis.ts';
import { spawnGateway } from './support/child-gateway.ts';
import { freePort } from './support/net.ts';
import { ownRedis } from './support/own-redis.ts';
import { slotOf, startRedisCluster, type RedisCluster } from './support/redis-cluster.ts';
import { describeRequiring } from './support/servers.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seal = createCodeSeal('cluster-test-key');

describe('Redis configuration', () => {
  it('REDIS_CLUSTER_NODES: the seeds, with REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS', () => {
    expect(
      loadConfig({
        REDIS_CLUSTER_NODES: 'redis-a:7000, [::1]:7001,10.0.0.3:7002',
        REDIS_USERNAME: 'gw',
        REDIS_PASSWORD: 'pw',
        REDIS_TLS: 'true',
      }).redis,
    ).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'redis-a', port: 7000 },
        { host: '::1', port: 7001 },
        { host: '10.0.0.3', port: 7002 },
      ],
      username: 'gw',
      password: 'pw',
      tls: true,
    });
    expect(loadConfig({ REDIS_URL: 'rediss://u:p@cache:6380' }).redis).toEqual({ kind: 'single', url: 'rediss://u:p@cache:6380' });
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'gw' }).redis).toMatchObject({
      kind: 'sentinel',
      name: 'gw',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
    });
    expect(loadConfig({}).redis).toBeUndefined();
  });

  it('refuses what it cannot mean: two kinds of Redis, a seed without a port, braces in the queue prefix', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://cache:6379', REDIS_CLUSTER_NODES: 'a:7000' })).toThrow(
      /REDIS_URL and REDIS_CLUSTER_NODES are set: set only one/,
    );
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:7000,b' })).toThrow(/REDIS_CLUSTER_NODES: "b" is not host:port/);
    expect(() => loadConfig({ REDIS_SENTINELS: 's1:26379' })).toThrow(/REDIS_SENTINEL_NAME/);
    expect(() => loadConfig({ DELIVERY_KEY_PREFIX: 'x{y}:' })).toThrow(/must not contain \{ or \}/);
  });
});

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (these tests start a Redis Cluster of their own)',
  'Redis Cluster',
  () => {
    let cluster: RedisCluster;
    let conn: RedisConnection;
    /** One plain connection per node, for looking at where keys are. */
    let nodes: Redis[];
    const closers: (() => Promise<unknown>)[] = [];
    /** The node killed by the test that kills one, left out of ownerOf's questions. */
    let killed = -1;
    const later = <T extends { close(): Promise<unknown> }>(x: T): T => (closers.push(() => x.close()), x);

    beforeAll(async () => {
      cluster = await startRedisCluster(inject('redisServerBin'));
      conn = { kind: 'cluster', nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) };
      nodes = cluster.ports.map((port) => {
        const r = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 200 });
        r.on('error', () => {});
        return r;
      });
    });

    afterAll(async () => {
      for (const c of closers.reverse()) await c().catch(() => {});
      for (const n of nodes ?? []) n.disconnect();
      await cluster?.stop();
    });

    /** Index of the master serving the slot of `key`. */
    async function ownerOf(key: string): Promise<number> {
      const live = nodes[cluster.ports.findIndex((_, i) => i !== killed)]!;
      const slot = Number(await live.call('CLUSTER', 'KEYSLOT', key));
      const ranges = (await live.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
      const range = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      return cluster.ports.indexOf(Number(range[2][1]));
    }

    /** One id per master whose hash tag `{id}` lands on it. */
    async function onEveryNode(prefix: string): Promise<string[]> {
      const found: (string | undefined)[] = cluster.ports.map(() => undefined);
      for (let i = 0; found.some((f) => f === undefined); i++) {
        const id = `${prefix}${i}`;
        const owner = await ownerOf(`{${id}}`);
        found[owner] ??= id;
      }
      return found as string[];
    }

    it('codes: issued, counted and verified for users whose keys sit on every master', async () => {
      const keyPrefix = unique('cc:');
      const store = later(await createRedisCodeStore({ url: conn, keyPrefix }));
      const codes = createCodeService({ store, hmacKey: 'cluster-codes', ttlSeconds: 60, maxAttempts: 3 });
      const users = await onEveryNode(unique('user-'));

      const owners = await Promise.all(users.map((u) => ownerOf(`${keyPrefix}code:{${u}}:email`)));
      expect(new Set(owners).size).toBe(cluster.ports.length);

      for (const [i, user] of users.entries()) {
        const code = await codes.issue(user, 'email', `${user}@example.com`);
        // The hash sits on the master of the user's slot (and nowhere else).
        const key = `${keyPrefix}code:{${user}}:email`;
        expect(await nodes[owners[i]!]!.exists(key)).toBe(1);
        // Wrong guesses are counted in Redis, on that master.
        expect(await store.check(user, 'email', 'not-the-hash', 3)).toEqual({ status: 'wrong', attemptsLeft: 2 });
        expect(await nodes[owners[i]!]!.hget(key, 'attempts')).toBe('1');
        expect(await codes.verify(user, 'email', 'WRONG1', `${user}@example.com`)).toBe('wrong');
        expect(await nodes[owners[i]!]!.hget(key, 'attempts')).toBe('2');
        expect(await codes.verify(user, 'email', code, `${user}@example.com`)).toBe('ok');
        // Consumed: a clear on top (hash ''), kept on that master for the verification's undo until its TTL.
        expect(await nodes[owners[i]!]!.hget(key, 'hash')).toBe('');
        expect(await codes.verify(user, 'email', code, `${user}@example.com`)).toBe('missing');
      }

      // The last allowed wrong guess voids the code.
      const user = users[0]!;
      const code = await codes.issue(user, 'email', 'a@example.com');
      for (let i = 0; i < 3; i++) expect(await codes.verify(user, 'email', 'WRONG1', 'a@example.com')).toBe('wrong');
      expect(await codes.verify(user, 'email', code, 'a@example.com')).toBe('missing');
    });

    it('rate limits: windows counted per key on whichever master holds it', async () => {
      const keyPrefix = unique('rl:');
      const limiter = later(await createRedisRateLimiter({ url: conn, keyPrefix }));
      const keys = await onEveryNode(unique('k'));
      for (const key of keys) {
        expect(await limiter.hit(key, 2, 10_000)).toMatchObject({ allowed: true, remaining: 1 });
        expect(await limiter.hit(key, 2, 10_000)).toMatchObject({ allowed: true, remaining: 0 });
        const refused = await limiter.hit(key, 2, 10_000);
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
      }
      const owners = await Promise.all(keys.map((k) => ownerOf(`${keyPrefix}rate:${k}`)));
      expect(new Set(owners).size).toBeGreaterThan(1);
      for (const [i, k] of keys.entries()) expect(await nodes[owners[i]!]!.zcard(`${keyPrefix}rate:${k}`)).toBe(2);
    });

    it('idempotency: a claimed key is kept, completed, replayed and released across masters', async () => {
      const store = later(await createRedisIdempotencyStore({ url: conn, keyPrefix: unique('idem-test:') }));
      const idem = createIdempotency({ store, secret: 'cluster-idempotency', ttlSeconds: 60, waitMs: 200 });
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const key = unique('key-');
        const first = await idem.begin<string>('caller-1', key, () => `request ${i}`);
        expect(first.kind).toBe('proceed');
        if (first.kind !== 'proceed') continue;
        // A duplicate while the first runs: still in progress.
        expect((await idem.begin<string>('caller-1', key, () => `request ${i}`)).kind).toBe('in-progress');
        await first.finish(`answer ${i}`);
        const again = await idem.begin<string>('caller-1', key, () => `request ${i}`);
        expect(again).toEqual({ kind: 'replay', answer: `answer ${i}` });
        answers.push(again.kind === 'replay' ? again.answer : '');
        expect((await idem.begin<string>('caller-1', key, () => 'another request')).kind).toBe('conflict');
      }
      expect(answers).toHaveLength(6);

      // Released (an answer not worth keeping): the next request with the key runs.
      const key = unique('key-');
      const first = await idem.begin<string>('caller-2', key, () => 'r');
      if (first.kind !== 'proceed') throw new Error(first.kind);
      await first.finish();
      expect((await idem.begin<string>('caller-2', key, () => 'r')).kind).toBe('proceed');
    });

    /**
     * `call` sent while the master of `key` holds writes (CLIENT PAUSE WRITE): it times out for its
     * caller. Then that master's client connections are killed and writes resume: a client that
     * sends a command again on a closed node connection would run it now, behind the caller's back.
     */
    async function cutOffOnItsMaster(key: string, call: () => Promise<unknown>): Promise<void> {
      const master = nodes[await ownerOf(key)]!;
      await master.call('CLIENT', 'PAUSE', '10000', 'WRITE');
      try {
        await expect(call()).rejects.toBeInstanceOf(UnavailableError);
        await master.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      } finally {
        await master.call('CLIENT', 'UNPAUSE');
      }
      // A resend comes within the client's redirections (16, 100 ms apart); give it twice that.
      await new Promise((r) => setTimeout(r, 3200));
    }

    it('an idempotency claim and a code check cut off by a killed connection are not run afterwards', async () => {
      const keyPrefix = unique('cut:');
      const idempotency = later(await createRedisIdempotencyStore({ url: conn, keyPrefix }));
      const key = unique('key-');
      await idempotency.claim(unique('warm-'), { fingerprint: 'w', owner: 'w' }, 1000);
      await cutOffOnItsMaster(`${keyPrefix}idem:${key}`, () =>
        idempotency.claim(key, { fingerprint: 'f', owner: 'told-unavailable' }, 120_000),
      );
      expect(await idempotency.claim(key, { fingerprint: 'f', owner: 'retry' }, 120_000)).toBeNull();

      const store = later(await createRedisCodeStore({ url: conn, keyPrefix }));
      const codes = createCodeService({ store, hmacKey: 'cluster-cut', ttlSeconds: 60, maxAttempts: 3 });
      const user = unique('u-');
      const code = await codes.issue(user, 'email', 'cut@example.com');
      await cutOffOnItsMaster(`${keyPrefix}code:{${user}}:email`, () => codes.verify(user, 'email', code, 'cut@example.com'));
      expect(await codes.verify(user, 'email', code, 'cut@example.com')).toBe('ok');
    });

    it('the delivery queue: enqueue, take, ack, retry, and reclaim of a job another consumer left', async () => {
      const keyPrefix = unique('dq:');
      const queue = later(await createRedisQueue({ url: conn, keyPrefix, claimIdleMs: 300, maxBlockMs: 200 }));
      const job = (n: number) =>
        seal.seal({ kind: 'verify-email-on-create', userId: `u${n}`, orgId: 'o', to: `u${n}@example.com`, code: `CODE${n}` });
      const ids = [await queue.enqueue(job(1)), await queue.enqueue(job(2))];
      expect(await nodes[await ownerOf(`${keyPrefix}{delivery}:jobs`)]!.xlen(`${keyPrefix}{delivery}:jobs`)).toBe(2);

      const a = queue.consumer('a');
      const b = queue.consumer('b');
      const taken = (await a.take(500))!;
      expect(taken.jobId).toBe(ids[0]);
      expect(taken.job.to).toBe('u1@example.com');
      expect(await queue.depth()).toMatchObject({ queued: 2, pending: 1 });

      // a never acknowledges: after claimIdleMs b gets the same job.
      await sleep(400);
      const reclaimed = (await b.take(500))!;
      expect(reclaimed.jobId).toBe(ids[0]);
      await b.ack(reclaimed);

      const second = (await b.take(500))!;
      expect(second.jobId).toBe(ids[1]);
      await b.retry(second, 0, 'smtp down');
      const retried = (await b.take(500))!;
      expect(retried).toMatchObject({ jobId: ids[1], attempts: 1, lastError: 'smtp down' });
      await b.deadLetter(retried, 'gave up');
      expect((await queue.deadLetters()).map((d) => d.jobId)).toEqual([ids[1]]);

      expect(await b.take(100)).toBeNull();
      expect(await queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 1 });
      await a.close();
      await b.close();
    });

    it('a client given one seed reaches keys on every master (MOVED followed)', async () => {
      const client = failFastRedis({ kind: 'cluster', nodes: [{ host: '127.0.0.1', port: cluster.ports[0]! }] });
      closers.push(async () => client.disconnect());
      await client.connect();
      const ids = await onEveryNode(unique('seed-'));
      const owners = await Promise.all(ids.map((id) => ownerOf(`{${id}}:v`)));
      expect(owners.filter((o) => o !== 0).length).toBeGreaterThanOrEqual(2);
      for (const [i, id] of ids.entries()) {
        expect(await client.set(`{${id}}:v`, `value ${i}`)).toBe('OK');
        expect(await nodes[owners[i]!]!.get(`{${id}}:v`)).toBe(`value ${i}`);
        expect(await client.get(`{${id}}:v`)).toBe(`value ${i}`);
      }
      // And the gateway's scripts (EVALSHA) run on the other masters too.
      const store = later(
        await createRedisCodeStore({ url: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: cluster.ports[0]! }] } }),
      );
      const codes = createCodeService({ store, hmacKey: 'one-seed', ttlSeconds: 60, maxAttempts: 3 });
      for (const id of ids) {
        const code = await codes.issue(id, 'phone', '+41790000000');
        expect(await codes.verify(id, 'phone', code, '+41790000000')).toBe('ok');
      }
    });

    it('the gateway process starts with REDIS_CLUSTER_NODES: codes of its mutations live in the cluster and verify', async () => {
      const gw = await spawnGateway({
        env: { REDIS_CLUSTER_NODES: cluster.seeds, CODE_HMAC_KEY: 'cluster-gateway-key', RUN_WORKER: 'false' },
      });
      try {
        const added = await gw.post({
          query: 'mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId emailCode } }',
          variables: {
            input: { profile: { firstName: 'Clu', lastName: 'Ster' }, email: { email: `${unique('c')}@example.com`, returnCode: true } },
          },
        });
        expect(added.json.errors, added.text).toBeUndefined();
        const { userId, emailCode } = added.json.data.addHumanUser;
        expect(emailCode).toMatch(/^[A-Z0-9]{6}$/);
        const key = `code:{${userId}}:email`;
        expect(await nodes[await ownerOf(key)]!.exists(key)).toBe(1);

        const verify = (code: string) =>
          gw.post({
            query: 'mutation($input: VerifyEmailInput!) { verifyEmail(input: $input) { details { sequence } } }',
            variables: { input: { userId, verificationCode: code } },
          });
        const wrong = await verify('ZZZZZZ');
        expect(wrong.json.errors?.[0]?.extensions?.code, wrong.text).toBe('INVALID_ARGUMENT');
        expect(await nodes[await ownerOf(key)]!.hget(key, 'attempts')).toBe('1');
        const ok = await verify(emailCode);
        expect(ok.json.errors, ok.text).toBeUndefined();
        expect(await nodes[await ownerOf(key)]!.hget(key, 'hash')).toBe(''); // consumed

        // setEmail issues a new code into the cluster.
        const set = await gw.post({
          query: 'mutation($input: SetEmailInput!) { setEmail(input: $input) { verificationCode } }',
          variables: { input: { userId, email: `${unique('n')}@example.com`, returnCode: true } },
        });
        expect(set.json.errors, set.text).toBeUndefined();
        expect(await nodes[await ownerOf(key)]!.exists(key)).toBe(1);

        const leased = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'node id leased');
        expect(leased).toMatchObject({ lease: 'redis' });
        expect(leased.nodeId).toBeGreaterThanOrEqual(0);
        const nodeKey = `{node-ids}:lease:${leased.nodeId}`;
        expect(await nodes[await ownerOf(nodeKey)]!.exists(nodeKey)).toBe(1);

        // The master of the user's code killed: verifyEmail answers UNAVAILABLE at once; restarted, it verifies.
        const newCode = set.json.data.setEmail.verificationCode;
        const victim = await ownerOf(key);
        await cluster.kill(victim);
        killed = victim;
        const started = Date.now();
        const down = await verify(newCode);
        expect(down.json.errors?.[0]?.extensions?.code, down.text).toBe('UNAVAILABLE');
        // At once: bounded by the gateway's Redis timeouts (1.5 s a call: the rate limiter, the
        // code check and its undo at most), not by a client's patience.
        expect(Date.now() - started).toBeLessThan(12_000);
        await cluster.restart(victim);
        killed = -1;
        const up = await verify(newCode);
        expect(up.json.errors, up.text).toBeUndefined();

        // resendEmailCode (for a new, unverified address): a new code, counted in a cluster rate window, and a job in the cluster's queue.
        const reset = await gw.post({
          query: 'mutation($input: SetEmailInput!) { setEmail(input: $input) { details { sequence } } }',
          variables: { input: { userId, email: `${unique('r')}@example.com` } },
        });
        expect(reset.json.errors, reset.text).toBeUndefined();
        const resend = await gw.post({
          query: 'mutation($input: ResendEmailCodeInput!) { resendEmailCode(input: $input) { details { sequence } } }',
          variables: { input: { userId } },
        });
        expect(resend.json.errors, resend.text).toBeUndefined();
        expect(await nodes[await ownerOf('{delivery}:jobs')]!.xlen('{delivery}:jobs')).toBeGreaterThanOrEqual(1);
        const window = `rate:resend:${userId}:email`;
        expect(await nodes[await ownerOf(window)]!.zcard(window)).toBe(1);
        expect(await nodes[await ownerOf(key)]!.exists(key)).toBe(1);
      } finally {
        expect(await gw.stop()).toBe(0);
      }
    });

    describe('a master killed with SIGKILL and restarted', () => {
      it('fails fast while it is down, keeps every acknowledged write, and the same clients work again', async () => {
        const keyPrefix = unique('kill:');
        const store = later(await createRedisCodeStore({ url: conn, keyPrefix }));
        const codes = createCodeService({ store, hmacKey: 'kill', ttlSeconds: 600, maxAttempts: 5 });
        const limiter = later(await createRedisRateLimiter({ url: conn, keyPrefix }));
        const queue = later(await createRedisQueue({ url: conn, keyPrefix, claimIdleMs: 60_000, maxBlockMs: 200 }));

        // The master of the queue's slot, and a user whose code sits there too (and one elsewhere).
        const victim = await ownerOf(`${keyPrefix}{delivery}:jobs`);
        const users = await onEveryNode(unique('k-user-'));
        const onVictim = users[victim]!;
        const elsewhere = users[(victim + 1) % users.length]!;
        const code = await codes.issue(onVictim, 'email', 'v@example.com');
        const other = await codes.issue(elsewhere, 'email', 'e@example.com');
        const jobId = await queue.enqueue(
          seal.seal({ kind: 'verify-email-on-create', userId: onVictim, orgId: 'o', to: 'v@example.com', code: 'KILLED' }),
        );
        // Acknowledged just before the kill: appendfsync always has it on disk.
        const last = await codes.issue(users[victim]!, 'phone', '+41790000001');

        await cluster.kill(victim);
        killed = victim;
        const started = Date.now();
        const down = await Promise.allSettled([
          codes.verify(onVictim, 'email', code, 'v@example.com'),
          limiter.hit(`{${onVictim}}`, 5, 60_000),
          queue.enqueue(seal.seal({ kind: 'verify-email-on-create', userId: onVictim, orgId: 'o', to: 'v@example.com', code: 'DOWN01' })),
        ]);
        const took = Date.now() - started;
        expect(down.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
        expect((down[0] as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
        expect((down[1] as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
        expect(took, 'bounded by the 1.5 s command timeout (a check and its undo at most)').toBeLessThan(12_000);

        await cluster.restart(victim);
        killed = -1;

        // The same clients, not recreated: the codes written before the kill verify, the job is there.
        const again = async <T>(op: () => Promise<T>): Promise<T> => {
          for (let i = 0; ; i++) {
            try {
              return await op();
            } catch (err) {
              if (i >= 20) throw err;
              await sleep(250);
            }
          }
        };
        expect(await again(() => codes.verify(onVictim, 'email', code, 'v@example.com'))).toBe('ok');
        expect(await codes.verify(users[victim]!, 'phone', last, '+41790000001')).toBe('ok');
        expect(await codes.verify(elsewhere, 'email', other, 'e@example.com')).toBe('ok');
        const consumer = queue.consumer('after-restart');
        const taken = (await consumer.take(1000))!;
        expect(taken.jobId).toBe(jobId);
        await consumer.ack(taken);
        await consumer.close();
        expect(await limiter.hit(`{${onVictim}}`, 5, 60_000)).toMatchObject({ allowed: true });
      });
    });
  },
);

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (these tests start a Redis Cluster of their own)',
  'Redis Cluster with replicas',
  () => {
    // 3 masters, each with a replica; cluster-node-timeout 2 s: a dead master is failed over in seconds, later than a call to it fails (about 1.5 s).
    let cluster: RedisCluster;
    let conn: RedisConnection;
    const closers: (() => Promise<unknown>)[] = [];
    const later = <T extends { close(): Promise<unknown> }>(x: T): T => (closers.push(() => x.close()), x);

    beforeAll(async () => {
      cluster = await startRedisCluster(inject('redisServerBin'), { masters: 3, replicas: 1, nodeTimeoutMs: 2000 });
      conn = { kind: 'cluster', nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })) };
    });

    afterAll(async () => {
      for (const c of closers.reverse()) await c().catch(() => {});
      await cluster?.stop();
    });

    /** A plain connection to one node (READONLY, so a replica answers reads), for the test's own look. */
    async function onNode<T>(port: number, op: (r: Redis) => Promise<T>): Promise<T> {
      const r = new Redis(port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null,
        connectTimeout: 1000,
      });
      r.on('error', () => {});
      try {
        await r.connect();
        await r.call('READONLY');
        return await op(r);
      } finally {
        r.disconnect();
      }
    }
    const has = (port: number, key: string) => onNode(port, (r) => r.exists(key));
    /** The keys a node holds in a slot (whatever the slot's state: a migrating node answers ASK to a key it lacks, an importing one MOVED). */
    const heldIn = async (port: number, slot: number) =>
      new Set((await onNode(port, (r) => r.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000))) as string[]);
    /** One command on an importing node, as a redirected client sends it (ASKING first). */
    const asking = <T>(port: number, op: (r: Redis) => Promise<T>) => onNode(port, async (r) => (await r.call('ASKING'), op(r)));

    /** `count` ids (prefix + n) whose hash tag {id} falls in a slot `wanted` accepts. */
    function idsIn(prefix: string, count: number, wanted: (slot: number) => boolean): string[] {
      const ids: string[] = [];
      for (let n = 0; ids.length < count; n++) if (wanted(slotOf(`{${prefix}${n}}`))) ids.push(`${prefix}${n}`);
      return ids;
    }
    async function idsOn(port: number, prefix: string, count: number): Promise<string[]> {
      const ranges = (await cluster.nodes()).find((n) => n.port === port)!.slots;
      return idsIn(prefix, count, (slot) => ranges.some(([from, to]) => slot >= from && slot <= to));
    }

    /** op, again every 100 ms while it throws, for up to ms. */
    async function within<T>(ms: number, op: () => Promise<T>): Promise<T> {
      const deadline = Date.now() + ms;
      for (;;) {
        try {
          return await op();
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await sleep(100);
        }
      }
    }

    const job = (userId: string, code: string) =>
      seal.seal({ kind: 'verify-email-on-create', userId, orgId: 'o', to: `${userId}@example.com`, code });
    const record = (owner: string, fingerprint = 'fp') => ({ fingerprint, owner });

    it('the harness: 3 masters with one replica each, and slotOf agrees with CLUSTER KEYSLOT', async () => {
      const view = await cluster.nodes();
      const masters = view.filter((n) => n.role === 'master');
      expect(masters).toHaveLength(3);
      expect(masters.reduce((sum, m) => sum + m.slots.reduce((s, [from, to]) => s + to - from + 1, 0), 0)).toBe(16384);
      for (const m of masters) expect(await cluster.replicasOf(m.port)).toHaveLength(1);
      for (const key of ['a', '{delivery}:jobs', 'x:{user-1}:email', 'no{}tag', '{}x', 'é{ü}']) {
        expect(slotOf(key)).toBe(Number(await onNode(cluster.ports[0]!, (r) => r.call('CLUSTER', 'KEYSLOT', key))));
      }
    });

    it('a slot migrated between masters under live clients: ASK while it moves, MOVED once it has', async () => {
      const p = unique('ask:');
      const codeStore = later(await createRedisCodeStore({ url: conn, keyPrefix: p }));
      const codes = createCodeService({ store: codeStore, hmacKey: 'ask', ttlSeconds: 600, maxAttempts: 5 });
      const limiter = later(await createRedisRateLimiter({ url: conn, keyPrefix: p }));
      const idem = later(await createRedisIdempotencyStore({ url: conn, keyPrefix: p }));
      const queue = later(await createRedisQueue({ url: conn, keyPrefix: p, claimIdleMs: 60_000, maxBlockMs: 200 }));

      // The slot of the delivery queue, and users whose hash tag falls in it: A moves early, B at the end, C is new.
      const slot = slotOf('{delivery}');
      const [a, b, c, d] = idsIn(unique('ask-user-'), 4, (s) => s === slot) as [string, string, string, string];
      const view = await cluster.nodes();
      const source = view.find((n) => n.role === 'master' && n.slots.some(([from, to]) => slot >= from && slot <= to))!;
      const target = view.find((n) => n.role === 'master' && n.id !== source.id)!;
      const keys = (u: string) => ({ code: `${p}code:{${u}}:email`, rate: `${p}rate:{${u}}`, idem: `${p}idem:{${u}}:k` });
      const jobs = `${p}{delivery}:jobs`;

      const codeA = await codes.issue(a, 'email', 'a@example.com');
      const codeB = await codes.issue(b, 'email', 'b@example.com');
      for (const u of [a, b]) {
        expect(await limiter.hit(`{${u}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
        expect(await idem.claim(`{${u}}:k`, record(`owner-${u}`), 60_000)).toBeNull();
        await idem.complete(`{${u}}:k`, `owner-${u}`, `answer ${u}`, 60_000);
      }
      const consumer = queue.consumer('through-migration');
      const job0 = await queue.enqueue(job(a, 'ASK000'));
      const job1 = await queue.enqueue(job(a, 'ASK001'));
      const taken0 = (await consumer.take(100))!;
      expect(taken0.jobId).toBe(job0);
      for (const key of [...Object.values(keys(a)), ...Object.values(keys(b)), jobs]) expect(await has(source.port, key)).toBe(1);

      // Migration under way: A's keys and the queue's stream moved, B's not yet.
      await onNode(target.port, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id));
      await onNode(source.port, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id));
      const migrate = (moving: string[]) =>
        onNode(source.port, (r) => r.call('MIGRATE', '127.0.0.1', target.port, '', 0, 5000, 'KEYS', ...moving));
      let slotMoved = false;
      /** Moves what is left of the slot and gives the slot to the target on every master (target first); answers the keys it moved. */
      const finish = async () => {
        const rest = (await onNode(source.port, (r) => r.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000))) as string[];
        if (rest.length) expect(await migrate(rest)).toBe('OK');
        for (const m of [target, source, ...view.filter((n) => n.role === 'master' && n.id !== source.id && n.id !== target.id)]) {
          await onNode(m.port, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id));
        }
        slotMoved = true;
        return rest;
      };
      // Failed half-way, the slot is not left migrating for the next test.
      onTestFinished(async () => void (slotMoved || (await finish().catch(() => {}))));
      expect(await migrate([...Object.values(keys(a)), jobs])).toBe('OK');
      expect([...(await heldIn(target.port, slot))].sort()).toEqual([...Object.values(keys(a)), jobs].sort());
      expect([...(await heldIn(source.port, slot))].sort()).toEqual(Object.values(keys(b)).sort());

      // Moved keys are served by the target (ASK), the others still by the source; new keys are made on the target.
      expect(await codes.verify(a, 'email', 'WRONG1', 'a@example.com')).toBe('wrong');
      expect(await asking(target.port, (r) => r.hget(keys(a).code, 'attempts'))).toBe('1');
      // Consumed where each key lives: a clear on top (hash '').
      expect(await codes.verify(a, 'email', codeA, 'a@example.com')).toBe('ok');
      expect(await asking(target.port, (r) => r.hget(keys(a).code, 'hash'))).toBe('');
      expect(await codes.verify(b, 'email', codeB, 'b@example.com')).toBe('ok');
      expect(await onNode(source.port, (r) => r.hget(keys(b).code, 'hash'))).toBe('');
      const codeC = await codes.issue(c, 'email', 'c@example.com');
      expect((await heldIn(target.port, slot)).has(keys(c).code)).toBe(true);
      expect((await heldIn(source.port, slot)).has(keys(c).code)).toBe(false);
      expect(await limiter.hit(`{${a}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await limiter.hit(`{${b}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await asking(target.port, (r) => r.zcard(keys(a).rate))).toBe(2);
      expect(await onNode(source.port, (r) => r.zcard(keys(b).rate))).toBe(2);
      expect(await idem.claim(`{${a}}:k`, record('other'), 60_000)).toMatchObject({ owner: `owner-${a}`, answer: `answer ${a}` });
      expect(await idem.claim(`{${b}}:k`, record('other'), 60_000)).toMatchObject({ owner: `owner-${b}`, answer: `answer ${b}` });
      expect(await idem.claim(`{${c}}:k`, record(`owner-${c}`), 60_000)).toBeNull();
      await idem.complete(`{${c}}:k`, `owner-${c}`, `answer ${c}`, 60_000);
      expect((await heldIn(target.port, slot)).has(keys(c).idem)).toBe(true);
      const job2 = await queue.enqueue(job(b, 'ASK002'));
      expect(await asking(target.port, (r) => r.xlen(jobs))).toBe(3);
      // The queue: a job taken before is acknowledged (MULTI, redirected with ASK) and its depth read.
      // take() is refused meanwhile, at once: its first step is a script on two keys of the slot
      // ({delivery}:delayed, {delivery}:jobs), and Redis answers TRYAGAIN to a multi-key command while
      // they are not all on one side; ioredis retries (elsewhere: MOVED, ASK, TRYAGAIN again) until
      // maxRedirections. The worker's loop backs off and takes again (src/notify/worker.ts).
      await consumer.ack(taken0);
      expect(await asking(target.port, (r) => r.xlen(jobs))).toBe(2);
      expect(await queue.depth()).toEqual({ queued: 2, pending: 0, delayed: 0, deadLettered: 0 });
      const refusedAt = Date.now();
      // (Sixteen redirections take about a second; on a loaded machine the 1.5 s command timeout
      // may come first. Either way the take is refused, and the worker's loop takes again.)
      await expect(consumer.take(100)).rejects.toThrow(/Too many Cluster redirections.*(TRYAGAIN|ASK|MOVED)|timed out/i);
      expect(Date.now() - refusedAt).toBeLessThan(12_000);

      // The rest of the slot moves and the slot is given to the target on every master.
      expect((await finish()).sort()).toEqual([keys(b).code, keys(b).rate, keys(b).idem].sort());
      expect(await onNode(source.port, (r) => r.call('CLUSTER', 'COUNTKEYSINSLOT', slot))).toBe(0);
      expect(await cluster.masterPortOf(jobs)).toBe(target.port);

      const movedBySource = async () =>
        Number(/errorstat_MOVED:count=(\d+)/.exec(await onNode(source.port, (r) => r.info('errorstats')))?.[1] ?? 0);
      const movedBefore = await movedBySource();
      // After: the same module instances, redirected (MOVED) to the target.
      expect(await codes.verify(c, 'email', codeC, 'c@example.com')).toBe('ok');
      expect(await limiter.hit(`{${a}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await limiter.hit(`{${b}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limiter.hit(`{${b}}`, 3, 60_000)).allowed).toBe(false);
      for (const u of [a, b, c]) expect(await idem.claim(`{${u}}:k`, record('other'), 60_000)).toMatchObject({ answer: `answer ${u}` });
      const taken = [(await consumer.take(500))!, (await consumer.take(500))!];
      expect(taken.map((t) => t.jobId)).toEqual([job1, job2]);
      for (const t of taken) await consumer.ack(t);
      expect(await consumer.take(50)).toBeNull();
      await consumer.close();
      expect(await queue.depth()).toMatchObject({ queued: 0, pending: 0 });
      const codeD = await codes.issue(d, 'phone', '+41790000002');
      expect(await has(target.port, `${p}code:{${d}}:phone`)).toBe(1);
      expect(await codes.verify(d, 'phone', codeD, '+41790000002')).toBe('ok');
      // Each of the five clients (codes, limiter, idempotency, queue, the consumer's reader) met MOVED
      // about once, then its refreshed slot map sent it straight to the target (some 30 commands above).
      const moved = (await movedBySource()) - movedBefore;
      expect(moved).toBeGreaterThanOrEqual(1);
      expect(moved).toBeLessThanOrEqual(10);
    });

    it('a master killed for good: its replica takes over, the same clients fail fast meanwhile and then find every replicated write', async () => {
      const p = unique('fo:');
      // Created once, before the failover, and never recreated.
      const codeStore = later(await createRedisCodeStore({ url: conn, keyPrefix: p }));
      const codes = createCodeService({ store: codeStore, hmacKey: 'failover', ttlSeconds: 600, maxAttempts: 5 });
      const limiter = later(await createRedisRateLimiter({ url: conn, keyPrefix: p }));
      const idem = later(await createRedisIdempotencyStore({ url: conn, keyPrefix: p }));
      const queue = later(await createRedisQueue({ url: conn, keyPrefix: p, claimIdleMs: 60_000, maxBlockMs: 200 }));
      const consumer = queue.consumer('through-failover');
      expect(await consumer.take(10)).toBeNull(); // its own connection is up

      // The master of the queue's slot, its replica, and users whose keys sit on that master.
      const victim = await cluster.masterPortOf(`${p}{delivery}:jobs`);
      const [replica] = await cluster.replicasOf(victim);
      const [u1, u2, u3, u4] = (await idsOn(victim, unique('fo-user-'), 4)) as [string, string, string, string];

      const code1 = await codes.issue(u1, 'email', 'u1@example.com');
      expect(await codes.verify(u1, 'email', 'WRONG1', 'u1@example.com')).toBe('wrong');
      const code2 = await codes.issue(u2, 'phone', '+41790000003');
      expect(await limiter.hit(`{${u1}}`, 3, 60_000)).toMatchObject({ remaining: 2 });
      expect(await limiter.hit(`{${u1}}`, 3, 60_000)).toMatchObject({ remaining: 1 });
      expect(await idem.claim(`{${u1}}:k`, record('owner-1'), 60_000)).toBeNull();
      await idem.complete(`{${u1}}:k`, 'owner-1', 'answer 1', 60_000);
      const jobId = await queue.enqueue(job(u1, 'FOVER1'));
      for (const key of [
        `${p}code:{${u1}}:email`,
        `${p}code:{${u2}}:phone`,
        `${p}rate:{${u1}}`,
        `${p}idem:{${u1}}:k`,
        `${p}{delivery}:jobs`,
      ]) {
        expect(await has(victim, key)).toBe(1);
      }
      // Acknowledged and replicated: the replica has applied all of it.
      await cluster.waitForReplication(victim);
      expect(await onNode(replica!, (r) => r.hget(`${p}code:{${u1}}:email`, 'attempts'))).toBe('1');
      expect(await onNode(replica!, (r) => r.xlen(`${p}{delivery}:jobs`))).toBe(1);
      // Acknowledged, not waited for: asynchronous replication may or may not have carried it when the master dies.
      const lastCode = await codes.issue(u4, 'email', 'u4@example.com');

      const killedAt = Date.now();
      await cluster.kill(cluster.ports.indexOf(victim));
      const down = await Promise.allSettled([
        codes.issue(u3, 'email', 'u3@example.com'),
        limiter.hit(`{${u3}}`, 3, 60_000),
        idem.claim(`{${u3}}:down`, record('owner-3'), 60_000),
        queue.enqueue(job(u3, 'DOWN01')),
        consumer.take(10),
      ]);
      const failedWithin = Date.now() - killedAt;
      expect(down.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'rejected']);
      for (const r of down.slice(0, 3)) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
      expect(failedWithin, 'bounded by the 1.5 s command timeout (a put and its undo at most)').toBeLessThan(12_000);

      expect(await cluster.waitForFailover(victim)).toBe(replica);
      const promotedAt = Date.now();
      // The same instances: the earlier writes read back once they reach the new master.
      expect(await within(10_000, () => idem.claim(`{${u1}}:k`, record('other'), 60_000))).toMatchObject({
        owner: 'owner-1',
        answer: 'answer 1',
      });
      const recoveredAt = Date.now();
      expect(await codeStore.check(u1, 'email', 'not-the-hash', 5)).toEqual({ status: 'wrong', attemptsLeft: 3 });
      expect(await codes.verify(u1, 'email', code1, 'u1@example.com')).toBe('ok');
      expect(await codes.verify(u2, 'phone', code2, '+41790000003')).toBe('ok');
      expect(await limiter.hit(`{${u1}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await limiter.hit(`{${u1}}`, 3, 60_000)).allowed).toBe(false);
      const taken = await within(5000, async () => (await consumer.take(200)) ?? Promise.reject(new Error('no job yet')));
      expect(taken.jobId).toBe(jobId);
      await consumer.ack(taken);
      // And new writes, on the new master.
      const code3 = await codes.issue(u3, 'email', 'u3@example.com');
      expect(await has(replica!, `${p}code:{${u3}}:email`)).toBe(1);
      expect(await codes.verify(u3, 'email', code3, 'u3@example.com')).toBe('ok');
      const jobAfter = await queue.enqueue(job(u3, 'AFTER1'));
      const after = (await consumer.take(500))!;
      expect(after.jobId).toBe(jobAfter);
      await consumer.ack(after);
      const lastSurvived = await codes.verify(u4, 'email', lastCode, 'u4@example.com');
      expect(['ok', 'missing']).toContain(lastSurvived);
      console.info(
        `[failover] calls failed within ${failedWithin} ms of the kill; replica promoted ${promotedAt - killedAt} ms after it; ` +
          `clients served again ${recoveredAt - killedAt} ms after it; a write acknowledged just before the kill, not waited for: ${lastSurvived === 'ok' ? 'kept' : 'LOST'}`,
      );
      expect(recoveredAt - killedAt).toBeLessThan(20_000);

      // The old master started again: it rejoins as a replica of the new one, and nothing breaks.
      await cluster.restart(cluster.ports.indexOf(victim));
      expect((await cluster.nodes()).find((n) => n.port === victim)).toMatchObject({ role: 'replica', masterPort: replica });
      expect(await cluster.masterPortOf(`${p}{delivery}:jobs`)).toBe(replica);
      const code4 = await codes.issue(u4, 'phone', '+41790000004');
      await cluster.waitForReplication(replica!);
      expect(await has(victim, `${p}code:{${u4}}:phone`)).toBe(1);
      expect(await codes.verify(u4, 'phone', code4, '+41790000004')).toBe('ok');
      expect(await idem.claim(`{${u1}}:k`, record('other'), 60_000)).toMatchObject({ answer: 'answer 1' });
      expect(await limiter.hit(`{${u2}}`, 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
      const jobLast = await queue.enqueue(job(u4, 'LAST01'));
      const last = (await consumer.take(500))!;
      expect(last.jobId).toBe(jobLast);
      await consumer.ack(last);
      await consumer.close();
      expect(await queue.depth()).toMatchObject({ queued: 0, pending: 0 });
    });
  },
);

describeRequiring(
  inject('redisServerBin'),
  'redis-server not found (this test starts a Redis and a Sentinel of its own)',
  'Redis through Sentinel',
  () => {
    it('codes are issued and verified on the master a Sentinel names', async () => {
      const master = await ownRedis(inject('redisServerBin'));
      const dir = mkdtempSync(path.join(tmpdir(), 'sentinel-'));
      const port = await freePort();
      const conf = path.join(dir, 'sentinel.conf');
      writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor gw 127.0.0.1 ${new URL(master.url).port} 1\n`);
      const sentinel: ChildProcess = spawn(inject('redisServerBin'), [conf, '--sentinel'], { stdio: 'ignore' });
      try {
        const conn: RedisConnection = { kind: 'sentinel', sentinels: [{ host: '127.0.0.1', port }], name: 'gw' };
        let store: Awaited<ReturnType<typeof createRedisCodeStore>> | undefined;
        for (let i = 0; i < 50 && !store; i++)
          store = await createRedisCodeStore({ url: conn }).catch(() => sleep(100).then(() => undefined));
        expect(store).toBeDefined();
        const codes = createCodeService({ store: store!, hmacKey: 'sentinel', ttlSeconds: 60, maxAttempts: 3 });
        const code = await codes.issue('sentinel-user', 'email', 's@example.com');
        const direct = new Redis(master.url);
        try {
          expect(await direct.exists('code:{sentinel-user}:email')).toBe(1);
        } finally {
          direct.disconnect();
        }
        expect(await codes.verify('sentinel-user', 'email', code, 's@example.com')).toBe('ok');
        await store!.close();
      } finally {
        sentinel.kill('SIGKILL');
        await master.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
