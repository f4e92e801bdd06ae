// Chooses the adapters: MongoDB and Redis when their URLs are set, the embedded ones otherwise.
import { loadOrCreateSecret } from './auth/local-key.ts';
import { createCodeService, type CodeService } from './codes/codes.ts';
import { createMemoryCodeStore } from './codes/memory.ts';
import type { CodeStore } from './codes/port.ts';
import { createRedisCodeStore } from './codes/redis.ts';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './notify/rate-limit.ts';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { reducers } from './model/reducers.ts';
import { createEmbeddedStore } from './store/embedded.ts';
import { createMongoStore } from './store/mongo.ts';
import type { EventStore } from './store/port.ts';

export interface Stores {
  store: EventStore;
  codeStore: CodeStore;
  codes: CodeService;
  rateLimiter: RateLimiter;
  close(): Promise<void>;
}

export async function openStores(config: Config, logger: Logger): Promise<Stores> {
  const store = config.mongodbUrl
    ? await createMongoStore({ url: config.mongodbUrl, dbName: config.mongodbDb, reducers })
    : await createEmbeddedStore({ dataDir: config.dataDir, reducers });
  const codeStore = config.redisUrl ? await createRedisCodeStore({ url: config.redisUrl }) : createMemoryCodeStore();
  const rateLimiter = config.redisUrl ? await createRedisRateLimiter({ url: config.redisUrl }) : createMemoryRateLimiter();
  if (config.redisUrl && !config.codeHmacKey) {
    logger.log('warn', 'CODE_HMAC_KEY is not set: using the key in the data folder; gateways sharing one Redis need the same key');
  }
  const hmacKey = config.codeHmacKey ?? (await loadOrCreateSecret(config.dataDir, 'code-hmac.key'));
  const codes = createCodeService({ store: codeStore, hmacKey, ttlSeconds: config.codeTtlSeconds, maxAttempts: config.codeMaxAttempts });
  logger.log('info', 'stores open', {
    events: config.mongodbUrl ? 'mongodb' : `embedded (${config.dataDir})`,
    codes: config.redisUrl ? 'redis' : 'memory',
  });
  return {
    store,
    codeStore,
    codes,
    rateLimiter,
    async close() {
      await Promise.allSettled([store.close(), codeStore.close(), rateLimiter.close()]);
    },
  };
}
