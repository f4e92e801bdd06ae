// What `npm start` says when it cannot start: one line on stderr naming the setting at fault
// and, for a server, the address it tried (credentials masked); no stack trace, which tells a
// new user nothing they can act on (LOG_LEVEL=debug adds it, for a bug).
import type { RedisConnection } from './redis.ts';
import { describeRedis } from './redis.ts';

/** A start-up failure whose message is the whole story for the operator. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** A connection string with its user and password masked, for a message: `mongodb://***@host/…`. */
export function redactUrl(url: string): string {
  return url.replace(/^((?:[a-z][a-z0-9+.-]*:)?\/\/)?[^/?#\s]*@/i, '$1***@');
}

/** The variable that names this Redis. */
export function redisVariable(redis: RedisConnection): string {
  return redis.kind === 'cluster' ? 'REDIS_CLUSTER_NODES' : redis.kind === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_URL';
}

/** A Redis the start could not connect to. */
export function redisUnreachable(redis: RedisConnection, err: unknown): StartupError {
  return new StartupError(`${redisVariable(redis)}: cannot connect to ${describeRedis(redis)}: ${messageOf(err)}`, { cause: err });
}

/** The message of anything thrown, on one line. */
export function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, ' ').trim() || (err instanceof Error ? err.name : 'unknown error');
}

/**
 * The line `npm start` prints for a failed start. Errors of the MongoDB driver (a connection
 * string it cannot parse, a login it refuses) name MONGODB_URL; a port in use names PORT and HOST.
 */
export function startFailureLine(err: unknown, where: { mongodbUrl?: string; host?: string; port?: number }): string {
  const message = messageOf(err);
  if (err instanceof StartupError) return message;
  if (where.mongodbUrl && err instanceof Error && /^Mongo/.test(err.name)) return `MONGODB_URL: ${redactUrl(where.mongodbUrl)}: ${message}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if ((code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') && where.port !== undefined) {
    return `PORT ${where.port} on HOST ${where.host}: cannot listen: ${message}`;
  }
  return message;
}
