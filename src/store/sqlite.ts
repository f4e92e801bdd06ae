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
// - The checks are atomic: appends not committed yet stay in `pending` / `pendingClaims`,
//   seen by the next append's check, and catchUp waits for the one pending on its aggregate. The sequence and claims of
//   aggregates not in memory are checked by the worker, inside the transaction.
//
// By concern: opening the folder and importing an old log (sqlite-open.ts), what memory holds
// (sqlite-memory.ts), the append and its group commit (sqlite-append.ts), the reads
// (sqlite-reads.ts); the worker's side in sqlite-worker.ts and sqlite-schema.ts.
import { createLogger, type Logger } from '../log.ts';
import { DEFAULT_PROGRESS_INTERVAL_MS, type ProgressObserver } from '../progress.ts';
import type { EventStore, Reducers, UserProjection } from './port.ts';
import { createSqliteAppend } from './sqlite-append.ts';
import { createSqliteMemory, type SqliteStats } from './sqlite-memory.ts';
import { openSqlite } from './sqlite-open.ts';
import { createSqliteReads } from './sqlite-reads.ts';

export interface SqliteStoreOptions {
  dataDir: string;
  reducers: Reducers;
  /** What a user search looks at (src/model/users.ts userSearchFields); without it no user_search rows are written. */
  userFields?: UserProjection;
  /** Snapshots kept in memory, least recently used dropped first. */
  cacheEntries?: number;
  /** What the snapshots in memory may weigh, as the length of their states' JSON. */
  cacheBytes?: number;
  /** Where its warnings and an import's progress go; default: JSON lines on stderr. */
  logger?: Logger;
  /** How often an old log's import reports (PROGRESS_INTERVAL_MS; default 5 s), and who else is told (metrics). */
  progress?: { intervalMs?: number; observe?: ProgressObserver };
}

export interface SqliteStore extends EventStore {
  /**
   * Appends and commits since start (group commit makes syncs < appends), and what was
   * read from the database: state rows, event rows; `cached` snapshots in memory now, and
   * their weight (`cachedBytes`).
   */
  readonly stats: SqliteStats;
}

export const DEFAULT_CACHE_ENTRIES = 20_000;
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;

export async function createSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { dataDir, reducers, userFields } = options;
  const worker = await openSqlite({
    dataDir,
    reducers,
    userFields,
    logger: options.logger ?? createLogger(),
    progress: { intervalMs: options.progress?.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS, observe: options.progress?.observe },
  });

  const memory = createSqliteMemory({
    maxEntries: options.cacheEntries ?? DEFAULT_CACHE_ENTRIES,
    maxBytes: options.cacheBytes ?? DEFAULT_CACHE_BYTES,
  });
  let closed = false;
  const reads = createSqliteReads(worker, memory, reducers, userFields);
  const { append, drain } = createSqliteAppend({ worker, memory, reducers, userFields, catchUp: reads.catchUp, isClosed: () => closed });

  return {
    stats: memory.stats,
    ...reads,
    append,
    close: async () => {
      if (closed) return;
      closed = true;
      await drain();
      await worker.call({ op: 'close' }).catch(() => {});
      await worker.terminate();
    },
  };
}
