// The delivery worker: takes jobs from the queue, sends them, acknowledges
// only after a successful send, retries with exponential backoff and
// dead-letters a job after maxTries. It runs in the gateway process by default
// and alone with `npm run worker`; any number may share one Redis queue.
// Jobs are queued with their code sealed; the worker opens it only to send, and
// a job whose seal does not open is dead-lettered unsent.
import { hostname } from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../log.ts';
import { maskAddress } from './mask.ts';
import type { DeliveryJob } from './port.ts';
import type { DeliveryQueue, QueuedJob } from './queue.ts';
import type { CodeSeal } from './seal.ts';

/** Sends one job over one channel; throws when it did not go out. */
export interface Sender {
  /**
   * `deliveryId` names the job whatever the try or the worker (the queue's job id, hashed):
   * a second send of one job, after a worker died between sending and acknowledging, is
   * recognisably the same message (mail: its Message-ID; SMS: the webhook's Idempotency-Key).
   */
  send(job: DeliveryJob, deliveryId: string): Promise<void>;
  close?(): Promise<void>;
}

/** A job's delivery id: its queue id with what it is about, hashed (the queue id is a time; the code is left out: relays log Message-IDs). */
export function deliveryId(jobId: string, job: DeliveryJob): string {
  return createHash('sha256').update(`${jobId}\n${job.kind}\n${job.userId}\n${job.orgId}\n${job.to}`).digest('base64url').slice(0, 32);
}

export interface Senders {
  email?: Sender;
  sms?: Sender;
}

/** A failure no retry can fix (e.g. an unrenderable link template): dead-lettered at once. */
export class PermanentDeliveryError extends Error {
  override name = 'PermanentDeliveryError';
}

/**
 * Counters since the process started, for the operator (issue 6 exports them
 * to Prometheus): queued counts enqueues by this process, the others count
 * what this process's workers did.
 */
export interface DeliveryMetrics {
  queued: number;
  /** Jobs that could not be queued (Redis unreachable); their mutation still succeeded. */
  enqueueFailed: number;
  sent: number;
  retried: number;
  deadLettered: number;
}

export const createDeliveryMetrics = (): DeliveryMetrics => ({ queued: 0, enqueueFailed: 0, sent: 0, retried: 0, deadLettered: 0 });

export interface WorkerOptions {
  queue: DeliveryQueue;
  /** Opens the jobs' codes: the same key as the gateways that queue them. */
  seal: CodeSeal;
  senders: Senders;
  logger: Logger;
  metrics: DeliveryMetrics;
  /** Tries in all, the first included. */
  maxTries: number;
  /** Wait before the second try; doubled for each further one. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Jobs older than this are dead-lettered unsent: their code has expired. */
  codeTtlMs?: number;
  /** Consumer name; unique per worker (host, pid, random by default). */
  name?: string;
  /** Longest wait for a job before looking again (claims, retries, stop). */
  pollMs?: number;
  /** Strings never to appear in a log line or dead letter (SMTP password, webhook token). */
  secrets?: (string | undefined)[];
}

export interface DeliveryWorker {
  readonly name: string;
  /** Finishes the job in hand, then stops taking jobs. */
  stop(): Promise<void>;
}

/** Delay before try number `tries + 1`, after `tries` failed ones: backoffMs · 2^(tries−1), capped. */
export function backoffDelay(tries: number, backoffMs: number, maxBackoffMs: number): number {
  return Math.min(maxBackoffMs, backoffMs * 2 ** Math.max(0, tries - 1));
}

export const workerName = (suffix = '') => `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}${suffix}`;

function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  return out.length > 500 ? `${out.slice(0, 500)}…` : out;
}

/** A sleep that wake() ends early (a stop does not wait out the backoff). */
function wakeableSleep(): { sleep: (ms: number) => Promise<void>; wake: () => void } {
  let wakeSleep: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeSleep = undefined;
        resolve();
      }
      wakeSleep = done;
    });
  return { sleep, wake: () => wakeSleep?.() };
}

