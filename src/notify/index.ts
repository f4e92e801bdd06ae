// Chooses how codes go out (docs/configuration.md, Verification mail and SMS):
//   SMTP_HOST set        → mail over SMTP; else mails are only logged (masked, never the code)
//   SMS_WEBHOOK_URL set  → SMS through the webhook; else no SMS job is created (phone changes succeed without an SMS provider)
//   REDIS_URL set        → the Redis stream queue, shared by every gateway and `npm run worker`;
//                          else the in-process queue.
// The notifier only enqueues, with the code sealed (src/notify/seal.ts); startWorker() opens and
// delivers (the gateway starts one unless RUN_WORKER=false).
import { loadOrCreateSecret } from '../auth/local-key.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { createLoggingEmailSender, createSmtpSender } from './email.ts';
import { maskAddress } from './mask.ts';
import type { DeliveryJob, EnqueueOptions, Notifier } from './port.ts';
import { createMemoryQueue, type DeliveryQueue } from './queue.ts';
import { createRedisQueue } from './redis-queue.ts';
import { createCodeSeal, type CodeSeal } from './seal.ts';
import { smsSenderFromConfig } from './sms.ts';
import {
  createDeliveryMetrics,
  startWorker,
  type DeliveryMetrics,
  type DeliveryWorker,
  type Senders,
  type WorkerOptions,
} from './worker.ts';

export interface DeliveryNotifier extends Notifier {
  readonly queue: DeliveryQueue;
  readonly metrics: DeliveryMetrics;
  readonly senders: Senders;
  /** Starts a worker on this queue with these senders; close() stops it. */
  startWorker(options?: Partial<Pick<WorkerOptions, 'name' | 'pollMs'>>): DeliveryWorker;
}

export interface NotifierOptions {
  /** Replace a sender (tests: a channel that always fails). */
  senders?: Senders;
  /** Replace the queue config would choose. */
  queue?: DeliveryQueue;
}

/** The seal of queued codes, keyed from the code HMAC key as src/stores.ts reads it (so every gateway and worker agree). */
async function codeSealFromConfig(config: Config): Promise<CodeSeal> {
  return createCodeSeal(config.codeHmacKey ?? (await loadOrCreateSecret(config.dataDir, 'code-hmac.key')));
}

export async function createNotifier(config: Config, logger: Logger, options: NotifierOptions = {}): Promise<DeliveryNotifier> {
  const senders: Senders = {
    email: options.senders?.email ?? (config.smtp.host ? createSmtpSender(config) : createLoggingEmailSender(logger)),
    sms: options.senders?.sms ?? smsSenderFromConfig(config),
  };
  const { delivery } = config;
  const seal = await codeSealFromConfig(config);
  const queue =
    options.queue ??
    (config.redis
      ? await createRedisQueue({ url: config.redis, keyPrefix: delivery.keyPrefix, claimIdleMs: delivery.claimIdleMs })
      : createMemoryQueue({ claimIdleMs: delivery.claimIdleMs }));
  const metrics = createDeliveryMetrics();
  const workers = new Set<DeliveryWorker>();

  logger.log('info', 'delivery', {
    queue: queue.kind,
    email: config.smtp.host ? `smtp ${config.smtp.host}:${config.smtp.port}` : 'log only (no SMTP_HOST)',
    sms: senders.sms ? 'webhook' : 'none (no SMS_WEBHOOK_URL)',
  });

  return {
    queue,
    metrics,
    senders,

    async enqueue(job: DeliveryJob, opts: EnqueueOptions = {}) {
      const about = { kind: job.kind, userId: job.userId, orgId: job.orgId, to: maskAddress(job.to), urlTemplate: job.urlTemplate };
      if (job.kind === 'verify-phone' && !senders.sms) {
        logger.log('info', 'SMS not queued: no SMS provider configured', about);
        return;
      }
      try {
        const jobId = await queue.enqueue(seal.seal(job));
        metrics.queued++;
        logger.log('info', 'delivery job queued', { ...about, jobId });
      } catch (err) {
        metrics.enqueueFailed++;
        logger.log('error', 'queueing a notification failed; the user can ask for a new code', {
          ...about,
          error: String((err as Error)?.message ?? err),
        });
        if (opts.strict) throw err;
      }
    },

    canDeliver: (channel) => (channel === 'sms' ? !!senders.sms : !!senders.email),

    startWorker(overrides = {}) {
      const worker = startWorker({
        queue,
        seal,
        senders,
        logger,
        metrics,
        maxTries: delivery.maxTries,
        backoffMs: delivery.backoffMs,
        maxBackoffMs: delivery.maxBackoffMs,
        codeTtlMs: config.codeTtlSeconds * 1000,
        secrets: [config.smtp.password, config.sms.webhookToken],
        ...overrides,
      });
      workers.add(worker);
      return worker;
    },

    async close() {
      await Promise.allSettled([...workers].map((w) => w.stop()));
      workers.clear();
      await queue.close();
      await Promise.allSettled([senders.email?.close?.(), senders.sms?.close?.()]);
    },
  };
}
