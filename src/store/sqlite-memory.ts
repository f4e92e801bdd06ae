// What the SQLite store holds in memory (src/store/sqlite.ts): the committed snapshots (an LRU
// within its entries and bytes, snapshot-cache.ts), the appends accepted but not committed yet
// (pending-appends.ts), and the counts of what was read and written.
import type { AggregateType, Snapshot, StoredEvent } from './port.ts';
import { deepFreeze } from './reduce.ts';
import { keyOf, PendingAppends } from './pending-appends.ts';
import { SnapshotCache } from './snapshot-cache.ts';
import { eventOf, snapshotOf, type AppendRow, type EventRow, type StateRow } from './sqlite-rows.ts';
import { noteWeight } from './weight.ts';

/** Appends and commits since start, rows read, and what the cache holds now (SqliteStore.stats). */
export interface SqliteStats {
  appends: number;
  syncs: number;
  statesRead: number;
  eventsRead: number;
  readonly cached: number;
  readonly cachedBytes: number;
}

export interface SqliteMemory {
  readonly cache: SnapshotCache;
  readonly pending: PendingAppends<AppendRow>;
  readonly stats: SqliteStats;
  /** Committed snapshots are frozen: readers share them, nobody copies. */
  remember(type: AggregateType, snapshot: Snapshot<unknown>, stateJson: string): Snapshot<unknown>;
  fromStateRow(row: StateRow): Snapshot<unknown>;
  fromEventRows(rows: EventRow[]): StoredEvent[];
  /** The tip as far as memory knows it: the pending append, else the cached snapshot; undefined: not in memory. */
  tipOf(key: string): Snapshot<unknown> | undefined;
}

export function createSqliteMemory(limits: { maxEntries: number; maxBytes: number }): SqliteMemory {
  const cache = new SnapshotCache(limits);
  const pending = new PendingAppends<AppendRow>();
  const stats: SqliteStats = {
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
  return {
    cache,
    pending,
    stats,
    remember: (type, snapshot, stateJson) => {
      noteWeight(snapshot.state, stateJson.length);
      return cache.offer(keyOf(type, snapshot.id), deepFreeze(snapshot), stateJson.length);
    },
    fromStateRow: (row) => {
      stats.statesRead++;
      return snapshotOf(row);
    },
    fromEventRows: (rows) => {
      stats.eventsRead += rows.length;
      return rows.map((r) => deepFreeze(eventOf(r)));
    },
    tipOf: (key) => pending.tip(key) ?? cache.get(key),
  };
}
