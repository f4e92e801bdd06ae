// One way to open a Redis connection for the gateway: fail fast instead of
// queueing while Redis is away (a mutation must answer UNAVAILABLE, not hang),
// and reconnect in the background. The same for one Redis (REDIS_URL), a Redis
// Cluster (REDIS_CLUSTER_NODES) and a Sentinel-watched master (REDIS_SENTINELS).
//
// Cluster: every key the gateway writes is alone in its command or shares a hash
// tag with the other keys of its command, script or MULTI (codes: {userId}; the
// delivery queue: {delivery}; node-id leases: {node-ids}; rate limits and
// idempotency records: one key per call), and nothing lists keys (no KEYS, no
// SCAN), so every call goes to one node. MOVED/ASK are followed by ioredis; a
// script unknown to a node (NOSCRIPT, e.g. after a failover) is sent again as EVAL.
import { createRequire } from 'node:module';
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { traceRedisCommands } from './tracing/wrap.ts';

// Loaded at the first Redis connection: a gateway on its embedded stores never holds ioredis.
let ioredisModule: typeof import('ioredis') | undefined;
const ioredis = () => (ioredisModule ??= createRequire(import.meta.url)('ioredis') as typeof import('ioredis'));

/** An error reply of Redis (ioredis's ReplyError); only asked of errors from a Redis call, so ioredis is loaded. */
export const isReplyError = (err: unknown): err is Error => err instanceof ioredis().ReplyError;

export interface RedisNode {
  host: string;
  port: number;
}

/** Credentials and TLS, for the nodes of a Cluster or a Sentinel-watched master (with REDIS_URL, the URL's own win). */
export interface RedisAuth {
  username?: string;
  password?: string;
  /** TLS to every node, verified against the system's CAs (and NODE_EXTRA_CA_CERTS). */
  tls?: boolean;
}

/** Where the gateway's Redis is (src/config.ts reads it from the environment). */
export type RedisConnection =
  | ({ kind: 'single'; url: string } & RedisAuth)
  | ({ kind: 'cluster'; nodes: RedisNode[] } & RedisAuth)
  | ({ kind: 'sentinel'; sentinels: RedisNode[]; name: string; sentinelPassword?: string } & RedisAuth);

/** A redis:// (rediss://) URL, or a connection description. */
export type RedisTarget = string | RedisConnection;

/**
 * A Redis or Cluster client. Typed as the single-node client: every command the gateway
 * sends (and connect, quit, disconnect, status, defineCommand, multi, call) is the same on both.
 */
export type RedisClient = Redis;

export const failFastRedisOptions: RedisOptions = {
  lazyConnect: true,
  connectTimeout: 1500,
  commandTimeout: 1500,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  retryStrategy: (times) => Math.min(times * 100, 1000),
};

/**
 * A Redis error reply that means "not now" rather than a bug: the cluster is down or
 * resharding (CLUSTERDOWN, TRYAGAIN), a node is loading its data after a restart (LOADING),
 * a failover is under way (MASTERDOWN, READONLY from a demoted master).
 */
export function isTransientReply(err: unknown): boolean {
  return err instanceof Error && /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|READONLY)\b/.test(err.message);
}

/** For logs: where Redis is, without credentials. */
export function describeRedis(target: RedisTarget): string {
  const c: RedisConnection = typeof target === 'string' ? { kind: 'single', url: target } : target;
  const tls = c.tls ? ' (TLS)' : '';
  if (c.kind === 'single') return `Redis ${c.url.replace(/\/\/[^@/]*@/, '//***@')}${tls}`;
  if (c.kind === 'cluster') return `Redis Cluster, seeds ${c.nodes.map((n) => `${n.host}:${n.port}`).join(',')}${tls}`;
  return `Redis Sentinel "${c.name}", sentinels ${c.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}${tls}`;
}

function authOptions(c: RedisAuth): RedisOptions {
  return {
    ...(c.username !== undefined && { username: c.username }),
    ...(c.password !== undefined && { password: c.password }),
    ...(c.tls && { tls: {} }),
  };
}

/** Closes the clients: QUIT (what was sent is answered first), or a hard disconnect when that fails. */
export async function closeRedis(...clients: RedisClient[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      try {
        await c.quit();
      } catch {
        c.disconnect();
      }
    }),
  );
}

