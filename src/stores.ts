// Chooses the adapters: MongoDB and Redis when their URLs are set, the embedded ones otherwise.
import { loadOrCreateSecret } from './auth/local-key.ts';
import { createCodeService, type CodeService } from './codes/codes.ts';
import { createMemoryCodeStore } from './codes/memory.ts';
import type { CodeStore } from './codes/port.ts';
import { createRedisCodeStore } from './codes/redis.ts';
import { describeRedis } from './redis.ts';
import { redisUnreachable } from './start-errors.ts';
import { createMemoryRateLimiter, createRedisRateLimiter } from './notify/rate-limit.ts';
import type { RateLimiter } from './notify/port.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { ProgressObserver } from './progress.ts';
import { reducers } from './model/reducers.ts';
import { userSearchFields } from './model/users.ts';
import { restrictDataDir } from './data-dir.ts';
import { createSqliteStore } from './store/sqlite.ts';
import type { EventStore } from './store/port.ts';
import { timed, type Observe } from './timed.ts';
import { mongoCommandSpans, type MongoCommandEvent } from './tracing/wrap.ts';
import { tracingOn } from './tracing/spans.ts';

export interface Stores {
  store: EventStore;
  codeStore: CodeStore;
  codes: CodeService;
  rateLimiter: RateLimiter;
  /** The server secret of the code HMACs (CODE_HMAC_KEY or the data folder's), shared by every gateway on one Redis. */
  secretKey: string | Buffer;
  close(): Promise<void>;
}

/** Latency observers, handed in by the server's wiring (src/http/metrics.ts makes them): event store calls, and Redis calls by component. */
export interface StoreInstrumentation {
  store(backend: string): Observe;
  redis(component: string): Observe;
  /** One command sent to MongoDB (the driver's command monitoring). */
  mongoCommand?(command: string): void;
  /** A state document caught up by the MongoDB store's repair loop. */
  stateRepaired?(aggregateType: string): void;
  /** How far long work at start is: an old log's import, the search backfill (src/progress.ts). */
  longWork?: ProgressObserver;
}

/** The MongoDB command listener: the metric's count of commands, and with tracing on a span per command. */
function mongoListener(instrument: StoreInstrumentation | undefined): ((e: MongoCommandEvent) => void) | undefined {
  const count = instrument?.mongoCommand;
  const spans = tracingOn() ? mongoCommandSpans() : undefined;
  if (!count && !spans) return undefined;
  return (e) => {
    if (count && e.phase === 'started') count(e.command);
    spans?.(e);
  };
}

export async function openStores(config: Config, logger: Logger, instrument?: StoreInstrumentation): Promise<Stores> {
  const corrected = await restrictDataDir(config.dataDir);
  if (corrected.length > 0)
    logger.log('warn', 'data folder was readable by others: now owner-only', { dataDir: config.dataDir, corrected: corrected.length });
  const progress = { intervalMs: config.progressIntervalMs, observe: instrument?.longWork };
  let store: EventStore = config.mongodbUrl
    ? // imported only when used: the driver costs memory the embedded quick start does not need
      await (
        await import('./store/mongo.ts')
      ).createMongoStore({
        url: config.mongodbUrl,
        dbName: config.mongodbDb,
        readTimeoutMS: config.mongodbReadTimeoutMs,
        reducers,
        userFields: userSearchFields,
        logger,
        progress,
        onCommand: mongoListener(instrument),
        repair:
          config.storeRepairIntervalMs > 0
            ? {
                intervalMs: config.storeRepairIntervalMs,
                onRepaired: instrument?.stateRepaired && ((type) => instrument.stateRepaired!(type)),
              }
            : false,
      })
    : await createSqliteStore({
        dataDir: config.dataDir,
        reducers,
        userFields: userSearchFields,
        logger,
        progress,
        cacheBytes: config.snapshotCacheMb * 1024 * 1024,
      });
  // One connection attempt each (src/redis.ts: 1.5 s connect timeout); failed, the start stops naming the Redis variable.
  const redis = config.redis;
  const opened: { close(): Promise<void> }[] = [store];
  const reach = async <T extends { close(): Promise<void> }>(open: () => Promise<T>): Promise<T> => {
    try {
      const client = await open();
      opened.push(client);
      return client;
    } catch (err) {
      await Promise.allSettled(opened.map((c) => c.close()));
      throw redis ? redisUnreachable(redis, err) : err;
    }
  };
  let codeStore: CodeStore = redis ? await reach(() => createRedisCodeStore({ url: redis })) : createMemoryCodeStore();
  let rateLimiter: RateLimiter = redis ? await reach(() => createRedisRateLimiter({ url: redis })) : createMemoryRateLimiter();
  if (instrument) {
    store = timed(
      store,
      ['load', 'loadMany', 'catchUp', 'append', 'lookup', 'events', 'eventRange', 'searchUsers', 'countUsers', 'ping'],
      instrument.store(config.mongodbUrl ? 'mongodb' : 'embedded'),
    );
    if (config.redis) {
      codeStore = timed(codeStore, ['put', 'check', 'clear', 'restore', 'ping'], instrument.redis('codes'));
      rateLimiter = timed(rateLimiter, ['hit'], instrument.redis('rate_limit'));
    }
  }
  if (config.redis && !config.codeHmacKey) {
    logger.log('warn', 'CODE_HMAC_KEY is not set: using the key in the data folder; gateways sharing one Redis need the same key');
  }
  const hmacKey = config.codeHmacKey ?? (await loadOrCreateSecret(config.dataDir, 'code-hmac.key'));
  const codes = createCodeService({ store: codeStore, hmacKey, ttlSeconds: config.codeTtlSeconds, maxAttempts: config.codeMaxAttempts });
  logger.log('info', 'stores open', {
    events: config.mongodbUrl ? 'mongodb' : `embedded (${config.dataDir})`,
    codes: config.redis ? describeRedis(config.redis) : 'memory',
  });
  return {
    store,
    codeStore,
    codes,
    rateLimiter,
    secretKey: hmacKey,
    async close() {
      await Promise.allSettled([store.close(), codeStore.close(), rateLimiter.close()]);
    },
  };
}
