// Redis CodeStore: one hash per user and channel (hash, address, attempts) with a TTL.
import { failFastRedis, isReplyError, isTransientReply, type RedisTarget } from '../redis.ts';
import { UnavailableError } from '../errors.ts';
import type { CheckResult, CodeChannel, CodeStore } from './port.ts';

export interface RedisCodeStoreOptions {
  /** A redis:// URL or a connection description (one Redis, a Cluster, Sentinel: src/redis.ts). */
  url: RedisTarget;
  /** Prepended to every key; keep braces out of it so the user's hash tag stays the slot key. */
  keyPrefix?: string;
}

// KEYS[1] code key; ARGV hash, address, ttl in ms.
const PUT = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'hash', ARGV[1], 'address', ARGV[2], 'attempts', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// KEYS[1] code key; ARGV hash, maxAttempts. Comparing HMACs, so a plain == leaks nothing useful.
const CHECK = `
local v = redis.call('HMGET', KEYS[1], 'hash', 'address', 'attempts')
local max = tonumber(ARGV[2])
if not v[1] or (tonumber(v[3]) or 0) >= max then return {'missing'} end
if v[1] == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return {'ok', v[2]}
end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts >= max then redis.call('DEL', KEYS[1]) end
return {'wrong', max - attempts}`;

interface Scripts {
  codePut(key: string, hash: string, address: string, ttlMs: number): Promise<unknown>;
  codeCheck(key: string, hash: string, maxAttempts: number): Promise<[string, (string | number)?]>;
}

// Redis's own error replies are bugs or misconfiguration, but those that say "not now"
// (CLUSTERDOWN, LOADING, …); anything else (refused, timed out, dropped, offline) means
// the store is unavailable.
function unavailable(err: unknown): unknown {
  if (isReplyError(err) && !isTransientReply(err)) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new UnavailableError(`code store unavailable: ${detail}`, { cause: err });
}

async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw unavailable(err);
  }
}

export async function createRedisCodeStore(options: RedisCodeStoreOptions): Promise<CodeStore> {
  const prefix = options.keyPrefix ?? '';
  const client = failFastRedis<Scripts>(options.url);
  client.defineCommand('codePut', { numberOfKeys: 1, lua: PUT });
  client.defineCommand('codeCheck', { numberOfKeys: 1, lua: CHECK });

  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw unavailable(err);
  }

  // The braces make the user id the hash tag, so a user's keys share a Cluster slot.
  const key = (userId: string, channel: CodeChannel) => `${prefix}code:{${userId}}:${channel}`;

  return {
    async put(userId, channel, code, ttlSeconds) {
      await guard(() => client.codePut(key(userId, channel), code.hash, code.address, Math.ceil(ttlSeconds * 1000)));
    },

    async check(userId, channel, hash, maxAttempts): Promise<CheckResult> {
      const [status, value] = await guard(() => client.codeCheck(key(userId, channel), hash, maxAttempts));
      if (status === 'ok') return { status, address: String(value) };
      if (status === 'wrong') return { status, attemptsLeft: Number(value) };
      return { status: 'missing' };
    },

    async clear(userId, channel) {
      await guard(() => client.del(key(userId, channel)));
    },

    async ping() {
      await guard(() => client.ping());
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
