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
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { createIdGenerator, IdLimitError, type IdGenerator } from './model/ids.ts';
import { createRedisLeaseStore, type NodeIdLeaseStore } from './store/node-id-leases.ts';

export const NODE_IDS = 1024;

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

/** Takes a lease: `preferred` first, then (without GATEWAY_NODE_ID) any free one, in random order. */
async function acquire(
  store: NodeIdLeaseStore,
  { token, ttlMs, wall, fixed, preferred }: { token: string; ttlMs: number; wall: () => number; fixed?: number; preferred?: number },
): Promise<Held> {
  const candidates =
    fixed !== undefined ? [fixed] : [...(preferred !== undefined ? [preferred] : []), ...shuffled(NODE_IDS).filter((n) => n !== preferred)];
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

/** A new id under `lease`; UNAVAILABLE without one, or past its fence (then `renewNow`). */
function nextId(lease: Held | null, renewNow: () => void): string {
  if (!lease || performance.now() >= lease.validUntil) throw new UnavailableError('no node id lease held: ids cannot be generated');
  try {
    return lease.gen.next();
  } catch (err) {
    if (!(err instanceof IdLimitError)) throw err;
    renewNow(); // the clock ran past the fence (it jumped ahead)
    throw new UnavailableError('node id lease fence reached: renewing', { cause: err });
  }
}

/** Gives the lease back at a graceful stop, its fence lowered to the last timestamp used. */
async function release(store: NodeIdLeaseStore, lease: Held, token: string, logger: Logger | undefined): Promise<void> {
  try {
    await store.release(lease.id, token, Math.max(lease.after, lease.gen.lastTimestamp()));
    logger?.log('info', 'node id lease released', { nodeId: lease.id });
  } catch {
    // unreachable: the lease expires after its TTL
  }
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
  if (fixed !== undefined && (!Number.isInteger(fixed) || fixed < 0 || fixed >= NODE_IDS))
    throw new RangeError('GATEWAY_NODE_ID must be an integer in 0..1023');
  const token = randomBytes(16).toString('base64url');
  const renewEveryMs = Math.max(10, Math.floor(ttlMs / 3));
  const retryMs = Math.max(10, Math.min(1000, Math.floor(ttlMs / 6)));
  let held: Held | null = null;
  let preferred = fixed;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let warned = false;

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
        if (!warned)
          logger?.log('warn', 'node id lease not renewed; retrying', { nodeId: lease.id, error: String((err as Error)?.message ?? err) });
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
      const lease = await acquire(store, { token, ttlMs, wall, fixed, preferred });
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
      if (!warned)
        logger?.log(err instanceof NodeIdTakenError ? 'error' : 'warn', 'no node id leased yet; retrying', {
          error: String((err as Error)?.message ?? err),
        });
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
    next: () => nextId(held, () => schedule(0)),
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      await running?.catch(() => {});
      const lease = held;
      held = null;
      if (lease) await release(store, lease, token, logger);
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

/**
 * The gateway's ids: leased in Redis when it is configured, else in MongoDB, else not leased
 * (the embedded store allows one gateway process per data folder).
 */
export async function startNodeIds(config: Config, logger: Logger): Promise<NodeIds> {
  const store = config.redis
    ? await createRedisLeaseStore({ url: config.redis })
    : config.mongodbUrl
      ? // Its own module: the MongoDB driver loads only when MongoDB holds the leases.
        await (await import('./store/node-id-leases-mongo.ts')).createMongoLeaseStore({ url: config.mongodbUrl, dbName: config.mongodbDb })
      : null;
  if (!store) {
    const ids = unleasedNodeIds(config.nodeId);
    logger.log('info', 'node id', { nodeId: ids.nodeId, lease: 'none', how: config.nodeId === undefined ? 'random' : 'GATEWAY_NODE_ID' });
    return ids;
  }
  return leaseNodeId({ store, nodeId: config.nodeId, ttlMs: config.nodeIdLeaseTtlMs, logger });
}
