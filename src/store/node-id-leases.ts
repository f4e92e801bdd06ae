// Where node-id leases are kept (src/node-ids.ts has the protocol): Redis (one, Cluster or
// Sentinel), here, or a MongoDB collection (node-id-leases-mongo.ts). Both keep, per node id,
// the holder's token, an expiry and the fence `hi` (the highest id timestamp any holder may have used).
import { UnavailableError } from '../errors.ts';
import { closeRedis, failFastRedis, type RedisTarget } from '../redis.ts';

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
    close: () => closeRedis(client),
  };
}
