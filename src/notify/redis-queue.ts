// The delivery queue in Redis: a stream read by a consumer group, so several
// workers (in gateways or `npm run worker`) share the jobs.
//
//   {delivery}:jobs     stream; field `payload` = JSON {job, jobId, attempts, enqueuedAt, lastError}
//                       (the job's code is sealed, never in clear: src/notify/seal.ts)
//   {delivery}:delayed  sorted set of retries: member = payload JSON, score = not-before time (ms)
//   {delivery}:dead     stream of dead letters (no clear code), capped at about 10000
//
// - enqueue: XADD to the stream.
// - take: moves retries whose time has come from the sorted set back to the
//   stream (one Lua script, so two workers cannot move one twice), claims an
//   entry another consumer left idle longer than claimIdleMs (XAUTOCLAIM), or
//   reads a new one (XREADGROUP … BLOCK on the consumer's own connection).
// - ack: XACK then XDEL in one MULTI: the entry is gone.
// - retry: XACK + XDEL + ZADD at Redis TIME + delay (one Lua script); the
//   waiting job keeps its sealed code in the sorted set until it is sent or dead.
// - deadLetter: XACK + XDEL + XADD of the code-less dead letter (one script).
// retry and deadLetter do nothing when XACK finds the entry already settled
// by a consumer that claimed it meanwhile.
//
// Retry times use Redis's clock (TIME), so gateways with skewed clocks agree.
// The braces make "delivery" the hash tag: all three keys share a Cluster slot,
// as the scripts need. With AOF on (appendonly yes), queued jobs survive a
// Redis restart; appendfsync always loses none even on a crash.
import { closeRedis, failFastRedis, isReplyError, type RedisClient, type RedisTarget } from '../redis.ts';
import type { SealedDeliveryJob } from './port.ts';
import { deadLetterOf, type DeadLetter, type DeliveryQueue, type QueueConsumer, type QueuedJob } from './queue.ts';

export interface RedisQueueOptions {
  /** A redis:// URL or a connection description (src/redis.ts). */
  url: RedisTarget;
  /** Prepended to every key; no braces in it (the hash tag must stay "delivery"). */
  keyPrefix?: string;
  claimIdleMs: number;
  /** Longest a take blocks on Redis (the wait is also cut short by a due retry). */
  maxBlockMs?: number;
  maxDeadLetters?: number;
}

const GROUP = 'workers';

