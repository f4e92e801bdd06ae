// A worker that dies mid-job, for the queue tests: it takes one job from the
// Redis queue (XREADGROUP), prints its id and hangs without acknowledging it
// until the test kills it with SIGKILL.
//   node --import tsx test/support/queue-taker.ts <redis url> <key prefix>
import { createRedisQueue } from '../../src/notify/redis-queue.ts';

const [url, keyPrefix] = process.argv.slice(2);
const queue = await createRedisQueue({ url: url!, keyPrefix: keyPrefix ?? '', claimIdleMs: 600_000 });
const entry = await queue.consumer(`doomed-${process.pid}`).take(10_000);
process.stdout.write(`${JSON.stringify({ jobId: entry?.jobId ?? null, to: entry?.job.to ?? null })}\n`);
setInterval(() => {}, 60_000);
