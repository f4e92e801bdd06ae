// The MongoDB store's reads (src/store/mongo.ts): state documents by id, a claim's holder,
// an aggregate's events, the user search. Each one command (see the budget at the top of
// mongo.ts), bounded by readTimeoutMS (MongoConnection.runRead).
import type { Filter, FindCursor } from 'mongodb';
import { ReadLimitError } from '../errors.ts';
import type { MongoClaims } from './mongo-claims.ts';
import type { MongoConnection } from './mongo-connection.ts';
import type { StateDoc } from './mongo-docs.ts';
import type { MongoIndexes } from './mongo-indexes.ts';
import { toEvent, toSnapshot, type MongoStates } from './mongo-states.ts';
import { SEARCH_FIELD, userFilterQuery, userSearchQuery } from './mongo-user-search.ts';
import type { AggregateType, EventStore, Snapshot } from './port.ts';
import type { UserSearch } from './read-models.ts';
import { snapshotWeight } from './weight.ts';

export type MongoReads = Pick<EventStore, 'load' | 'loadMany' | 'lookup' | 'events' | 'eventRange' | 'searchUsers' | 'countUsers' | 'ping'>;

/**
 * The cursor's documents, stopping (and closing it) before the one whose state would bring
 * their weight past maxBytes: the driver holds at most one batch beyond what was kept.
 */
async function withinBudget(cursor: FindCursor<StateDoc>, maxBytes: number | undefined): Promise<StateDoc[]> {
  if (maxBytes === undefined) return cursor.toArray();
  const docs: StateDoc[] = [];
  let weight = 0;
  try {
    for await (const doc of cursor) {
      weight += snapshotWeight(doc);
      if (weight > maxBytes) throw new ReadLimitError(maxBytes, docs.length);
      docs.push(doc);
    }
  } finally {
    await cursor.close();
  }
  return docs;
}

export function createMongoReads(conn: MongoConnection, states: MongoStates, claims: MongoClaims, indexes: MongoIndexes): MongoReads {
  const { run, runRead } = conn;
  return {
    load: (type, id) => runRead((signal) => states.loadOne(type, id, signal)),

    loadMany: <S>(type: AggregateType, ids: readonly string[], maxBytes?: number) =>
      runRead(async (signal) => {
        const unique = [...new Set(ids)];
        const result = new Map<string, Snapshot<S>>();
        if (unique.length === 0) return result;
        const docs =
          unique.length === 1
            ? [await conn.states(type).findOne({ _id: unique[0]! }, { signal })].filter((d) => d !== null)
            : await withinBudget(conn.states(type).find({ _id: { $in: unique } }, { signal }), maxBytes);
        // One document comes whole (at most 16 MB): it is weighed after the read.
        if (unique.length === 1 && maxBytes !== undefined && docs[0] && snapshotWeight(docs[0]) > maxBytes)
          throw new ReadLimitError(maxBytes, 0);
        for (const doc of docs) result.set(doc._id, toSnapshot<S>(doc));
        return result;
      }),

    lookup: (key) =>
      runRead(async (signal) => {
        const holder = await conn.constraints.findOne({ _id: key }, { signal });
        if (!holder || (claims.isStale(holder) && !(await claims.isConfirmed(holder, signal)))) return null;
        return { aggregateType: holder.aggregateType, aggregateId: holder.aggregateId };
      }),

    events: (type, id) =>
      runRead(async (signal) => {
        const docs = await conn.events.find({ aggregateType: type, aggregateId: id }, { signal }).sort({ sequence: 1 }).toArray();
        return docs.map(toEvent);
      }),

    eventRange: (type, id, from, to) =>
      runRead(async (signal) => {
        const range = { aggregateType: type, aggregateId: id, sequence: { $gte: from, $lte: to } };
        const docs = await conn.events.find(range, { signal }).sort({ sequence: 1 }).toArray();
        return docs.map(toEvent);
      }),

    // The search set-up (indexes, the backfill of older documents) runs once, as long as it takes:
    // only the search itself is bounded.
    searchUsers: <S>(search: UserSearch) =>
      run(async () => {
        if (search.limit <= 0) return [];
        await indexes.prepareSearch();
        return runRead(async (signal) => {
          const { filter, sort, hint } = userSearchQuery(search);
          const cursor = conn
            .states('user')
            .find(filter as Filter<StateDoc>, { projection: { [SEARCH_FIELD]: 0 }, signal, ...(hint && { hint }) })
            .sort(sort)
            .limit(search.limit);
          const docs = await withinBudget(cursor, search.maxBytes);
          return docs.map((d) => toSnapshot<S>(d));
        });
      }),

    countUsers: (filter) =>
      run(async () => {
        await indexes.prepareSearch();
        return runRead((signal) => conn.states('user').countDocuments(userFilterQuery(filter) as Filter<StateDoc>, { signal }));
      }),

    ping: () =>
      runRead(async (signal) => {
        await conn.db.command({ ping: 1 }, { signal });
      }),
  };
}
