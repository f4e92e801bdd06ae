// The node id of generated ids (src/model/ids.ts: 41 bits of time, 10 bits node id, 12 bits
// sequence), leased so that two gateways sharing a store never use the same one at once.
//
// - With Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): one key per node id,
//   `{node-ids}:lease:<n>`, taken with SET NX PX (value: this process's random token),
//   renewed every third of NODE_ID_LEASE_TTL_MS by a compare-and-renew script, deleted by a
//   compare-and-delete script at a graceful stop. Beside it `{node-ids}:hi:<n>` (no expiry,
//   same hash tag, so every script's keys share a Cluster slot) holds the id timestamp fence.
// - Without Redis but with MongoDB: the same in the collection node_id_leases
//   ({_id: n, token, expiresAt, hi}), taken by a conditional upsert (the unique _id refuses a
//   second holder) and renewed by a conditional update.
// - With neither (the embedded store: one gateway process per data folder, which it locks):
//   nothing to share, no lease; GATEWAY_NODE_ID or a random id.
//
// GATEWAY_NODE_ID set: exactly that id is leased; held by another gateway, the start is
// refused. Unset: a free id is taken (the one held before, else a random free one).
//
// The fence `hi` (ms since 1970): a holder issues ids only with timestamps up to the
// ceiling stored in `hi`, which it raises (to about now + TTL) with each renewal, before it
// uses it; the next holder of that id reads `hi` when it takes the lease and issues ids only
// above it. So whatever the clocks say (a new holder whose clock is behind, an old holder
// that has not noticed it lost the lease), no two holders of one node id issue the same id.
// A graceful stop lowers `hi` to the last timestamp really used.
//
// When renewals fail (the store unreachable) for longer than the TTL, the lease is taken
// as lost: no more ids (mutations answer UNAVAILABLE) until a lease is held again; the same
// id if it is still free, else another (not with GATEWAY_NODE_ID: that one only).
import { randomBytes, randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { UnavailableError } from './errors.ts';
import { mongoConcerns } from './store/mongo-shard-keys.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { createIdGenerator, IdLimitError, type IdGenerator } from './model/ids.ts';
import { failFastRedis, type RedisTarget } from './redis.ts';

export const NODE_IDS = 1024;

export interface LeaseTaken {
  /** The fence of the previous holder: ids of this node id must have timestamps above it. */
  after: number;
  /** The highest id timestamp this holder may use until it renews (stored before it is returned). */
  ceiling: number;
}

/** Where leases are kept. Every method throws UnavailableError when the store cannot be reached. */
export interface NodeIdLeaseStore {
  readonly kind: 'redis' | 'mongodb';
  /** Takes node id `id` for ttlMs unless another token holds it (null then); `now` is the caller's clock. */
  acquire(id: number, token: string, ttlMs: number, now: number): Promise<LeaseTaken | null>;
  /** Extends the lease by ttlMs and raises the fence to at least `ceiling`: the fence now stored, or null when the lease is not `token`'s any more. */
  renew(id: number, token: string, ttlMs: number, ceiling: number): Promise<number | null>;
  /** Ends the lease if it is still `token`'s, leaving `highest` (the last timestamp used) as the fence. */
  release(id: number, token: string, highest: number): Promise<void>;
  close(): Promise<void>;
}

export interface NodeIds {
  /** A new id; throws UnavailableError while no lease is held. */
  next(): string;
  /** The node id in use; null while no lease is held. */
  readonly nodeId: number | null;
  /** Where the lease is: 'redis', 'mongodb', or 'none' (a fixed or random id). */
  readonly lease: 'redis' | 'mongodb' | 'none';
  /** Releases the lease (graceful stop); next() answers UNAVAILABLE afterwards. */
  close(): Promise<void>;
}

/** The refusal to start: GATEWAY_NODE_ID is held by another gateway, or every id is. */
export class NodeIdTakenError extends Error {
  override name = 'NodeIdTakenError';
}

export interface LeaseOptions {
  store: NodeIdLeaseStore;
  /** GATEWAY_NODE_ID: lease this one and no other. */
  nodeId?: number;
  ttlMs: number;
  logger?: Logger;
  /** The wall clock of ids and fences (tests). */
  now?: () => number;
}

interface Held {
  id: number;
  gen: IdGenerator;
  after: number;
  ceiling: number;
  /** performance.now() after which the lease may have expired in the store. */
  validUntil: number;
}

/**
 * Leases a node id (one attempt before it returns; a store that cannot be reached leaves the
 * gateway without ids until the background loop gets one). Throws NodeIdTakenError when
 * GATEWAY_NODE_ID is held by another, or no id is free.
 */
export async function leaseNodeId(options: LeaseOptions): Promise<NodeIds> {
  const { store, ttlMs, logger } = options;
  const wall = options.now ?? Date.now;
  const fixed = options.nodeId;
  if (fixed !== undefined && (!Number.isInteger(fixed) || fixed < 0 || fixed >= NODE_IDS)) throw new RangeError('GATEWAY_NODE_ID must be an integer in 0..1023');
  const token = randomBytes(16).toString('base64url');
  const renewEveryMs = Math.max(10, Math.floor(ttlMs / 3));
  const retryMs = Math.max(10, Math.min(1000, Math.floor(ttlMs / 6)));
  let held: Held | null = null;
  let preferred = fixed;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let warned = false;

  /** Takes a lease: `preferred` first, then (without GATEWAY_NODE_ID) any free one, in random order. */
  async function acquire(): Promise<Held> {
    const candidates = fixed !== undefined ? [fixed] : [...(preferred !== undefined ? [preferred] : []), ...shuffled(NODE_IDS).filter((n) => n !== preferred)];
    for (const id of candidates) {
      const sentAt = performance.now();
      const taken = await store.acquire(id, token, ttlMs, wall());
      if (!taken) continue;
      const lease: Held = { id, after: taken.after, ceiling: taken.ceiling, validUntil: sentAt + ttlMs, gen: undefined! };
      lease.gen = createIdGenerator({ nodeId: id, after: taken.after, limit: () => lease.ceiling, now: wall });
      return lease;
    }
    throw new NodeIdTakenError(
      fixed !== undefined
        ? `GATEWAY_NODE_ID=${fixed} is leased by another gateway: give each gateway its own, or leave it unset to lease a free one`
        : `all ${NODE_IDS} node ids are leased by other gateways`,
    );
  }

  function schedule(ms: number) {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tick().catch(() => {}), ms); // failures are logged by step()
    timer.unref();
  }

  function tick(): Promise<void> {
    return (running ??= step().finally(() => (running = undefined)));
  }

  async function step(): Promise<void> {
    if (closed) return;
    if (held) {
      const lease = held;
      const sentAt = performance.now();
      const wanted = Math.max(lease.ceiling, Math.max(wall(), lease.gen.lastTimestamp()) + ttlMs);
      let ceiling: number | null;
      try {
        ceiling = await store.renew(lease.id, token, ttlMs, wanted);
      } catch (err) {
        if (!warned) logger?.log('warn', 'node id lease not renewed; retrying', { nodeId: lease.id, error: String((err as Error)?.message ?? err) });
        warned = true;
        if (performance.now() >= lease.validUntil && held === lease) {
          logger?.log('error', 'node id lease expired: no ids until it is leased again', { nodeId: lease.id });
          held = null;
          preferred = lease.id;
        }
        return schedule(retryMs);
      }
      if (closed || held !== lease) return;
      if (ceiling === null) {
        logger?.log('error', 'node id lease lost: no ids until a node id is leased again', { nodeId: lease.id });
        held = null;
        preferred = lease.id;
        return schedule(0);
      }
      warned = false;
      lease.ceiling = ceiling;
      lease.validUntil = sentAt + ttlMs;
      return schedule(renewEveryMs);
    }
    try {
      const lease = await acquire();
      if (closed) {
        await store.release(lease.id, token, lease.after).catch(() => {});
        return;
      }
      held = lease;
      preferred = lease.id;
      warned = false;
      logger?.log('info', 'node id leased', { nodeId: lease.id, lease: store.kind, ttlMs });
      schedule(renewEveryMs);
    } catch (err) {
      if (!warned) logger?.log(err instanceof NodeIdTakenError ? 'error' : 'warn', 'no node id leased yet; retrying', { error: String((err as Error)?.message ?? err) });
      warned = true;
      schedule(err instanceof NodeIdTakenError ? Math.max(retryMs, renewEveryMs) : retryMs);
      throw err;
    }
  }

  try {
    await tick();
  } catch (err) {
    if (err instanceof NodeIdTakenError) {
      closed = true;
      clearTimeout(timer);
      await store.close().catch(() => {});
      throw err;
    }
    // The store is unreachable: the loop goes on in the background; no ids until it succeeds.
  }

  return {
    get nodeId() {
      return held && performance.now() < held.validUntil ? held.id : null;
    },
    lease: store.kind,
    next() {
      const lease = held;
      if (!lease || performance.now() >= lease.validUntil) throw new UnavailableError('no node id lease held: ids cannot be generated');
      try {
        return lease.gen.next();
      } catch (err) {
        if (!(err instanceof IdLimitError)) throw err;
        schedule(0); // the clock ran past the fence (it jumped ahead): renew now
        throw new UnavailableError('node id lease fence reached: renewing', { cause: err });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      await running?.catch(() => {});
      const lease = held;
      held = null;
      if (lease) {
        try {
          await store.release(lease.id, token, Math.max(lease.after, lease.gen.lastTimestamp()));
          logger?.log('info', 'node id lease released', { nodeId: lease.id });
        } catch {
          // unreachable: the lease expires after its TTL
        }
      }
      await store.close().catch(() => {});
    },
  };
}

/** 0..n-1 in random order. */
function shuffled(n: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** GATEWAY_NODE_ID, or a random id: for a gateway that shares no store with another. */
export function unleasedNodeIds(nodeId?: number): NodeIds {
  const gen = createIdGenerator({ nodeId });
  let closed = false;
  return {
    nodeId: gen.nodeId,
    lease: 'none',
    next() {
      if (closed) throw new UnavailableError('stopping: ids cannot be generated');
      return gen.next();
    },
    async close() {
      closed = true;
    },
  };
}

// --- Redis ---------------------------------------------------------------------------

// KEYS lease, hi; ARGV token, ttl ms, caller's now (ms). Answers {0, pttl} when another holds
// it, else {1, after, ceiling} (as strings: ms timestamps) with the new fence stored.
const ACQUIRE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0, redis.call('PTTL', KEYS[1])} end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local after = tonumber(redis.call('GET', KEYS[2]) or '0')
local ceiling = math.max(after, tonumber(ARGV[3])) + tonumber(ARGV[2])
redis.call('SET', KEYS[2], string.format('%d', ceiling))
return {1, string.format('%d', after), string.format('%d', ceiling)}`;

// KEYS lease, hi; ARGV token, ttl ms, wanted ceiling. Answers the stored fence, or nil when the lease is not the token's.
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local hi = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[3]) > hi then
  redis.call('SET', KEYS[2], ARGV[3])
  return ARGV[3]
end
return string.format('%d', hi)`;

// KEYS lease, hi; ARGV token, highest timestamp used.
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[1])
return 1`;

interface LeaseScripts {
  nodeIdAcquire(lease: string, hi: string, token: string, ttlMs: number, now: number): Promise<[number, string | number, string?]>;
  nodeIdRenew(lease: string, hi: string, token: string, ttlMs: number, ceiling: number): Promise<string | null>;
  nodeIdRelease(lease: string, hi: string, token: string, highest: number): Promise<number>;
}

export async function createRedisLeaseStore(options: { url: RedisTarget; keyPrefix?: string }): Promise<NodeIdLeaseStore> {
  const prefix = options.keyPrefix ?? '';
  if (/[{}]/.test(prefix)) throw new Error('the node-id lease key prefix must not contain { or }');
  const client = failFastRedis<LeaseScripts>(options.url);
  client.defineCommand('nodeIdAcquire', { numberOfKeys: 2, lua: ACQUIRE });
  client.defineCommand('nodeIdRenew', { numberOfKeys: 2, lua: RENEW });
  client.defineCommand('nodeIdRelease', { numberOfKeys: 2, lua: RELEASE });
  const keys = (id: number) => [`${prefix}{node-ids}:lease:${id}`, `${prefix}{node-ids}:hi:${id}`] as const;
  let connecting: Promise<void> | undefined;
  // Connected at the first call, and again by the first call after the client gave up.
  const run = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      if (client.status === 'wait' || client.status === 'end') connecting ??= client.connect().finally(() => (connecting = undefined));
      if (connecting) await connecting;
      return await op();
    } catch (err) {
      throw new UnavailableError(`node-id lease store unavailable: ${(err as Error)?.message ?? err}`, { cause: err });
    }
  };
  return {
    kind: 'redis',
    async acquire(id, token, ttlMs, now) {
      const [ok, after, ceiling] = await run(() => client.nodeIdAcquire(...keys(id), token, ttlMs, Math.floor(now)));
      return Number(ok) === 1 ? { after: Number(after), ceiling: Number(ceiling) } : null;
    },
    async renew(id, token, ttlMs, ceiling) {
      const stored = await run(() => client.nodeIdRenew(...keys(id), token, ttlMs, Math.floor(ceiling)));
      return stored === null ? null : Number(stored);
    },
    async release(id, token, highest) {
      await run(() => client.nodeIdRelease(...keys(id), token, Math.floor(highest)));
    },
    async close() {
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

// --- MongoDB -------------------------------------------------------------------------

interface LeaseDoc {
  _id: number;
  token?: string;
  expiresAt: Date;
  hi: number;
}

export async function createMongoLeaseStore(options: { url: string; dbName: string; collection?: string }): Promise<NodeIdLeaseStore> {
  const { MongoClient, MongoServerError } = await import('mongodb');
  // Majority-acknowledged like the store's writes: a lease rolled back by a failover could be handed out twice.
  const client = new MongoClient(options.url, { serverSelectionTimeoutMS: 2000, maxPoolSize: 2, ...mongoConcerns });
  const leases = client.db(options.dbName).collection<LeaseDoc>(options.collection ?? 'node_id_leases');
  const isDuplicate = (err: unknown) => err instanceof MongoServerError && err.code === 11000;
  const run = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      if (isDuplicate(err)) throw err;
      throw new UnavailableError(`node-id lease store unavailable: ${(err as Error)?.message ?? err}`, { cause: err });
    }
  };
  const renew = (id: number, token: string, ttlMs: number, ceiling: number) =>
    run(async () => {
      // expiresAt by this gateway's clock, as every holder's: the fence keeps ids apart even when clocks disagree.
      const doc = await leases.findOneAndUpdate(
        { _id: id, token },
        { $set: { expiresAt: new Date(Date.now() + ttlMs) }, $max: { hi: Math.floor(ceiling) } },
        { returnDocument: 'after' },
      );
      return doc ? doc.hi : null;
    });
  return {
    kind: 'mongodb',
    async acquire(id, token, ttlMs, now) {
      const wanted = Math.floor(now) + ttlMs;
      let before: LeaseDoc | null;
      try {
        before = await run(() =>
          leases.findOneAndUpdate(
            { _id: id, $or: [{ expiresAt: { $lte: new Date() } }, { token }] },
            { $set: { token, expiresAt: new Date(Date.now() + ttlMs) }, $max: { hi: wanted } },
            { upsert: true, returnDocument: 'before' },
          ),
        );
      } catch (err) {
        if (isDuplicate(err)) return null; // held: the upsert met the existing _id
        throw err;
      }
      const after = before?.hi ?? 0;
      if (after < wanted) return { after, ceiling: wanted };
      // The previous holder's fence is ahead of this clock: make room above it.
      const ceiling = await renew(id, token, ttlMs, after + ttlMs);
      return ceiling === null ? null : { after, ceiling };
    },
    renew,
    async release(id, token, highest) {
      await run(() => leases.updateOne({ _id: id, token }, { $set: { hi: Math.floor(highest), expiresAt: new Date(0) }, $unset: { token: '' } }));
    },
    async close() {
      await client.close().catch(() => {});
    },
  };
}

/**
 * The gateway's ids: leased in Redis when it is configured, else in MongoDB, else not leased
 * (the embedded store allows one gateway process per data folder).
 */
export async function startNodeIds(config: Config, logger: Logger): Promise<NodeIds> {
  const store = config.redis
    ? await createRedisLeaseStore({ url: config.redis })
    : config.mongodbUrl
      ? await createMongoLeaseStore({ url: config.mongodbUrl, dbName: config.mongodbDb })
      : null;
  if (!store) {
    const ids = unleasedNodeIds(config.nodeId);
    logger.log('info', 'node id', { nodeId: ids.nodeId, lease: 'none', how: config.nodeId === undefined ? 'random' : 'GATEWAY_NODE_ID' });
    return ids;
  }
  return leaseNodeId({ store, nodeId: config.nodeId, ttlMs: config.nodeIdLeaseTtlMs, logger });
}
