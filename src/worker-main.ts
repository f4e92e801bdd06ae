// `npm run worker`: a delivery worker alone, against the Redis queue of REDIS_URL.
// Run as many as needed; each takes its own jobs, and one that dies leaves its
// job in hand to be claimed by another after DELIVERY_CLAIM_IDLE_MS.
// Gateways may then run with RUN_WORKER=false. Workers need the gateways'
// CODE_HMAC_KEY: the queued codes are sealed under a key derived from it.
import { loadConfig } from './config.ts';
import { createLogger, logFormatFor } from './log.ts';
import { createNotifier } from './notify/index.ts';
import { describeRedis } from './redis.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel, undefined, undefined, logFormatFor(config.logFormat, config.production));
if (!config.redis) {
  process.stderr.write(
    'npm run worker needs REDIS_URL (or REDIS_CLUSTER_NODES, REDIS_SENTINELS): without it the queue lives inside the gateway process, whose own worker delivers.\n',
  );
  process.exit(2);
}
if (!config.codeHmacKey) {
  logger.log(
    'warn',
    "CODE_HMAC_KEY is not set: using the key in the data folder; it must be the gateways' key, or their jobs are dead-lettered unsent",
  );
}

const delivery = await createNotifier(config, logger);
const worker = delivery.startWorker();
process.stdout.write(`Delivery worker ${worker.name} on ${describeRedis(config.redis)}\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    delivery.close().then(
      () => {
        logger.log('info', 'delivery worker metrics', { ...delivery.metrics });
        process.exit(0);
      },
      () => process.exit(1),
    );
  });
}
