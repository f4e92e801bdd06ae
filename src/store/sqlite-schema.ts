// The SQLite event store's tables and the writes shared by its worker, the log
// import and the bulk loader. Loaded by Node itself in the worker thread (not by
// tsx or vitest): erasable TypeScript only.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { AppendRow, EventRow, SearchRow, StateRow } from './sqlite-rows.ts';

export const DB_FILE = 'events.sqlite';

// Times are epoch milliseconds. Payloads and states are JSON with Dates and bytes
// tagged ({ $date }, { $binary }), as in the old log.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  aggregate_type TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  creator TEXT NOT NULL,
  resource_owner TEXT NOT NULL,
  claims TEXT NOT NULL,
  PRIMARY KEY (aggregate_type, aggregate_id, sequence)
);
CREATE TABLE IF NOT EXISTS states (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  state TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  resource_owner TEXT NOT NULL,
  creation_date INTEGER NOT NULL,
  change_date INTEGER NOT NULL,
  PRIMARY KEY (type, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS constraints (
  key TEXT PRIMARY KEY,
  aggregate_type TEXT NOT NULL,
  aggregate_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS user_search (
  id TEXT PRIMARY KEY,
  org TEXT NOT NULL,
  username TEXT NOT NULL,
  email TEXT NOT NULL,
  display_name TEXT NOT NULL,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  state TEXT NOT NULL,
  email_verified INTEGER NOT NULL,
  created INTEGER NOT NULL,
  changed INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS user_search_org_username ON user_search (org, username, id);
CREATE INDEX IF NOT EXISTS user_search_org_created ON user_search (org, created, id);
CREATE INDEX IF NOT EXISTS user_search_org_changed ON user_search (org, changed, id);
CREATE INDEX IF NOT EXISTS user_search_username ON user_search (username, id);
CREATE INDEX IF NOT EXISTS user_search_created ON user_search (created, id);
CREATE INDEX IF NOT EXISTS user_search_changed ON user_search (changed, id);
DROP INDEX IF EXISTS user_search_org_email;
DROP INDEX IF EXISTS user_search_email;
CREATE INDEX IF NOT EXISTS user_search_org_email_sorts ON user_search (org, email, username, created);
CREATE INDEX IF NOT EXISTS user_search_email_sorts ON user_search (email, username, created);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

const SEARCH_COLUMNS: [Exclude<keyof SearchRow, 'id'>, string][] = [
  ['org', 'org'],
  ['username', 'username'],
  ['email', 'email'],
  ['displayName', 'display_name'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
  ['state', 'state'],
  ['emailVerified', 'email_verified'],
  ['created', 'created'],
  ['changed', 'changed'],
];

/**
 * Opens (creating) the database for one owner: WAL, a commit is on disk when it returns
 * (synchronous=FULL), and the file locked for this connection until it closes
 * (locking_mode=EXCLUSIVE), so the main thread's cache of it stays coherent.
 */
export function openDatabase(path: string, options: { cacheMb?: number } = {}): DatabaseSync {
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    db.exec(`PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
      PRAGMA cache_size = ${-1024 * (options.cacheMb ?? 16)};`);
    db.exec(`BEGIN IMMEDIATE; ${SCHEMA} COMMIT;`); // the write takes the lock now, not at the first append
  } catch (e) {
    db.close();
    if ((e as { errstr?: string }).errstr === 'database is locked') throw new Error(`${path} is in use by another process`, { cause: e });
    throw e;
  }
  return db;
}

/** The writes of an append, an import and a bulk load, prepared once per connection. */
export function prepareWrites(db: DatabaseSync) {
  const insertEvent = db.prepare(`INSERT OR IGNORE INTO events
    (aggregate_type, aggregate_id, sequence, type, payload, created_at, creator, resource_owner, claims)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const eventExists = db.prepare('SELECT 1 FROM events WHERE aggregate_type = ? AND aggregate_id = ? AND sequence = ?');
  const holder = db.prepare('SELECT aggregate_type AS type, aggregate_id AS id FROM constraints WHERE key = ?');
  const setHolder = db.prepare(`INSERT INTO constraints (key, aggregate_type, aggregate_id) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET aggregate_type = excluded.aggregate_type, aggregate_id = excluded.aggregate_id`);
  // A state only moves forward: a late write-back never undoes a newer append.
  const putState = db.prepare(`INSERT INTO states (type, id, state, sequence, resource_owner, creation_date, change_date)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (type, id) DO UPDATE SET state = excluded.state, sequence = excluded.sequence,
      resource_owner = excluded.resource_owner, creation_date = excluded.creation_date, change_date = excluded.change_date
    WHERE excluded.sequence > states.sequence`);
  const insertSearch = db.prepare(`INSERT INTO user_search
    (id, org, username, email, display_name, first_name, last_name, state, email_verified, created, changed)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const searchOf = db.prepare(`SELECT ${SEARCH_COLUMNS.map(([field, column]) => `${column} AS ${field}`).join(', ')}
    FROM user_search WHERE id = ?`);
  // A change sets only the columns that differ, so SQLite rewrites only the indexes holding
  // them (a profile change: `changed`), not all eight. One statement per set of columns.
  const updates = new Map<string, StatementSync>();
  const putSearch = (r: SearchRow): void => {
    const old = searchOf.get(r.id) as Record<string, unknown> | undefined;
    if (!old) {
      insertSearch.run(
        r.id,
        r.org,
        r.username,
        r.email,
        r.displayName,
        r.firstName,
        r.lastName,
        r.state,
        r.emailVerified,
        r.created,
        r.changed,
      );
      return;
    }
    const changed = SEARCH_COLUMNS.filter(([field]) => old[field] !== r[field]);
    if (changed.length === 0) return;
    const sql = `UPDATE user_search SET ${changed.map(([, column]) => `${column} = ?`).join(', ')} WHERE id = ?`;
    let update = updates.get(sql);
    if (!update) updates.set(sql, (update = db.prepare(sql)));
    update.run(...changed.map(([field]) => r[field]), r.id);
  };

  const writes = {
    /** False when (aggregate type, id, sequence) exists. */
    insertEvent: (e: EventRow): boolean =>
      insertEvent.run(e.type, e.id, e.sequence, e.eventType, e.payload, e.createdAt, e.creator, e.resourceOwner, e.claims).changes > 0,
    eventExists: (type: string, id: string, sequence: number): boolean => eventExists.get(type, id, sequence) !== undefined,
    holder: (key: string) => holder.get(key) as { type: string; id: string } | undefined,
    setHolder: (key: string, type: string, id: string): void => void setHolder.run(key, type, id),
    /** The state and its search row, when the state is newer than the one stored; false otherwise. */
    putState(s: StateRow, search: SearchRow | null): boolean {
      if (putState.run(s.type, s.id, s.state, s.sequence, s.resourceOwner, s.creationDate, s.changeDate).changes === 0) return false;
      if (search) putSearch(search);
      return true;
    },
  };
  return writes;
}

export type Writes = ReturnType<typeof prepareWrites>;

export type AppendResult = { ok: true } | { conflict: 'sequence' } | { conflict: 'gap' } | { conflict: 'claim'; key: string };

/** One append inside the open transaction: its event, claims, state and search row, or nothing. */
export function writeAppend(w: Writes, row: AppendRow): AppendResult {
  const e = row.event;
  if (e.sequence > 1 && !row.checked && !w.eventExists(e.type, e.id, e.sequence - 1)) return { conflict: 'gap' };
  if (!w.insertEvent(e)) return { conflict: 'sequence' };
  for (const key of row.claims) {
    const held = w.holder(key);
    if (held && (held.type !== e.type || held.id !== e.id)) return { conflict: 'claim', key };
    if (!held) w.setHolder(key, e.type, e.id);
  }
  w.putState(row.state, row.search);
  return { ok: true };
}
