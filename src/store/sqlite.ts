// EventStore for the quick start on SQLite (node:sqlite), DATA_DIR/events.sqlite.
// Events, claims, reduced states and user search rows are tables; start reads none of
// them (no replay), and memory holds at most `cacheEntries` snapshots and `cacheBytes` of
// their states (snapshot-cache.ts).
//
// - The database belongs to one worker thread (src/store/sqlite-worker.ts), so no disk
//   call runs on the event loop; requests and answers are messages, in order.
// - One process owns the database (the worker's connection locks the file), so the
//   main thread's LRU cache of snapshots is coherent: an append updates it on commit.
// - Group commit: appends wait in a queue while a batch is being committed; the next
//   batch takes them all, one transaction and one fsync (synchronous=FULL), a savepoint
//   per append so that a conflicting one fails alone. An append resolves once committed.
// - Reducers run here, on the main thread: an append sends its event with the state
//   reduced from its base and the user search row, written in the same transaction.
// - As in the old log store (src/store/embedded.ts) the checks are atomic: appends not
//   committed yet stay in `pending` / `pendingClaims`, seen by the next append's check,
//   and catchUp waits for the one pending on its aggregate. The sequence and claims of
//   aggregates not in memory are checked by the worker, inside the transaction.
import { access, chmod, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, makeDataDir } from '../data-dir.ts';
import { ReadLimitError, UnavailableError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { LOG_FILE } from './embedded.ts';
import { importLog } from './log-import.ts';
import {
  ConcurrencyError,
  ConstraintError,
  type AggregateType,
  type AppendOptions,
  type EventStore,
  type NewEvent,
  type Reducers,
  type Snapshot,
  type StoredEvent,
  type UserProjection,
} from './port.ts';
import type { UserSearch } from './read-models.ts';
import { deepFreeze, reduceEvents } from './reduce.ts';
import { keyOf, PendingAppends, type Pending } from './pending-appends.ts';
import { SnapshotCache } from './snapshot-cache.ts';
import { noteWeight, snapshotWeight } from './weight.ts';
import { startSqliteWorker } from './sqlite-client.ts';
import {
  eventOf,
  eventRow,
  fromJson,
  searchRow,
  snapshotOf,
  stateRow,
  toJson,
  type AppendRow,
  type EventRow,
  type StateRow,
} from './sqlite-rows.ts';
import { DB_FILE, type AppendResult } from './sqlite-schema.ts';

export interface SqliteStoreOptions {
  dataDir: string;
  reducers: Reducers;
  /** What a user search looks at (src/model/users.ts userSearchFields); without it no user_search rows are written. */
  userFields?: UserProjection;
  /** Snapshots kept in memory, least recently used dropped first. */
  cacheEntries?: number;
  /** What the snapshots in memory may weigh, as the length of their states' JSON. */
  cacheBytes?: number;
  logger?: Logger;
}

export interface SqliteStore extends EventStore {
  /**
   * Appends and commits since start (group commit makes syncs < appends), and what was
   * read from the database: state rows, event rows; `cached` snapshots in memory now, and
   * their weight (`cachedBytes`).
   */
  readonly stats: {
    appends: number;
    syncs: number;
    statesRead: number;
    eventsRead: number;
    readonly cached: number;
    readonly cachedBytes: number;
  };
}

/** The worker's answer to a load: the rows found, and where it stopped for maxBytes (null: it did not). */
type Loaded = { rows: StateRow[]; stoppedAt: number | null };

export const DEFAULT_CACHE_ENTRIES = 20_000;
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;
const IMPORTED_SUFFIX = '.imported';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

export async function createSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { dataDir, reducers, userFields } = options;
  const warn = (msg: string, fields?: Record<string, unknown>) =>
    options.logger ? options.logger.log('warn', msg, fields) : console.warn(`sqlite store: ${msg}`, fields ?? '');
  await makeDataDir(dataDir);
  const path = join(dataDir, DB_FILE);
  // Created owner-only before SQLite opens it: its -wal file gets the same mode.
  await (await open(path, 'a', FILE_MODE)).close();
  await chmod(path, FILE_MODE);

  const worker = startSqliteWorker(path);
  const opened = await worker.call<{ empty: boolean; importedFrom: string | null }>({ op: 'open' }).catch(async (e) => {
    await worker.terminate();
    throw worker.failure ?? e;
  });
  await importOldLog(opened).catch(async (e) => {
    await worker.call({ op: 'close' }).catch(() => {});
    await worker.terminate();
    throw e;
  });

  // An old log beside a database: imported now when the database is new, renamed when a
  // previous start imported it but stopped before the rename; otherwise refused.
  async function importOldLog({ empty, importedFrom }: { empty: boolean; importedFrom: string | null }) {
    const log = join(dataDir, LOG_FILE);
    if (!(await exists(log))) return;
    if (!empty && !importedFrom) throw new Error(`${log} and ${path} both hold events: move one away`);
    const target = log + IMPORTED_SUFFIX;
    if (await exists(target)) throw new Error(`${log} is to be renamed to ${target}, which exists: move one away`);
    const count = empty ? await importLog({ path: log, reducers, userFields, call: worker.call }) : 0;
    await rename(log, target);
    warn(`imported the old event log into ${DB_FILE} and renamed it`, { events: count, from: log, to: target });
  }

  const cache = new SnapshotCache({
    maxEntries: options.cacheEntries ?? DEFAULT_CACHE_ENTRIES,
    maxBytes: options.cacheBytes ?? DEFAULT_CACHE_BYTES,
  });
  const pending = new PendingAppends<AppendRow>();
  let flushing: Promise<void> | undefined;
  let closed = false;
  const stats = {
    appends: 0,
    syncs: 0,
    statesRead: 0,
    eventsRead: 0,
    get cached() {
      return cache.size;
    },
    get cachedBytes() {
      return cache.bytes;
    },
  };

  /** Committed snapshots are frozen: readers share them, nobody copies. */
  const remember = (type: AggregateType, snapshot: Snapshot<unknown>, stateJson: string) => {
    noteWeight(snapshot.state, stateJson.length);
    return cache.offer(keyOf(type, snapshot.id), deepFreeze(snapshot), stateJson.length);
  };
  const fromStateRow = (row: StateRow) => {
    stats.statesRead++;
    return snapshotOf(row);
  };
  const fromEventRows = (rows: EventRow[]) => {
    stats.eventsRead += rows.length;
    return rows.map((r) => deepFreeze(eventOf(r)));
  };

  function failure(item: Pending<AppendRow>, result: AppendResult): Error {
    const { aggregateType, aggregateId, sequence } = item.event;
    if ('ok' in result) throw new Error('not a failure');
    if (result.conflict === 'sequence') return new ConcurrencyError(aggregateType, aggregateId, sequence);
    if (result.conflict === 'claim') return new ConstraintError(result.key);
    return new Error(`sequence gap: ${aggregateType} ${aggregateId} has no event ${sequence - 1}`);
  }

  async function flush(): Promise<void> {
    // Appends made in this turn of the event loop join the first batch: requests read from the
    // sockets together go to disk together (measured: 5.6 appends a sync instead of 4.0 under
    // the bench's 10 connections, 3-8% less CPU a request, no wait beyond this turn).
    await new Promise((resolve) => setImmediate(resolve));
    while (pending.queued > 0) {
      const batch = pending.take();
      let results: AppendResult[];
      try {
        results = await worker.call<AppendResult[]>({ op: 'append', rows: batch.map((item) => item.write) });
        stats.syncs++;
      } catch (e) {
        // The transaction was rolled back (or the worker is gone): none of the batch is written.
        for (const item of batch) {
          pending.forget(item);
          item.reject(e instanceof UnavailableError ? e : new UnavailableError('store unavailable', { cause: e }));
        }
        continue;
      }
      batch.forEach((item, i) => {
        pending.forget(item);
        const result = results[i]!;
        if ('ok' in result) {
          remember(item.event.aggregateType, item.snapshot, item.write.state.state);
          item.resolve();
        } else item.reject(failure(item, result));
      });
    }
    flushing = undefined;
  }

  /** The tip as far as memory knows it: the pending append, else the cached snapshot; undefined: not in memory. */
  const tipOf = (key: string): Snapshot<unknown> | undefined => pending.tip(key) ?? cache.get(key);

  const store: SqliteStore = {
    stats,

    load: async <S>(type: AggregateType, id: string) => {
      const key = keyOf(type, id);
      const hit = cache.get(key);
      if (hit) return hit as Snapshot<S>;
      const {
        rows: [row],
      } = await worker.call<Loaded>({ op: 'load', type, ids: [id] });
      return row ? (remember(type, fromStateRow(row), row.state) as Snapshot<S>) : null;
    },

    loadMany: async <S>(type: AggregateType, ids: readonly string[], maxBytes?: number) => {
      const result = new Map<string, Snapshot<S>>();
      const missing: string[] = [];
      let weight = 0;
      for (const id of new Set(ids)) {
        const hit = cache.get(keyOf(type, id));
        if (hit) {
          result.set(id, hit as Snapshot<S>);
          weight += snapshotWeight(hit);
        } else missing.push(id);
      }
      if (maxBytes !== undefined && weight > maxBytes) throw new ReadLimitError(maxBytes, 0);
      if (missing.length > 0) {
        const loaded = await worker.call<Loaded>({
          op: 'load',
          type,
          ids: missing,
          maxBytes: maxBytes === undefined ? undefined : maxBytes - weight,
        });
        for (const row of loaded.rows) result.set(row.id, remember(type, fromStateRow(row), row.state) as Snapshot<S>);
        if (loaded.stoppedAt !== null) throw new ReadLimitError(maxBytes!, 0);
      }
      return result;
    },

    // The state row is written with its events, so it is behind them only when something
    // else wrote the events (a crash cannot split them). The pending append at the time of
    // the call is waited for, so a loser of a race sees the winner after its error.
    catchUp: async <S>(type: AggregateType, id: string, known: Snapshot<S> | null) => {
      await pending.settled(keyOf(type, id));
      const found = await worker.call<{ state: StateRow | null; events: EventRow[] }>({
        op: 'catchUp',
        type,
        id,
        after: known?.sequence ?? 0,
      });
      const base = found.state ? fromStateRow(found.state) : known;
      if (found.events.length === 0) return found.state ? (remember(type, base!, found.state.state) as Snapshot<S>) : known;
      const caught = reduceEvents(reducers[type], base, fromEventRows(found.events))!;
      // Written back when it is newer than the stored one (a later append may have passed it).
      const row = stateRow(type, caught);
      await worker.call({ op: 'putState', state: row, search: searchRow(type, caught, userFields) });
      return remember(type, caught, row.state) as Snapshot<S>;
    },

    // Everything from the tip on runs synchronously: checks and reservation are atomic.
    append: async <S>(event: NewEvent, opts?: AppendOptions<S>) => {
      if (closed) throw new Error('sqlite store is closed');
      if (worker.failure) throw new UnavailableError('store unavailable', { cause: worker.failure });
      const { aggregateType, aggregateId, sequence } = event;
      const key = keyOf(aggregateType, aggregateId);
      if (opts?.base !== undefined && sequence !== (opts.base?.sequence ?? 0) + 1)
        throw new Error(`append: sequence ${sequence} does not follow the base's ${opts.base?.sequence ?? 0}`);
      // No base: the store reads the aggregate caught up itself (tools, setup).
      const caught =
        opts?.base === undefined && tipOf(key) === undefined ? await store.catchUp(aggregateType, aggregateId, null) : undefined;

      // The tip in memory (committed or accepted) is the expected state, so a base given by the
      // caller is only checked; not in memory, the base is the state and the worker checks it.
      const tip = tipOf(key) ?? caught;
      // A committed tip (not one still pending, whose batch may yet fail) rules out a gap.
      const checked = tip !== undefined && pending.tip(key) === undefined;
      if (tip !== undefined) {
        const expected = (tip?.sequence ?? 0) + 1;
        if (sequence < expected) throw new ConcurrencyError(aggregateType, aggregateId, sequence);
        if (sequence > expected) throw new Error(`sequence gap: ${aggregateType} ${aggregateId} expects ${expected}, got ${sequence}`);
      }
      const claims = [...new Set(opts?.claims ?? [])];
      for (const claim of claims) {
        const holder = pending.claimedBy(claim);
        if (holder && (holder.aggregateType !== aggregateType || holder.aggregateId !== aggregateId)) throw new ConstraintError(claim);
      }

      const { type, creator, resourceOwner } = event;
      const payload = toJson(event.payload);
      const stored: StoredEvent = deepFreeze({
        aggregateType,
        aggregateId,
        sequence,
        type,
        payload: fromJson(payload), // exactly what a read will see
        creator,
        resourceOwner,
        createdAt: new Date(),
        claims,
      });
      const base = tip !== undefined ? tip : (opts!.base as Snapshot<unknown> | null);
      const snapshot = reduceEvents(reducers[aggregateType], base, [stored])!;
      const row: AppendRow = {
        event: eventRow(stored, payload),
        claims,
        state: stateRow(aggregateType, snapshot),
        search: searchRow(aggregateType, snapshot, userFields),
        checked,
      };

      stats.appends++;
      const done = pending.add(stored, snapshot, row);
      flushing ??= flush();
      await done;
      return { event: stored, snapshot: snapshot as Snapshot<S> };
    },

    lookup: async (key) => {
      const holder = await worker.call<{ aggregateType: AggregateType; aggregateId: string } | null>({ op: 'lookup', key });
      return holder && { aggregateType: holder.aggregateType, aggregateId: holder.aggregateId };
    },

    events: async (type, id) =>
      fromEventRows(await worker.call<EventRow[]>({ op: 'events', type, id, from: 1, to: Number.MAX_SAFE_INTEGER })),

    eventRange: async (type, id, from, to) => fromEventRows(await worker.call<EventRow[]>({ op: 'events', type, id, from, to })),

    // The search answers ids and sequences; a user in memory is taken from there, the others
    // are loaded in a second call. A user written after the search read it comes as it is
    // now: a whole user, newer than the search saw, as if it had changed just after the answer.
    searchUsers: async <S>(search: UserSearch) => {
      const found = await worker.call<{ id: string; sequence: number }[]>({ op: 'searchUsers', search });
      const held = (id: string, sequence: number) => {
        const hit = cache.get(keyOf('user', id));
        return hit && hit.sequence >= sequence ? hit : undefined;
      };
      const page = found.map(({ id, sequence }) => held(id, sequence));
      const missing = found.filter((_, i) => page[i] === undefined).map(({ id }) => id);
      // The worker stops at the budget (what memory already holds costs nothing more, but counts).
      const loaded =
        missing.length > 0
          ? await worker.call<Loaded>({ op: 'load', type: 'user', ids: missing, maxBytes: search.maxBytes })
          : { rows: [], stoppedAt: null };
      const rows = new Map(loaded.rows.map((row) => [row.id, row]));
      found.forEach(({ id }, i) => {
        const row = rows.get(id);
        if (page[i] === undefined && row) page[i] = remember('user', fromStateRow(row), row.state); // or the newer one held
      });
      // Checked after the rows read are remembered, so that the shorter page asked next finds them in memory.
      if (search.maxBytes !== undefined) {
        const unread = new Set(loaded.stoppedAt === null ? [] : missing.slice(loaded.stoppedAt));
        let weight = 0;
        for (const [i, { id }] of found.entries()) {
          weight += unread.has(id) ? Infinity : page[i] ? snapshotWeight(page[i]) : 0;
          if (weight > search.maxBytes) throw new ReadLimitError(search.maxBytes, i);
        }
      }
      return page.filter((user) => user !== undefined) as Snapshot<S>[];
    },

    countUsers: async (filter) => worker.call<number>({ op: 'countUsers', filter }),

    ping: async () => {
      await worker.call({ op: 'ping' });
    },

    close: async () => {
      if (closed) return;
      closed = true;
      while (flushing) await flushing;
      await worker.call({ op: 'close' }).catch(() => {});
      await worker.terminate();
    },
  };
  return store;
}
