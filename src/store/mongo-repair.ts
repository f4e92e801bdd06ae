// The MongoDB store's repair loop, off the request path, in every gateway: it bounds how
// long a state document stays behind its events after a crash between the two writes of
// an append (see port.ts). Every `intervalMs` it reads the events created since its
// watermark (minus an overlap for clocks that differ between gateways; an index range
// query on createdAt), reads the state documents of their aggregates (one $in find per
// aggregate type, sequences only), and catches up each one behind an event older than
// `graceMs` (younger ones are left to their writer). At start it first sweeps
// `startupWindowMs`. At most `batchSize` events per pass; the rest on the next; a slow
// pass spaces the next one out. The store runs it in its background context, so its
// commands are not reported to onCommand listeners (they are not requests): `stats`
// counts its work.
import type { Collection, Filter, ObjectId } from 'mongodb';
import type { Logger } from '../log.ts';
import type { EventDoc, StateDoc } from './mongo-docs.ts';
import { stateCollections } from './mongo-shard-keys.ts';
import type { AggregateType, Snapshot } from './port.ts';

/** The repair loop's settings. Every field has a default. */
export interface RepairOptions {
  /** Between the end of one pass and the start of the next; default 1000 ms. */
  intervalMs?: number;
  /** An event younger than this is left to its writer (between its two writes); default 2000 ms. */
  graceMs?: number;
  /** Each sweep starts this long before where the last one ended, for clocks that differ between gateways; default 10 s. */
  overlapMs?: number;
  /** How far back the first sweep after start looks (a crash of every gateway); default 1 h. */
  startupWindowMs?: number;
  /** At most this many events read per pass; a longer sweep continues on the next; default 1000. */
  batchSize?: number;
  /** Called for each state document the loop caught up (metrics). */
  onRepaired?: (type: AggregateType, id: string) => void;
}

/** What the repair loop did since start. */
export interface RepairStats {
  /** Passes that ran to their end. */
  passes: number;
  /** Events read (sequences only). */
  eventsRead: number;
  /** State documents found behind their events and caught up. */
  repaired: number;
  /** Passes or repairs that failed (logged at most once per 10 s; retried). */
  errors: number;
  /** Sweeps completed; the first is the startup window. */
  sweeps: number;
}

/** What the loop needs of its store. */
export interface RepairDeps {
  /** Collections are opened on connect: read them when a pass runs. */
  events: () => Collection<EventDoc>;
  states: (type: AggregateType) => Collection<StateDoc>;
  /** The events' index on createdAt, which the passes' range queries use. */
  ensureCreatedAt: () => Promise<void>;
  /** Reads the aggregate's state document, then catches it up from its events, writing it with `save`. */
  catchUp: (type: AggregateType, id: string, save: (type: AggregateType, snap: Snapshot<unknown>) => Promise<boolean>) => Promise<unknown>;
  /** The conditional write of a state document: true when it wrote. */
  saveState: (type: AggregateType, snap: Snapshot<unknown>) => Promise<boolean>;
  /** A driver error that means "the server is not there now". */
  isUnavailable: (e: unknown) => boolean;
  /** Runs a pass as the store runs its calls (connected first), in its background context. */
  runInBackground: (pass: () => Promise<void>) => Promise<void>;
  isClosed: () => boolean;
  logger: Logger;
}

export interface RepairLoop {
  readonly stats: Readonly<RepairStats>;
  /** The first pass (the startup sweep) after `delayMs`, then one after another. */
  start(delayMs?: number): void;
  /** No pass after this; waits for the one under way, which stops between two repairs. */
  stop(): Promise<void>;
}

interface Newest {
  type: AggregateType;
  id: string;
  sequence: number;
  createdAt: Date;
}

/** Counts a failure and logs it, at most once per 10 s (with how many were not logged since). */
function failureReport(stats: RepairStats, isClosed: () => boolean, logger: Logger): (e: unknown, what?: string) => void {
  let lastRepairLog = 0;
  let unlogged = 0;
  return (e, what = 'pass') => {
    stats.errors++;
    if (isClosed()) return;
    const now = Date.now();
    if (now - lastRepairLog < 10_000) {
      unlogged++;
      return;
    }
    const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : '';
    logger.log('warn', `mongo store: state repair ${what} failed; retried`, {
      error: e instanceof Error ? `${e.message}${cause}` : String(e),
      // failures since the last report that were not logged
      unlogged,
    });
    [lastRepairLog, unlogged] = [now, 0];
  };
}

/** The newest event of each aggregate in a batch (documents of unknown types or shapes left out). */
function newestPerAggregate(batch: Pick<EventDoc, 'aggregateType' | 'aggregateId' | 'sequence' | 'createdAt'>[]): Map<string, Newest> {
  const newest = new Map<string, Newest>();
  for (const { aggregateType: type, aggregateId: id, sequence, createdAt } of batch) {
    if (!Object.hasOwn(stateCollections, type) || typeof id !== 'string' || typeof sequence !== 'number') continue;
    const key = `${type}\u0000${id}`;
    if ((newest.get(key)?.sequence ?? 0) < sequence) newest.set(key, { type, id, sequence, createdAt });
  }
  return newest;
}

