// EventStore on MongoDB (or FerretDB v1): no transactions, no change streams,
// only single-document writes. See DESIGN.md section 3.
import { randomUUID } from 'node:crypto';
import {
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoClientClosedError,
  MongoServerError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type Collection,
  type Db,
  type ObjectId,
} from 'mongodb';
import {
  ConcurrencyError,
  ConstraintError,
  type AggregateType,
  type EventStore,
  type NewEvent,
  type Reducers,
  type Snapshot,
  type StoredEvent,
} from './port.ts';
import { UnavailableError } from '../errors.ts';
import { reduceEvents } from './reduce.ts';

export interface MongoStoreOptions {
  url: string;
  dbName: string;
  reducers: Reducers;
  /** How long an unconfirmed claim blocks others before it may be taken over. */
  claimGraceMs?: number;
  /** How long an operation waits for a reachable server before UnavailableError. */
  serverSelectionTimeoutMS?: number;
}

export const stateCollections: Record<AggregateType, string> = {
  instance: 'instances',
  org: 'orgs',
  user: 'users',
  idp: 'idps',
  project: 'projects',
};

type EventDoc = StoredEvent & { _id?: ObjectId };
interface StateDoc {
  _id: string;
  state: unknown;
  sequence: number;
  resourceOwner: string;
  creationDate: Date;
  changeDate: Date;
}
/** A claim; confirmed when the event (aggregateType, aggregateId, sequence) lists the key. */
interface ConstraintDoc {
  _id: string;
  aggregateType: AggregateType;
  aggregateId: string;
  sequence: number;
  claimedAt: Date;
  /** Tells apart two claims of one aggregate at one sequence, for conditional release and takeover. */
  token?: string;
}

// Server error codes that mean "try another node / later", not "your request is wrong".
const transientCodes = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

function isUnavailable(e: unknown): boolean {
  return (
    e instanceof MongoNetworkError || // includes timeouts and "connection pool cleared"
    e instanceof MongoServerSelectionError ||
    e instanceof MongoNotConnectedError ||
    e instanceof MongoServerClosedError ||
    e instanceof MongoClientClosedError ||
    e instanceof MongoTopologyClosedError ||
    (e instanceof MongoServerError && typeof e.code === 'number' && transientCodes.has(e.code))
  );
}

const isDuplicate = (e: unknown) => e instanceof MongoServerError && e.code === 11000;

function toEvent(doc: EventDoc): StoredEvent {
  const { _id, ...event } = doc;
  return { ...event, claims: event.claims ?? [] };
}

function warnNotSaved(type: AggregateType, id: string, e: unknown): void {
  console.warn(`mongo store: state document of ${type} ${id} not updated (caught up on read):`, (e as Error).message);
}

function toSnapshot<S>(doc: StateDoc): Snapshot<S> {
  const { _id, state, sequence, resourceOwner, creationDate, changeDate } = doc;
  return { id: _id, state: state as S, sequence, resourceOwner, creationDate, changeDate };
}

