// A sliding-window rate limiter: at most `limit` hits per key within `windowMs`.
// Redis (shared by every gateway) when REDIS_URL is set, memory otherwise.
import { closeRedis, failFastRedis, type RedisTarget } from '../redis.ts';
import { UnavailableError } from '../errors.ts';
import type { RateLimiter } from './port.ts';

export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const hits = new Map<string, number[]>();
  let calls = 0;
  return {
    async hit(key, limit, windowMs) {
      const t = now();
      const inWindow = (hits.get(key) ?? []).filter((at) => at > t - windowMs);
      // Now and then forget keys whose window has passed.
      if (++calls % 1000 === 0) for (const [k, v] of hits) if (!v.some((at) => at > t - windowMs)) hits.delete(k);
      if (inWindow.length >= limit) {
        hits.set(key, inWindow);
        return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, inWindow[0]! + windowMs - t) };
      }
      inWindow.push(t);
      hits.set(key, inWindow);
      return { allowed: true, remaining: limit - inWindow.length, retryAfterMs: 0 };
    },
    async close() {
      hits.clear();
    },
  };
}

// KEYS[1] sorted set of hit times; ARGV limit, window ms, unique member suffix.
// Answers {1, remaining, 0} or {0, 0, retry after ms}. Uses Redis's clock.
const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = tonumber(oldest[2]) + window - now
  if wait < 1 then wait = 1 end
  return {0, 0, wait}
end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, limit - n - 1, 0}`;

export interface RedisRateLimiterOptions {
  /** A redis:// URL or a connection description (src/redis.ts). */
  url: RedisTarget;
  keyPrefix?: string;
}

export async function createRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RateLimiter> {
  const prefix = options.keyPrefix ?? '';
  // A hit cut off by a dropped connection is not sent again after the reconnect: its caller has
  // moved on (let through), and a resent hit would count the request twice.
  const client = failFastRedis<{
    rateHit(key: string, limit: number, windowMs: number, member: string): Promise<[number, number, number]>;
  }>(options.url, {
    autoResendUnfulfilledCommands: false,
  });
  client.defineCommand('rateHit', { numberOfKeys: 1, lua: HIT });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new UnavailableError(`rate limiter unavailable: ${(err as Error).message}`, { cause: err });
  }
  let seq = 0;
  const tag = Math.random().toString(36).slice(2, 8);
  return {
    async hit(key, limit, windowMs) {
      let res: [number, number, number];
      try {
        res = await client.rateHit(`${prefix}rate:${key}`, limit, windowMs, `${tag}${seq++}`);
      } catch (err) {
        throw new UnavailableError(`rate limiter unavailable: ${(err as Error).message}`, { cause: err });
      }
      const [allowed, remaining, retryAfterMs] = res.map(Number) as [number, number, number];
      return { allowed: allowed === 1, remaining, retryAfterMs };
    },
    close: () => closeRedis(client),
  };
}
