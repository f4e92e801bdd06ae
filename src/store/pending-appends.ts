// Appends the SQLite store has accepted and not committed yet (src/store/sqlite.ts): what an
// append's check sees besides committed state (the aggregate's accepted tip, the claims in
// flight), and the queue a group commit takes its batch from. All synchronous, so the store's
// check-and-reserve stays atomic.
import type { Snapshot, StoredEvent } from './port.ts';

export interface Pending<W> {
  event: StoredEvent;
  snapshot: Snapshot<unknown>;
  /** What the store writes for it (a log line, SQLite rows). */
  write: W;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** Settles (never rejects) once the append is committed, or has failed. */
  settled: Promise<void>;
}

export const keyOf = (type: string, id: string) => `${type}\u0000${id}`;

export class PendingAppends<W> {
  private readonly byAggregate = new Map<string, Pending<W>>();
  private readonly byClaim = new Map<string, Pending<W>>();
  private queue: Pending<W>[] = [];

  /** The aggregate's snapshot after its accepted, uncommitted append. */
  tip(key: string): Snapshot<unknown> | undefined {
    return this.byAggregate.get(key)?.snapshot;
  }

  /** The event whose uncommitted append claims `claim`. */
  claimedBy(claim: string): StoredEvent | undefined {
    return this.byClaim.get(claim)?.event;
  }

  /** Settles when the aggregate's append pending now is committed or failed. */
  settled(key: string): Promise<void> | undefined {
    return this.byAggregate.get(key)?.settled;
  }

  /** Reserves the tip and the claims and queues the write; resolves once the store commits it. */
  add(event: StoredEvent, snapshot: Snapshot<unknown>, write: W): Promise<void> {
    let item!: Pending<W>;
    const done = new Promise<void>((resolve, reject) => {
      item = { event, snapshot, write, resolve, reject, settled: Promise.resolve() };
    });
    item.settled = done.catch(() => {});
    this.byAggregate.set(keyOf(event.aggregateType, event.aggregateId), item);
    for (const claim of event.claims) this.byClaim.set(claim, item);
    this.queue.push(item);
    return done;
  }

  /** The queued appends, for one commit; the queue starts again empty. */
  take(): Pending<W>[] {
    const batch = this.queue;
    this.queue = [];
    return batch;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Releases what an append reserved, once it is committed (and visible as committed) or failed. */
  forget(item: Pending<W>): void {
    const key = keyOf(item.event.aggregateType, item.event.aggregateId);
    if (this.byAggregate.get(key) === item) this.byAggregate.delete(key);
    for (const claim of item.event.claims) if (this.byClaim.get(claim) === item) this.byClaim.delete(claim);
  }
}