/**
 * A client with failFastRedisOptions (plus `extra`), not yet connected; errors surface per call.
 * For a Cluster: the same options for each node's connection; commands are refused at once
 * while the cluster client is not ready (no offline queue), a node's connection is not
 * retried by itself (a command that meets a dead node asks the others for the slot map again
 * and is retried a few times; with autoResendUnfulfilledCommands: false, never once its caller
 * has given up on it), and the cluster client reconnects in the background when every node was lost.
 */
export function failFastRedis<T = object>(target: RedisTarget, extra: RedisOptions = {}): RedisClient & T {
  const c: RedisConnection = typeof target === 'string' ? { kind: 'single', url: target } : target;
  let client: Redis | Cluster;
  if (c.kind === 'single') {
    // The URL's own credentials and scheme win over REDIS_USERNAME / REDIS_PASSWORD / REDIS_TLS.
    client = new (ioredis().Redis)(c.url, { ...failFastRedisOptions, ...authOptions(c), ...extra });
  } else if (c.kind === 'sentinel') {
    client = new (ioredis().Redis)({
      ...failFastRedisOptions,
      ...authOptions(c),
      sentinels: c.sentinels,
      name: c.name,
      ...(c.sentinelPassword !== undefined && { sentinelPassword: c.sentinelPassword }),
      ...(c.tls && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
      sentinelRetryStrategy: (times) => Math.min(times * 100, 1000),
      ...extra,
    });
  } else {
    // Node connections are made by the cluster client with these (TLS: servername = each node's host);
    // it decides their reconnecting and queueing itself.
    const nodeOptions: RedisOptions = { ...failFastRedisOptions, ...authOptions(c), ...extra };
    const noResend = extra.autoResendUnfulfilledCommands === false;
    delete nodeOptions.retryStrategy;
    delete nodeOptions.enableOfflineQueue;
    delete nodeOptions.lazyConnect;
    const options: ClusterOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      // The cluster client's own reconnect (every node lost): as a single client's.
      clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
      // Asking a node for the slot map: the same bound as a command.
      slotsRefreshTimeout: nodeOptions.commandTimeout ?? 1500,
      redisOptions: nodeOptions,
      // After a node went away, or while its connection is not ready yet, a command for its
      // slots is retried on the refreshed map every 100 ms, bounded by maxRedirections (not by
      // the command's timeout: see below).
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      maxRedirections: 16,
    };
    const cluster = new (ioredis().Cluster)(c.nodes, options);
    if (noResend) {
      // The cluster client goes on retrying a command after its caller has given up on it
      // (command timeout): a client that must never send a command again has every node skip
      // a command that is already settled.
      cluster.on('+node', (node: Redis) => {
        const send = node.sendCommand.bind(node);
        node.sendCommand = ((command, stream) => (command.isSettled ? command.promise : send(command, stream))) as Redis['sendCommand'];
      });
    }
    // Cluster#connect() never settles when the slot map came but CLUSTER INFO says
    // cluster_state:fail (it reconnects in the background instead): bound it.
    const connect = cluster.connect.bind(cluster);
    const bound = nodeOptions.connectTimeout ?? 1500;
    cluster.connect = () =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Redis Cluster not ready within ${bound * 2} ms (${cluster.status})`)), bound * 2);
        timer.unref?.();
        connect().then(
          () => (clearTimeout(timer), resolve()),
          (err: unknown) => (clearTimeout(timer), reject(err)),
        );
      });
    client = cluster;
  }
  // Surfaced per call; the default handler only logs. The last one is kept for a failed connect,
  // whose own error ("Connection is closed.") does not say why (refused, unknown host, timeout).
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  const connect = client.connect.bind(client);
  client.connect = (() =>
    connect().catch((err: unknown) => {
      const why = lastError && lastError !== err && lastError.message !== (err as Error)?.message ? lastError.message : undefined;
      throw why ? new Error(`${(err as Error)?.message ?? err} (${why})`, { cause: err }) : err;
    })) as typeof client.connect;
  // With tracing on, every command of every client is a span (its name only).
  return traceRedisCommands(client) as unknown as RedisClient & T;
}