export async function createMongoStore(options: MongoStoreOptions): Promise<EventStore> {
  const grace = options.claimGraceMs ?? 30_000;
  let client: MongoClient | undefined;
  let db!: Db;
  let events!: Collection<EventDoc>;
  let constraints!: Collection<ConstraintDoc>;
  const states = (type: AggregateType) => db.collection<StateDoc>(stateCollections[type]);
  let closed = false;

  // A client whose first connect failed stays closed for good, so connecting is
  // ours: retried on the next operation. The unique index is what makes appends
  // safe, so nothing runs before it exists.
  async function connect(): Promise<void> {
    if (closed) throw new Error('mongo store is closed');
    const candidate = new MongoClient(options.url, {
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 2000,
      ignoreUndefined: true,
      promoteBuffers: true,
    });
    try {
      await candidate.connect();
      const candidateDb = candidate.db(options.dbName);
      await candidateDb
        .collection('events')
        .createIndex({ aggregateType: 1, aggregateId: 1, sequence: 1 }, { unique: true, name: 'aggregate_sequence' });
      [client, db] = [candidate, candidateDb];
      events = db.collection<EventDoc>('events');
      constraints = db.collection<ConstraintDoc>('constraints');
    } catch (e) {
      await candidate.close().catch(() => {});
      throw e;
    }
  }
  let connected: Promise<void> | undefined;
  const ready = () =>
    (connected ??= connect().catch((e: unknown) => {
      connected = undefined;
      throw e;
    }));

  async function run<T>(work: () => Promise<T>): Promise<T> {
    try {
      await ready();
      return await work();
    } catch (e) {
      throw isUnavailable(e) ? new UnavailableError('store unavailable', { cause: e }) : e;
    }
  }

  async function latestSequence(type: AggregateType, id: string): Promise<number> {
    const last = await events
      .find({ aggregateType: type, aggregateId: id }, { projection: { _id: 0, sequence: 1 } })
      .sort({ sequence: -1 })
      .limit(1)
      .next();
    return last?.sequence ?? 0;
  }

  let groupMaxSupported = true;
  async function latestSequences(type: AggregateType, ids: string[]): Promise<Map<string, number>> {
    if (groupMaxSupported) {
      try {
        const rows = await events
          .aggregate<{ _id: string; sequence: number }>([
            { $match: { aggregateType: type, aggregateId: { $in: ids } } },
            { $group: { _id: '$aggregateId', sequence: { $max: '$sequence' } } },
          ])
          .toArray();
        return new Map(rows.map((r) => [r._id, r.sequence]));
      } catch (e) {
        if (!(e instanceof MongoServerError && e.code === 238)) throw e;
        groupMaxSupported = false; // FerretDB v1: "$group accumulator $max is not implemented yet"
      }
    }
    const sequences = await Promise.all(ids.map((id) => latestSequence(type, id)));
    return new Map(ids.map((id, i) => [id, sequences[i]!]));
  }

  /** Conditional on sequence: an older writer never overwrites a newer document. */
  async function saveState(type: AggregateType, snap: Snapshot<unknown>): Promise<void> {
    const { id, ...fields } = snap;
    // A duplicate key means a document with a sequence >= ours exists, or a racing
    // upsert inserted first; the second attempt settles which.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await states(type).updateOne({ _id: id, sequence: { $lt: snap.sequence } }, { $set: fields }, { upsert: true });
        return;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
      }
    }
  }

  async function catchUp<S>(type: AggregateType, id: string, doc: StateDoc | null, latest: number) {
    const base = doc ? toSnapshot<S>(doc) : null;
    const from = base?.sequence ?? 0;
    if (from >= latest) return base;
    const behind = await events
      .find({ aggregateType: type, aggregateId: id, sequence: { $gt: from } })
      .sort({ sequence: 1 })
      .toArray();
    const snap = reduceEvents<S>(options.reducers[type], base, behind.map(toEvent));
    // The events are the truth: a failed write-back is retried by the next read.
    if (snap) await saveState(type, snap).catch((e: unknown) => warnNotSaved(type, id, e));
    return snap;
  }

  async function loadOne<S>(type: AggregateType, id: string): Promise<Snapshot<S> | null> {
    const [doc, latest] = await Promise.all([states(type).findOne({ _id: id }), latestSequence(type, id)]);
    return catchUp<S>(type, id, doc, latest);
  }

  async function isConfirmed(claim: ConstraintDoc): Promise<boolean> {
    const { aggregateType, aggregateId, sequence } = claim;
    const event = await events.findOne({ aggregateType, aggregateId, sequence }, { projection: { claims: 1 } });
    return event?.claims?.includes(claim._id) ?? false;
  }

  const isStale = (claim: ConstraintDoc) => Date.now() - claim.claimedAt.getTime() > grace;

  function sameClaim(claim: ConstraintDoc) {
    const { _id, aggregateType, aggregateId, sequence, claimedAt, token } = claim;
    return { _id, aggregateType, aggregateId, sequence, claimedAt, ...(token ? { token } : {}) };
  }

  /** Claims key for event; returns the claim to release on failure, or null when an earlier event of the same aggregate already holds it. */
  async function claim(key: string, event: NewEvent): Promise<ConstraintDoc | null> {
    const { aggregateType, aggregateId, sequence } = event;
    for (;;) {
      const mine: ConstraintDoc = {
        _id: key,
        aggregateType,
        aggregateId,
        sequence,
        claimedAt: new Date(),
        token: randomUUID(),
      };
      try {
        await constraints.insertOne(mine);
        return mine;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
      }
      const holder = await constraints.findOne({ _id: key });
      if (!holder) continue; // released meanwhile
      const confirmed = await isConfirmed(holder);
      if (holder.aggregateType === aggregateType && holder.aggregateId === aggregateId) {
        if (holder.sequence > sequence || (confirmed && holder.sequence === sequence)) {
          throw new ConcurrencyError(aggregateType, aggregateId, sequence);
        }
        if (confirmed) return null;
        // An unconfirmed claim of our own aggregate (a crashed or concurrent attempt): ours now.
      } else if (confirmed || !isStale(holder)) {
        throw new ConstraintError(key);
      }
      const { _id, ...replacement } = mine;
      const taken = await constraints.replaceOne(sameClaim(holder), replacement);
      if (taken.matchedCount === 1) return mine;
    }
  }

  /** Best effort: a claim left behind is taken over after the grace period. */
  async function release(claims: ConstraintDoc[]): Promise<void> {
    await Promise.allSettled(
      claims.map(async (c) => {
        // A same-aggregate writer at our sequence may have won with this very claim.
        if (!(await isConfirmed(c))) await constraints.deleteOne(sameClaim(c));
      }),
    );
  }

  const store: EventStore = {
    load: (type, id) => run(() => loadOne(type, id)),

    loadMany: <S>(type: AggregateType, ids: readonly string[]) =>
      run(async () => {
        const unique = [...new Set(ids)];
        const result = new Map<string, Snapshot<S>>();
        if (unique.length === 0) return result;
        const [docs, latest] = await Promise.all([
          states(type)
            .find({ _id: { $in: unique } })
            .toArray(),
          latestSequences(type, unique),
        ]);
        const byId = new Map(docs.map((d) => [d._id, d]));
        const snaps = await Promise.all(
          unique.map((id) => catchUp<S>(type, id, byId.get(id) ?? null, latest.get(id) ?? 0)),
        );
        for (const snap of snaps) if (snap) result.set(snap.id, snap);
        return result;
      }),

    append: <S>(event: NewEvent, opts?: { claims?: string[] }) =>
      run(async () => {
        const { aggregateType, aggregateId, sequence } = event;
        const current = await loadOne<S>(aggregateType, aggregateId);
        const expected = (current?.sequence ?? 0) + 1;
        if (sequence < expected) throw new ConcurrencyError(aggregateType, aggregateId, sequence);
        if (sequence > expected)
          throw new Error(`sequence gap: ${aggregateType} ${aggregateId} expects ${expected}, got ${sequence}`);

        const claims = [...new Set(opts?.claims ?? [])];
        const stored: StoredEvent = {
          aggregateType,
          aggregateId,
          sequence,
          type: event.type,
          payload: event.payload,
          creator: event.creator,
          resourceOwner: event.resourceOwner,
          createdAt: new Date(),
          claims,
        };
        const results = await Promise.allSettled(claims.map((key) => claim(key, event)));
        const taken = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
        const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        try {
          if (failures.length > 0) throw failures.find((f) => f instanceof ConcurrencyError) ?? failures[0];
          await events.insertOne({ ...stored });
        } catch (e) {
          await release(taken);
          throw isDuplicate(e) ? new ConcurrencyError(aggregateType, aggregateId, sequence) : e;
        }

        const snapshot = reduceEvents<S>(options.reducers[aggregateType], current, [stored])!;
        // The event is committed; a stale state document is caught up on the next read.
        await saveState(aggregateType, snapshot).catch((e: unknown) => warnNotSaved(aggregateType, aggregateId, e));
        return { event: stored, snapshot };
      }),

    lookup: (key) =>
      run(async () => {
        const holder = await constraints.findOne({ _id: key });
        if (!holder || (isStale(holder) && !(await isConfirmed(holder)))) return null;
        return { aggregateType: holder.aggregateType, aggregateId: holder.aggregateId };
      }),

    events: (type, id) =>
      run(async () => {
        const docs = await events.find({ aggregateType: type, aggregateId: id }).sort({ sequence: 1 }).toArray();
        return docs.map(toEvent);
      }),

    ping: () =>
      run(async () => {
        await db.command({ ping: 1 });
      }),

    close: async () => {
      closed = true;
      await connected?.catch(() => {});
      await client?.close();
    },
  };

  try {
    await run(async () => {});
  } catch (e) {
    if (!(e instanceof UnavailableError)) throw e;
    console.warn('mongo store: server unreachable at start; operations fail until it answers');
  }
  return store;
}