export function startWorker(options: WorkerOptions): DeliveryWorker {
  const { queue, seal, senders, logger, metrics, maxTries, backoffMs, maxBackoffMs, codeTtlMs } = options;
  const name = options.name ?? workerName();
  const pollMs = options.pollMs ?? 1000;
  const secrets = (options.secrets ?? []).filter((s): s is string => !!s);
  const consumer = queue.consumer(name);
  let running = true;
  const { sleep, wake } = wakeableSleep();

  async function handle(entry: QueuedJob) {
    const { job: sealed } = entry;
    const tries = entry.attempts + 1;
    const about = {
      worker: name,
      jobId: entry.jobId,
      kind: sealed.kind,
      userId: sealed.userId,
      to: maskAddress(sealed.to),
      attempt: tries,
    };

    const deadLetter = async (error: string) => {
      await consumer.deadLetter(entry, error);
      metrics.deadLettered++;
      logger.log('error', 'notification dead-lettered', { ...about, error });
    };

    const sender = sealed.kind === 'verify-phone' ? senders.sms : senders.email;
    if (!sender) return deadLetter(`no ${sealed.kind === 'verify-phone' ? 'SMS provider' : 'email sender'} configured`);
    if (codeTtlMs !== undefined && Date.now() - entry.enqueuedAt > codeTtlMs) {
      return deadLetter('the code expired before it could be delivered');
    }
    let job: DeliveryJob;
    try {
      job = seal.open(sealed);
    } catch (err) {
      return deadLetter((err as Error).message); // the message is seal.ts's own: no content of the job
    }
    // A server's answer may echo the code (in the link) or the full address: neither goes to a log, retry or dead letter.
    const clean = (err: unknown) => redact(err instanceof Error ? err.message : String(err), [job.code, job.to, ...secrets]);

    try {
      await sender.send(job, deliveryId(entry.jobId, job));
    } catch (err) {
      const error = clean(err);
      if (err instanceof PermanentDeliveryError || tries >= maxTries) return deadLetter(error);
      const delayMs = backoffDelay(tries, backoffMs, maxBackoffMs);
      await consumer.retry(entry, delayMs, error);
      metrics.retried++;
      logger.log('warn', 'notification failed, will retry', { ...about, error, retryInMs: delayMs });
      return;
    }
    metrics.sent++;
    try {
      await consumer.ack(entry);
    } catch (err) {
      // Sent but still pending: another worker will claim and send it again (at least once).
      logger.log('warn', 'notification sent but not acknowledged', { ...about, error: clean(err) });
      return;
    }
    logger.log('info', 'notification sent', about);
  }

  async function loop() {
    let failures = 0;
    while (running) {
      let entry: QueuedJob | null;
      try {
        entry = await consumer.take(pollMs);
        if (failures > 0) logger.log('info', 'delivery queue reachable again', { worker: name });
        failures = 0;
      } catch (err) {
        if (!running) break;
        failures++;
        if (failures === 1 || failures % 60 === 0) {
          logger.log('warn', 'delivery queue unavailable', {
            worker: name,
            error: redact(String((err as Error)?.message ?? err), secrets),
            failures,
          });
        }
        await sleep(Math.min(100 * 2 ** failures, 2000));
        continue;
      }
      if (!entry) continue;
      try {
        await handle(entry);
      } catch (err) {
        // The queue failed while settling: the job stays pending and is claimed again later.
        logger.log('warn', 'notification left pending', {
          worker: name,
          jobId: entry.jobId,
          error: redact(String((err as Error)?.message ?? err), secrets),
        });
      }
    }
  }

  logger.log('info', 'delivery worker started', { worker: name, queue: queue.kind });
  const done = loop();
  return {
    name,
    async stop() {
      if (!running) return done;
      running = false;
      wake();
      await consumer.close();
      await done;
      logger.log('info', 'delivery worker stopped', { worker: name });
    },
  };
}
