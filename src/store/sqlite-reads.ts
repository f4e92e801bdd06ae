// The SQLite store's reads (src/store/sqlite.ts): snapshots from memory when it holds them,
// else from the worker (and remembered); catchUp; events; the user search.
import { ReadLimitError } from '../errors.ts';
import { keyOf } from './pending-appends.ts';
import type { AggregateType, EventStore, Reducers, Snapshot, UserProjection } from './port.ts';
import type { UserSearch } from './read-models.ts';
import { reduceEvents } from './reduce.ts';
import type { SqliteClient } from './sqlite-client.ts';
import type { SqliteMemory } from './sqlite-memory.ts';
import { searchRow, stateRow, type EventRow, type StateRow } from './sqlite-rows.ts';
import { snapshotWeight } from './weight.ts';

/** The worker's answer to a load: the rows found, and where it stopped for maxBytes (null: it did not). */
type Loaded = { rows: StateRow[]; stoppedAt: number | null };

export type SqliteReads = Pick<
  EventStore,
  'load' | 'loadMany' | 'catchUp' | 'lookup' | 'events' | 'eventRange' | 'searchUsers' | 'countUsers' | 'ping'
>;

// The search answers ids and sequences; a user in memory is taken from there, the others
// are loaded in a second call. A user written after the search read it comes as it is
// now: a whole user, newer than the search saw, as if it had changed just after the answer.
async function searchUsers<S>(worker: SqliteClient, memory: SqliteMemory, search: UserSearch): Promise<Snapshot<S>[]> {
  const found = await worker.call<{ id: string; sequence: number }[]>({ op: 'searchUsers', search });
  const held = (id: string, sequence: number) => {
    const hit = memory.cache.get(keyOf('user', id));
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
    if (page[i] === undefined && row) page[i] = memory.remember('user', memory.fromStateRow(row), row.state); // or the newer one held
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
}

export function createSqliteReads(
  worker: SqliteClient,
  memory: SqliteMemory,
  reducers: Reducers,
  userFields: UserProjection | undefined,
): SqliteReads {
  const { cache, pending, remember, fromStateRow, fromEventRows } = memory;
  return {
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

    lookup: async (key) => {
      const holder = await worker.call<{ aggregateType: AggregateType; aggregateId: string } | null>({ op: 'lookup', key });
      return holder && { aggregateType: holder.aggregateType, aggregateId: holder.aggregateId };
    },

    events: async (type, id) =>
      fromEventRows(await worker.call<EventRow[]>({ op: 'events', type, id, from: 1, to: Number.MAX_SAFE_INTEGER })),

    eventRange: async (type, id, from, to) => fromEventRows(await worker.call<EventRow[]>({ op: 'events', type, id, from, to })),

    searchUsers: (search) => searchUsers(worker, memory, search),

    countUsers: async (filter) => worker.call<number>({ op: 'countUsers', filter }),

    ping: async () => {
      await worker.call({ op: 'ping' });
    },
  };
}
