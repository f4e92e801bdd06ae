// The worker thread behind the SQLite event store (src/store/sqlite.ts): it owns the
// database connection, so no disk call runs on the main thread's event loop. One
// request per message, answered in order; an append request carries a whole batch,
// written as one transaction (one commit, one fsync) with a savepoint per append.
// Loaded by Node itself (not by tsx or vitest): erasable TypeScript only.
import type { StatementSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { UserFilter, UserSearch } from './read-models.ts';
import type { AppendRow, EventRow, SearchRow, StateRow } from './sqlite-rows.ts';
import { openDatabase, prepareWrites, writeAppend, type AppendResult } from './sqlite-schema.ts';
import { countQuery, searchQuery } from './sqlite-search.ts';

export type Request =
  | { op: 'open' }
  | { op: 'ping' }
  | { op: 'load'; type: string; ids: string[]; maxBytes?: number }
  | { op: 'catchUp'; type: string; id: string; after: number }
  | { op: 'append'; rows: AppendRow[] }
  | { op: 'putState'; state: StateRow; search: SearchRow | null }
  | { op: 'lookup'; key: string }
  | { op: 'events'; type: string; id: string; from: number; to: number }
  | { op: 'searchUsers'; search: UserSearch }
  | { op: 'countUsers'; filter: UserFilter }
  | { op: 'importBegin' }
  | { op: 'importEvents'; events: EventRow[] }
  | { op: 'importStates'; states: { state: StateRow; search: SearchRow | null }[] }
  | { op: 'importEnd'; commit: boolean; from: string }
  | { op: 'close' };

const db = openDatabase(workerData.path as string);
const writes = prepareWrites(db);

const STATE = `SELECT type, id, state, sequence, resource_owner AS resourceOwner, creation_date AS creationDate,
  change_date AS changeDate FROM states`;
const EVENT = `SELECT aggregate_type AS type, aggregate_id AS id, sequence, type AS eventType, payload,
  created_at AS createdAt, creator, resource_owner AS resourceOwner, claims FROM events`;
const read = {
  state: db.prepare(`${STATE} WHERE type = ? AND id = ?`),
  events: db.prepare(`${EVENT} WHERE aggregate_type = ? AND aggregate_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence`),
  holder: db.prepare('SELECT aggregate_type AS aggregateType, aggregate_id AS aggregateId FROM constraints WHERE key = ?'),
  anyEvent: db.prepare('SELECT 1 FROM events LIMIT 1'),
  meta: db.prepare('SELECT value FROM meta WHERE key = ?'),
  setMeta: db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
};

// Searches come in a bounded number of shapes (which filters, which sort): prepared once each.
const prepared = new Map<string, StatementSync>();
const statement = (sql: string): StatementSync => {
  let s = prepared.get(sql);
  if (!s) prepared.set(sql, (s = db.prepare(sql)));
  return s;
};

const tx = { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };

function inTransaction<T>(work: () => T): T {
  tx.begin.run();
  try {
    const result = work();
    tx.commit.run();
    return result;
  } catch (e) {
    if (db.isTransaction) tx.rollback.run();
    throw e;
  }
}

/** A batch of one needs no savepoint: the transaction is the append's (committed, or rolled back on a conflict). */
function appendAlone(row: AppendRow): AppendResult[] {
  tx.begin.run();
  try {
    const result = writeAppend(writes, row);
    ('ok' in result ? tx.commit : tx.rollback).run();
    return [result];
  } catch (e) {
    if (db.isTransaction) tx.rollback.run();
    throw e;
  }
}

const savepoint = {
  begin: db.prepare('SAVEPOINT append'),
  release: db.prepare('RELEASE append'),
  rollback: db.prepare('ROLLBACK TO append'),
};

/** One append of a batch: what it wrote stays, or none of it (its savepoint rolled back). */
function appendOne(row: AppendRow): AppendResult {
  savepoint.begin.run();
  let result: AppendResult;
  try {
    result = writeAppend(writes, row);
  } catch (e) {
    savepoint.rollback.run();
    savepoint.release.run();
    throw e;
  }
  if (!('ok' in result)) savepoint.rollback.run();
  savepoint.release.run();
  return result;
}

function handle(req: Request): unknown {
  switch (req.op) {
    case 'open':
      return {
        empty: read.anyEvent.get() === undefined,
        importedFrom: (read.meta.get('imported_from') as { value: string } | undefined)?.value ?? null,
      };
    case 'ping':
      return null;
    case 'load': {
      // With maxBytes: the rows whose states fit, in the order of ids, and where it stopped.
      const rows: StateRow[] = [];
      let weight = 0;
      for (const [i, id] of req.ids.entries()) {
        const row = read.state.get(req.type, id) as StateRow | undefined;
        if (!row) continue;
        weight += row.state.length;
        if (req.maxBytes !== undefined && weight > req.maxBytes) return { rows, stoppedAt: i };
        rows.push(row);
      }
      return { rows, stoppedAt: null };
    }
    case 'catchUp': {
      // The events after the stored state or after the caller's, whichever is further.
      const state = read.state.get(req.type, req.id) as StateRow | undefined;
      const from = Math.max(req.after, state?.sequence ?? 0) + 1;
      return {
        state: state && state.sequence > req.after ? state : null,
        events: read.events.all(req.type, req.id, from, Number.MAX_SAFE_INTEGER),
      };
    }
    case 'append':
      return req.rows.length === 1 ? appendAlone(req.rows[0]!) : inTransaction(() => req.rows.map(appendOne));
    case 'putState':
      return inTransaction(() => writes.putState(req.state, req.search));
    case 'lookup':
      return read.holder.get(req.key) ?? null;
    case 'events':
      return read.events.all(req.type, req.id, req.from, req.to);
    case 'searchUsers': {
      const q = searchQuery(req.search);
      return statement(q.sql).all(...q.params);
    }
    case 'countUsers': {
      const q = countQuery(req.filter);
      return (statement(q.sql).get(...q.params) as { n: number }).n;
    }
    // The import of an old log: one transaction over several messages, nothing else in between.
    case 'importBegin':
      db.exec('BEGIN IMMEDIATE');
      return null;
    case 'importEvents':
      for (const e of req.events) {
        if (!writes.insertEvent(e)) throw new Error(`event ${e.type} ${e.id} ${e.sequence} twice in the log`);
        for (const key of JSON.parse(e.claims) as string[]) writes.setHolder(key, e.type, e.id);
      }
      return null;
    case 'importStates':
      for (const { state, search } of req.states) writes.putState(state, search);
      return null;
    case 'importEnd':
      if (!req.commit) {
        if (db.isTransaction) db.exec('ROLLBACK');
        return null;
      }
      read.setMeta.run('imported_from', req.from);
      db.exec('COMMIT');
      return null;
    case 'close':
      db.close();
      return null;
  }
}

parentPort!.on('message', ({ id, req }: { id: number; req: Request }) => {
  let reply;
  try {
    reply = { id, result: handle(req) };
  } catch (e) {
    reply = { id, error: { message: (e as Error).message, code: (e as { code?: string }).code } };
  }
  parentPort!.postMessage(reply);
});