// The next pass starts `interval` after the last one ended, or 4 times that pass's
// duration if longer: on a server that scans the whole events collection for it
// (FerretDB v1 pushes no filter down) the loop takes at most a fifth of the time.
// interval 0: no pass ever.
function repeatPasses(
  pass: () => Promise<void>,
  interval: number,
  isClosed: () => boolean,
  onError: (e: unknown) => void,
): Pick<RepairLoop, 'start' | 'stop'> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  function schedule(delay: number): void {
    if (isClosed() || interval <= 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      const started = Date.now();
      let failed = false;
      running = pass()
        .catch((e: unknown) => {
          failed = true;
          onError(e);
        })
        .finally(() => {
          running = undefined;
          // A long pass spaces the next (repair stays a fifth of the time at most), but never by
          // more than 10 intervals, and a failed one not at all: a pass that hung 40 s on a
          // stalled server would otherwise leave states behind for minutes after it recovered.
          schedule(failed ? interval : Math.min(10 * interval, Math.max(interval, 4 * (Date.now() - started))));
        });
    }, delay);
    timer.unref();
  }
  return {
    start: (delayMs = 0) => schedule(delayMs),
    async stop() {
      clearTimeout(timer);
      await running; // never rejects
    },
  };
}

/** `options` false: a loop that never runs (tools, tests), its stats all 0. */
export function createRepairLoop(options: RepairOptions | false | undefined, deps: RepairDeps): RepairLoop {
  const loop = options === false ? undefined : (options ?? {});
  const interval = loop?.intervalMs ?? 1000;
  const repairGrace = loop?.graceMs ?? 2000;
  const overlap = loop?.overlapMs ?? 10_000;
  const startupWindow = loop?.startupWindowMs ?? 3_600_000;
  const batchSize = Math.max(1, Math.floor(loop?.batchSize ?? 1000));
  const stats: RepairStats = { passes: 0, eventsRead: 0, repaired: 0, errors: 0, sweeps: 0 };
  /** The sweep under way: the events created in [from, to], read in (createdAt, _id) order, after `after`. */
  let sweep: { from: Date; to: Date; after?: { createdAt: Date; _id: ObjectId } } | undefined;
  let lastSweepEnd: Date | undefined;
  // Aggregates whose state document was seen at or past a sequence, kept for the
  // events the next sweep reads again (its overlap), so that it reads no state
  // document twice for them: this sweep's and the last one's.
  let seenNow = new Map<string, number>();
  let seenBefore = new Map<string, number>();

  const repairFailed = failureReport(stats, deps.isClosed, deps.logger);

  /**
   * Catches one state document up from its events. A document that caught up
   * meanwhile (its writer, another gateway) is left as it is: the write is
   * conditional on the sequence. Unavailable: thrown, so the pass reads its batch
   * again; any other failure (a reducer refusing an event): logged, and the next
   * write to the aggregate meets it.
   */
  async function repairOne(type: AggregateType, id: string): Promise<boolean> {
    try {
      let wrote = false;
      await deps.catchUp(type, id, async (t, snap) => (wrote = await deps.saveState(t, snap)));
      if (wrote) {
        stats.repaired++;
        try {
          loop?.onRepaired?.(type, id);
        } catch {
          // a metric's problem is not the repair's
        }
      }
      return true;
    } catch (e) {
      if (deps.isUnavailable(e)) throw e;
      repairFailed(e, `of ${type} ${id}`);
      return false;
    }
  }

  async function repairPass(): Promise<void> {
    // Lets the events be read by creation time on MongoDB.
    await deps.ensureCreatedAt();
    if (!sweep) {
      const now = Date.now();
      const from = lastSweepEnd ? lastSweepEnd.getTime() - overlap : now - startupWindow;
      sweep = { from: new Date(from), to: new Date(Math.max(from, now - repairGrace)) };
    }
    const { from, to, after } = sweep;
    // One index range on createdAt; (createdAt, _id) after the last event read goes on from it.
    const filter: Filter<EventDoc> = after
      ? { createdAt: { $gte: after.createdAt, $lte: to }, $or: [{ createdAt: { $gt: after.createdAt } }, { _id: { $gt: after._id } }] }
      : { createdAt: { $gte: from, $lte: to } };
    const batch = await deps
      .events()
      .find(filter, { projection: { aggregateType: 1, aggregateId: 1, sequence: 1, createdAt: 1 } })
      .sort({ createdAt: 1, _id: 1 })
      .limit(batchSize)
      .toArray();
    stats.eventsRead += batch.length;

    const newest = newestPerAggregate(batch);
    const keepFrom = to.getTime() - overlap; // what the next sweep reads again
    const seen = (key: string, n: Newest) => {
      if (n.createdAt.getTime() >= keepFrom) seenNow.set(key, Math.max(seenNow.get(key) ?? 0, n.sequence));
    };
    const toCheck = new Map<AggregateType, Map<string, Newest>>();
    for (const [key, n] of newest) {
      if (Math.max(seenNow.get(key) ?? 0, seenBefore.get(key) ?? 0) >= n.sequence) seen(key, n);
      else toCheck.set(n.type, (toCheck.get(n.type) ?? new Map<string, Newest>()).set(n.id, n));
    }
    for (const [type, group] of toCheck) {
      const docs = await deps
        .states(type)
        .find({ _id: { $in: [...group.keys()] } }, { projection: { sequence: 1 } })
        .toArray();
      const stored = new Map(docs.map((d) => [d._id, d.sequence]));
      for (const [id, n] of group) {
        if (deps.isClosed()) return;
        if ((stored.get(id) ?? 0) >= n.sequence || (await repairOne(type, id))) seen(`${type}\u0000${id}`, n);
      }
    }

    if (batch.length < batchSize) {
      [lastSweepEnd, sweep] = [to, undefined];
      [seenBefore, seenNow] = [seenNow, new Map()];
      stats.sweeps++;
    } else {
      const last = batch.at(-1)!;
      sweep.after = { createdAt: last.createdAt, _id: last._id! };
    }
    stats.passes++;
  }

  const passes = repeatPasses(() => deps.runInBackground(repairPass), loop ? interval : 0, deps.isClosed, repairFailed);
  return { stats, ...passes };
}
