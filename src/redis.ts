// One way to open a Redis connection for the gateway: fail fast instead of
// queueing while Redis is away (a mutation must answer UNAVAILABLE, not hang),
// and reconnect in the background.
import { Redis, type RedisOptions } from 'ioredis';

export const failFastRedisOptions: RedisOptions = {
  lazyConnect: true,
  connectTimeout: 1500,
  commandTimeout: 1500,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  retryStrategy: (times) => Math.min(times * 100, 1000),
};

/** A client with failFastRedisOptions (plus `extra`), not yet connected; errors surface per call. */
export function failFastRedis<T = Redis>(url: string, extra: RedisOptions = {}): Redis & T {
  const client = new Redis(url, { ...failFastRedisOptions, ...extra });
  client.on('error', () => {}); // surfaced per call; the default handler only logs
  return client as Redis & T;
}
