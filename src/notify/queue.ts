// The delivery queue port (docs/configuration.md, Verification mail and SMS) and its in-process adapter.
//
// A mutation enqueues a job and returns; a worker takes it, sends it, and
// only then acknowledges it, which deletes the job. Queued jobs hold their
// code sealed (src/notify/seal.ts), never in clear; only the worker opens it.
// A failed try puts the job back with a not-before time (exponential backoff,
// decided by the worker); after the last try it goes to the dead letters
// without its code. A job taken and neither acknowledged nor put back (the
// worker died) is claimed by another consumer once it has been idle for
// claimIdleMs. Delivery is therefore at least once: a worker that dies after
// sending and before acknowledging makes the job go out twice.
import type { DeliveryKind, SealedDeliveryJob } from './port.ts';
import { maskAddress } from './mask.ts';

export interface QueuedJob {
  /** The queue entry; a job put back for a retry gets a new one. */
  entryId: string;
  /** Stable id of the job across its retries (the first entry id), for logs. */
  jobId: string;
  job: SealedDeliveryJob;
  /** Failed tries so far. */
  attempts: number;
  /** When the job was first queued (ms since the epoch). */
  enqueuedAt: number;
  lastError?: string;
}

/** What remains of a job that could not be delivered: never the clear code. */
export interface DeadLetter {
  jobId: string;
  kind: DeliveryKind;
  userId: string;
  orgId: string;
  /** Masked address. */
  to: string;
  attempts: number;
  error: string;
  enqueuedAt: number;
  failedAt: number;
}

export interface QueueDepth {
  /** Jobs in the queue, taken or not (a retry waiting for its time is in `delayed`). */
  queued: number;
  /** Taken by a worker and not acknowledged yet. */
  pending: number;
  /** Failed once or more, waiting for their next try. */
  delayed: number;
  deadLettered: number;
}

/** One worker's view of the queue. */
export interface QueueConsumer {
  readonly name: string;
  /**
   * The next job to deliver: first one another consumer left idle for longer
   * than claimIdleMs, then a retry whose time has come, then a new one;
   * waits up to blockMs. Null when there is none (or the consumer was closed).
   */
  take(blockMs: number): Promise<QueuedJob | null>;
  /** Delivered: the job (and its sealed code) is deleted. */
  ack(entry: QueuedJob): Promise<void>;
  /** Failed: the job comes back after delayMs with one more attempt counted. */
  retry(entry: QueuedJob, delayMs: number, error: string): Promise<void>;
  /** Failed for good: the job is deleted and a dead letter without the code is kept. */
  deadLetter(entry: QueuedJob, error: string): Promise<void>;
  /** Ends a waiting take (it answers null); jobs taken and not acknowledged stay claimable. */
  close(): Promise<void>;
}

export interface DeliveryQueue {
  readonly kind: 'redis' | 'memory';
  /** Queues a job; answers its id. */
  enqueue(job: SealedDeliveryJob): Promise<string>;
  consumer(name: string): QueueConsumer;
  /** The latest dead letters, newest first. */
  deadLetters(limit?: number): Promise<DeadLetter[]>;
  depth(): Promise<QueueDepth>;
  close(): Promise<void>;
}

export function deadLetterOf(entry: QueuedJob, error: string, failedAt = Date.now()): DeadLetter {
  const { kind, userId, orgId, to } = entry.job;
  return {
    jobId: entry.jobId,
    kind,
    userId,
    orgId,
    to: maskAddress(to),
    attempts: entry.attempts + 1,
    error,
    enqueuedAt: entry.enqueuedAt,
    failedAt,
  };
}

export interface MemoryQueueOptions {
  claimIdleMs: number;
  /** Dead letters kept (oldest dropped first). */
  maxDeadLetters?: number;
}

/**
 * The queue of the embedded quick start: jobs live in this process only and
 * are lost when it stops (as the memory code store's codes are).
 */
export function createMemoryQueue(options: MemoryQueueOptions): DeliveryQueue {
  const { claimIdleMs, maxDeadLetters = 1000 } = options;
  let nextId = 1;
  const newId = () => `${Date.now()}-${nextId++}`;
  const ready: QueuedJob[] = [];
  const delayed: { at: number; entry: QueuedJob }[] = [];
  const inFlight = new Map<string, { entry: QueuedJob; owner: string; takenAt: number }>();
  const dead: DeadLetter[] = [];
  const waiters = new Set<() => void>();
  let closed = false;

  const wake = () => {
    for (const w of [...waiters]) w();
  };

  const settle = (entry: QueuedJob) => inFlight.delete(entry.entryId);

  function next(owner: string): QueuedJob | null {
    const now = Date.now();
    for (const [id, f] of inFlight) {
      if (now - f.takenAt >= claimIdleMs) {
        inFlight.set(id, { entry: f.entry, owner, takenAt: now });
        return f.entry;
      }
    }
    delayed.sort((a, b) => a.at - b.at);
    while (delayed.length > 0 && delayed[0]!.at <= now) ready.push(delayed.shift()!.entry);
    const entry = ready.shift();
    if (!entry) return null;
    inFlight.set(entry.entryId, { entry, owner, takenAt: now });
    return entry;
  }

  /** Time until something may become takeable: a delayed job's time or an in-flight job's idle limit. */
  function untilNext(): number {
    const now = Date.now();
    let soonest = Infinity;
    for (const d of delayed) soonest = Math.min(soonest, d.at - now);
    for (const f of inFlight.values()) soonest = Math.min(soonest, f.takenAt + claimIdleMs - now);
    return Math.max(1, soonest);
  }

  return {
    kind: 'memory',

    async enqueue(job) {
      if (closed) throw new Error('delivery queue is closed');
      const id = newId();
      ready.push({ entryId: id, jobId: id, job: { ...job }, attempts: 0, enqueuedAt: Date.now() });
      wake();
      return id;
    },

    consumer(name) {
      let stopped = false;
      let cancel: (() => void) | undefined;
      return {
        name,
        async take(blockMs) {
          const deadline = Date.now() + blockMs;
          while (!stopped && !closed) {
            const entry = next(name);
            if (entry) return entry;
            const wait = Math.min(deadline - Date.now(), untilNext());
            if (wait <= 0) return null;
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                waiters.delete(done);
                cancel = undefined;
                resolve();
              };
              const timer = setTimeout(done, wait);
              waiters.add(done);
              cancel = done;
            });
          }
          return null;
        },
        async ack(entry) {
          settle(entry);
        },
        async retry(entry, delayMs, error) {
          if (!settle(entry)) return; // already settled by another consumer
          const id = newId();
          delayed.push({ at: Date.now() + delayMs, entry: { ...entry, entryId: id, attempts: entry.attempts + 1, lastError: error } });
          wake();
        },
        async deadLetter(entry, error) {
          if (!settle(entry)) return;
          dead.push(deadLetterOf(entry, error));
          if (dead.length > maxDeadLetters) dead.splice(0, dead.length - maxDeadLetters);
        },
        async close() {
          stopped = true;
          cancel?.();
        },
      };
    },

    async deadLetters(limit = 100) {
      return dead.slice(-limit).reverse();
    },

    async depth() {
      return { queued: ready.length + inFlight.size, pending: inFlight.size, delayed: delayed.length, deadLettered: dead.length };
    },

    async close() {
      closed = true;
      wake();
    },
  };
}