// KEYS delayed, jobs; ARGV max. Answers ms until the next retry is due, or -1.
const PROMOTE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, m in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'payload', m)
  redis.call('ZREM', KEYS[1], m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nxt[2] then return tonumber(nxt[2]) - now end
return -1`;

// KEYS jobs, delayed; ARGV group, entry id, delay ms, payload.
const RETRY = `
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[4])
return 1`;

// KEYS jobs, dead; ARGV group, entry id, dead letter JSON, max dead letters.
const DEAD = `
if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'letter', ARGV[3])
return 1`;

// KEYS[1] jobs; ARGV group, consumer. Forgets the consumer only if it holds nothing, in one
// step: between a separate look and the delete, a claim of the consumer's in-flight take could
// land, and the delete would drop that job from the pending list for good.
const FORGET = `
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1`;

interface Scripts {
  deliveryForget(jobs: string, group: string, consumer: string): Promise<number>;
  deliveryPromote(delayed: string, jobs: string, max: number): Promise<number>;
  deliveryRetry(jobs: string, delayed: string, group: string, id: string, delayMs: number, payload: string): Promise<number>;
  deliveryDead(jobs: string, dead: string, group: string, id: string, letter: string, max: number): Promise<number>;
}

interface Payload {
  job: SealedDeliveryJob;
  jobId?: string;
  attempts: number;
  enqueuedAt: number;
  lastError?: string;
}

type StreamEntry = [id: string, fields: string[]];

function fieldOf(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function parseEntry([id, fields]: StreamEntry): QueuedJob | null {
  try {
    const p = JSON.parse(fieldOf(fields, 'payload') ?? '') as Payload;
    if (!p?.job?.kind || typeof p.job.to !== 'string') return null;
    // Only the known fields: a clear `code` queued by an older version is not
    // carried into a retry. A missing or broken seal is the worker's to dead-letter.
    const { kind, userId, orgId, to, urlTemplate, sealedCode } = p.job;
    const job: SealedDeliveryJob = { kind, userId, orgId, to, sealedCode, ...(urlTemplate !== undefined && { urlTemplate }) };
    return {
      entryId: id,
      jobId: p.jobId ?? id,
      job,
      attempts: p.attempts ?? 0,
      enqueuedAt: p.enqueuedAt ?? Date.now(),
      lastError: p.lastError,
    };
  } catch {
    return null;
  }
}

const replyMatches = (err: unknown, pattern: RegExp) => isReplyError(err) && pattern.test(err.message);
const isNoGroup = (err: unknown) => replyMatches(err, /NOGROUP/);

/** What the queue's consumers share: the command connection, the keys, the settings. */
interface Shared {
  url: RedisTarget;
  client: RedisClient & Scripts;
  keys: { jobs: string; delayed: string; dead: string };
  claimIdleMs: number;
  maxBlockMs: number;
  maxDead: number;
  consumers: Set<QueueConsumer>;
  withGroup<T>(op: () => Promise<T>): Promise<T>;
  settleAndDrop(id: string): Promise<void>;
}

/** One consumer of the group: its own reader connection (a blocked XREADGROUP holds it), the rest shared. */
function createConsumer(shared: Shared, name: string): QueueConsumer {
  const { client, keys, consumers, withGroup, settleAndDrop } = shared;
  // XREADGROUP … BLOCK holds its connection: each consumer has its own.
  const reader = failFastRedis(shared.url, {
    protocol: 2,
    commandTimeout: shared.maxBlockMs + 3000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  });
  let connecting: Promise<void> | undefined;
  let closed = false;
  let claimCursor = '0-0';

  const connected = async () => {
    if (reader.status === 'ready') return;
    if (reader.status === 'wait') connecting ??= reader.connect().finally(() => (connecting = undefined));
    if (connecting) return connecting;
    throw new Error(`delivery queue reader is ${reader.status}`);
  };

  /** An entry another consumer left idle longer than claimIdleMs, or null. */
  async function claim(): Promise<QueuedJob | null> {
    // COUNT 1 looks at up to 10 pending entries per call; walk at most 100 per take.
    for (let pages = 0; pages < 10; pages++) {
      const [cursor, entries] = (await withGroup(() =>
        client.call('XAUTOCLAIM', keys.jobs, GROUP, name, shared.claimIdleMs, claimCursor, 'COUNT', 1),
      )) as [string, (StreamEntry | null)[]];
      claimCursor = cursor;
      for (const e of entries ?? []) {
        if (!e) continue;
        const entry = Array.isArray(e[1]) ? parseEntry(e) : null;
        if (entry) return entry;
        await settleAndDrop(e[0]); // deleted meanwhile (Redis 6.2) or unreadable: nothing to deliver
      }
      if (cursor === '0-0') return null;
    }
    return null;
  }

  const consumer: QueueConsumer = {
    name,
    async take(blockMs) {
      if (closed) return null;
      const untilDue = Number(await client.deliveryPromote(keys.delayed, keys.jobs, 100));
      const claimed = await claim();
      if (claimed) return claimed;
      await connected();
      const block = Math.max(10, Math.min(blockMs, shared.maxBlockMs, untilDue >= 0 ? untilDue : Infinity));
      const res = (await withGroup(() =>
        reader.call('XREADGROUP', 'GROUP', GROUP, name, 'COUNT', 1, 'BLOCK', Math.ceil(block), 'STREAMS', keys.jobs, '>'),
      )) as [string, StreamEntry[]][] | null;
      const e = res?.[0]?.[1]?.[0];
      if (!e) return null;
      const entry = parseEntry(e);
      if (!entry) await settleAndDrop(e[0]);
      return entry;
    },
    async ack(entry) {
      await settleAndDrop(entry.entryId);
    },
    async retry(entry, delayMs, error) {
      const payload: Payload = {
        job: entry.job,
        jobId: entry.jobId,
        attempts: entry.attempts + 1,
        enqueuedAt: entry.enqueuedAt,
        lastError: error,
      };
      await client.deliveryRetry(keys.jobs, keys.delayed, GROUP, entry.entryId, Math.max(0, Math.round(delayMs)), JSON.stringify(payload));
    },
    async deadLetter(entry, error) {
      await client.deliveryDead(keys.jobs, keys.dead, GROUP, entry.entryId, JSON.stringify(deadLetterOf(entry, error)), shared.maxDead);
    },
    async close() {
      if (closed) return;
      closed = true;
      consumers.delete(consumer);
      reader.disconnect(); // ends a blocked XREADGROUP
      // A consumer that holds nothing is forgotten by the group; one that
      // holds entries stays until another consumer has claimed them.
      try {
        await client.deliveryForget(keys.jobs, GROUP, name);
      } catch {
        // Redis away: the entry stays, harmless
      }
    },
  };
  consumers.add(consumer);
  return consumer;
}

export async function createRedisQueue(options: RedisQueueOptions): Promise<DeliveryQueue> {
  const prefix = options.keyPrefix ?? '';
  const keys = { jobs: `${prefix}{delivery}:jobs`, delayed: `${prefix}{delivery}:delayed`, dead: `${prefix}{delivery}:dead` };
  const maxBlockMs = options.maxBlockMs ?? 1000;
  const maxDead = options.maxDeadLetters ?? 10_000;
  // Commands fail fast while Redis is away (a mutation's enqueue must not hang);
  // the client reconnects by itself.
  // RESP2 replies: XREADGROUP answers [[stream, entries]] (RESP3 would make it a map).
  const client = failFastRedis<Scripts>(options.url, { protocol: 2 });
  // Enqueues on a connection that never sends a command again after a reconnect: an XADD cut
  // off there was reported failed to its mutation, and a resent one would queue a mail the
  // caller was told did not go (or a second one when only the answer was lost). Acks and
  // retries go on `client`, which does resend: losing one would deliver the job twice.
  const producer = failFastRedis(options.url, { protocol: 2, autoResendUnfulfilledCommands: false });
  client.defineCommand('deliveryPromote', { numberOfKeys: 2, lua: PROMOTE });
  client.defineCommand('deliveryRetry', { numberOfKeys: 2, lua: RETRY });
  client.defineCommand('deliveryDead', { numberOfKeys: 2, lua: DEAD });
  client.defineCommand('deliveryForget', { numberOfKeys: 1, lua: FORGET });
  try {
    await Promise.all([client.connect(), producer.connect()]);
  } catch (err) {
    client.disconnect();
    producer.disconnect();
    throw err;
  }
  const consumers = new Set<QueueConsumer>();

  async function ensureGroup() {
    try {
      // From 0: jobs added before the group existed (or after Redis lost it) are read too.
      await client.xgroup('CREATE', keys.jobs, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!replyMatches(err, /BUSYGROUP/)) throw err;
    }
  }
  await ensureGroup();

  /** Runs op; when Redis lost the group (restarted without persistence), creates it again and retries once. */
  async function withGroup<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!isNoGroup(err)) throw err;
      await ensureGroup();
      return op();
    }
  }

  async function settleAndDrop(id: string) {
    await client.multi().xack(keys.jobs, GROUP, id).xdel(keys.jobs, id).exec();
  }
  const shared: Shared = {
    url: options.url,
    client,
    keys,
    claimIdleMs: options.claimIdleMs,
    maxBlockMs,
    maxDead,
    consumers,
    withGroup,
    settleAndDrop,
  };

  return {
    kind: 'redis',

    async enqueue(job) {
      const payload: Payload = { job, attempts: 0, enqueuedAt: Date.now() };
      return (await producer.xadd(keys.jobs, '*', 'payload', JSON.stringify(payload)))!;
    },

    consumer: (name) => createConsumer(shared, name),

    async deadLetters(limit = 100) {
      const entries = (await client.xrevrange(keys.dead, '+', '-', 'COUNT', limit)) as StreamEntry[];
      return entries.flatMap(([, fields]) => {
        try {
          return [JSON.parse(fieldOf(fields, 'letter') ?? '') as DeadLetter];
        } catch {
          return [];
        }
      });
    },

    async depth() {
      const [queued, delayed, deadLettered, pending] = await Promise.all([
        client.xlen(keys.jobs),
        client.zcard(keys.delayed),
        client.xlen(keys.dead),
        withGroup(() => client.call('XPENDING', keys.jobs, GROUP)).then((r) => Number((r as unknown[])[0] ?? 0)),
      ]);
      return { queued, pending, delayed, deadLettered };
    },

    async close() {
      await Promise.allSettled([...consumers].map((c) => c.close()));
      await closeRedis(client, producer);
    },
  };
}
