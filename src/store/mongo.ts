// EventStore on MongoDB (or FerretDB v1): no transactions, no change streams,
// only single-document writes. See DESIGN.md section 3 and the protocol in port.ts.
//
// Commands per call, the budget's unit (DESIGN.md section 10; counted by
// test/store.round-trips.test.ts through the driver's command monitoring):
//   load        1 (findOne of the state document; the events are not looked at)
//   loadMany    1 (one find with $in)
//   append      1 insert into events + 1 update of the state document, after
//               1 insert per claim (in parallel); no read when given its base
//   catchUp     1 find of the events after the known sequence (+1 write-back)
//   eventRange  1 find of a sequence range on the (aggregate, sequence) index
//   searchUsers 1 find on a search index, countUsers 1 aggregate (src/store/mongo-user-search.ts;
//               the first one after start waits for the indexes and the backfill)
// Every command of these calls is reported to onCommand listeners (metrics, tests).
//
// Beside them, off the request path, a repair loop in every gateway bounds how long
// a state document stays behind its events after a crash between the two writes
// (src/store/mongo-repair.ts; its commands are not reported to onCommand listeners).
//
// Sharding (docs/sharding.md, the plan in mongo-shard-keys.ts): every find, update and
// delete of a call above names its collection's whole shard key (events: aggregateType
// and aggregateId; the others: _id), so a mongos sends it to one shard (loadMany and the
// repair loop's state reads: to the shards of the ids they list). Only searchUsers,
// countUsers, the repair sweep and the search backfill scatter. The client writes with
// majority write concern (journaled) and reads from the primary at read concern "local",
// whatever MONGODB_URL says. After connect, off the request path, the store builds the
// plan's other indexes, the hashed shard key ones included (not on FerretDB: it has none).
import { AsyncLocalStorage } from 'node:async_hooks';
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
  type Document,
  type Filter,
  type FindCursor,
  type ObjectId,
} from 'mongodb';
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
import { ReadLimitError, UnavailableError } from '../errors.ts';
import { snapshotWeight } from './weight.ts';
import { backfillUserSearch, ensureUserSearchIndexes, SEARCH_FIELD, userFilterQuery, userSearchQuery } from './mongo-user-search.ts';
import {
  eventCreatedAtIndex,
  eventSequenceIndex,
  mongoConcerns,
  SHARD_KEY_INDEX,
  shardPlan,
  stateCollections,
} from './mongo-shard-keys.ts';
import { reduceEvents } from './reduce.ts';
import type { ConstraintDoc, EventDoc, StateDoc } from './mongo-docs.ts';
import { createRepairLoop, type RepairOptions, type RepairStats } from './mongo-repair.ts';

export interface MongoStoreOptions {
  url: string;
  dbName: string;
  reducers: Reducers;
  /** How long an unconfirmed claim blocks others before it may be taken over. */
  claimGraceMs?: number;
  /** How long an operation waits for a reachable server before UnavailableError. */
  serverSelectionTimeoutMS?: number;
  /**
   * How long a read (load, lookup, events, searches, ping) may wait for its answer before
   * UnavailableError: a stalled server (connections up, no answer) costs a request this long,
   * not the ~40 s the driver's monitoring takes to give the server up. Writes are not cut, nor
   * is the lookup of an insert whose answer was lost, nor the search set-up: their outcome
   * decides what is stored. 0: no bound.
   */
  readTimeoutMS?: number;
  /** Called for every command this store's calls send (the driver's command monitoring), e.g. for metrics. */
  onCommand?: MongoCommandListener;
  /** From the first command on, what inspectCommands reports (tests only: bodies hold user data). */
  inspect?: (command: InspectedCommand) => void;
  /** The background repair of state documents left behind their events; false: none (tools, tests). */
  repair?: RepairOptions | false;
  /** What user searches look at (src/model/users.ts userSearchFields); without it searchUsers and countUsers throw. */
  userFields?: UserProjection;
}

/** One command as the driver's command monitoring reports it: names only, never a payload. */
export interface MongoCommandEvent {
  phase: 'started' | 'succeeded' | 'failed';
  /** Pairs a command's start with its end. */
  requestId: number;
  /** find, insert, update, aggregate, … */
  command: string;
  /** The collection the command works on, when it names one. */
  collection?: string;
}
export type MongoCommandListener = (event: MongoCommandEvent) => void;

/** A command as the driver sent it, body and all (inspectCommands). */
export interface InspectedCommand {
  /** find, insert, update, aggregate, … */
  command: string;
  /** The collection the command works on, when it names one. */
  collection?: string;
  /** The command document: filters, documents, write concern (user data: never for logs). */
  body: Readonly<Document>;
  /** Sent by the store's own background work (repair loop, index builds, search backfill), not by a call. */
  background: boolean;
}

/** What indexes() found: the indexes of the plan this server cannot build, as `collection.index`. */
export interface IndexReport {
  /** FerretDB has no hashed indexes (nor sharding): the shard key indexes are left out there. */
  unsupported: string[];
}

export interface MongoEventStore extends EventStore {
  /** Calls listener for every command the store's calls send from now on; returns the function that stops it. */
  onCommand(listener: MongoCommandListener): () => void;
  /** The repair loop's counters (all 0 when it is off). */
  readonly repairStats: Readonly<RepairStats>;
  /**
   * Calls listener for every command the store sends from now on, its body included and
   * background work too: for tests that check what commands carry (test/store.mongo-sharding.test.ts).
   * Never for logs or metrics (bodies hold user data). Returns the function that stops it.
   */
  inspectCommands(listener: (command: InspectedCommand) => void): () => void;
  /**
   * Waits for the indexes of the sharding plan (mongo-shard-keys.ts), built off the request
   * path after connect (the search ones only with the userFields option); builds what failed again.
   */
  indexes(): Promise<IndexReport>;
}

export { stateCollections };
export type { RepairOptions, RepairStats };

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
/** A duplicate key on `_id`, not on (aggregate, sequence): the driver's retry met its own document. */
const duplicateOfId = (e: unknown) => e instanceof MongoServerError && (e.keyPattern?._id !== undefined || /index: _id_ /.test(e.message));
/**
 * `work`, or UnavailableError once `ms` have passed without its answer (0: no bound). The driver
 * has no bound of its own on an answer that never comes (its timeoutMS does nothing in this
 * version, it warns so): only its monitoring gives a stalled server up, after about 40 s. At the
 * deadline `work`'s signal is aborted too: the driver leaves its pool's wait queue, or closes the
 * connection its command waits on, so reads given up during a long stall do not pile up.
 */
function withDeadline<T>(work: (signal: AbortSignal | undefined) => Promise<T>, ms: number): Promise<T> {
  if (!ms) return work(undefined);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new UnavailableError(`store unavailable: no answer within ${ms} ms`);
      reject(error);
      controller.abort(error);
    }, ms);
  });
  const running = work(controller.signal);
  running.catch(() => {}); // once given up, its failure is nobody's
  return Promise.race([running, late]).finally(() => clearTimeout(timer));
}

function toEvent(doc: EventDoc): StoredEvent {
  const { _id, ...event } = doc;
  return { ...event, claims: event.claims ?? [] };
}

function warnNotSaved(type: AggregateType, id: string, e: unknown): void {
  console.warn(`mongo store: state document of ${type} ${id} not updated (caught up on its next write):`, (e as Error).message);
}

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

function toSnapshot<S>(doc: StateDoc): Snapshot<S> {
  const { _id, state, sequence, resourceOwner, creationDate, changeDate } = doc;
  return { id: _id, state: state as S, sequence, resourceOwner, creationDate, changeDate };
}

export async function createMongoStore(options: MongoStoreOptions): Promise<MongoEventStore> {
  const grace = options.claimGraceMs ?? 30_000;
  const listeners = new Set<MongoCommandListener>(options.onCommand ? [options.onCommand] : []);
  const inspectors = new Set<(command: InspectedCommand) => void>(options.inspect ? [options.inspect] : []);
  // The repair loop runs inside this context; its commands are not reported. A reply
  // is paired with its command by requestId, whatever context it arrives in.
  const background = new AsyncLocalStorage<true>();
  const unreported = new Set<number>();
  const emit = (event: MongoCommandEvent) => {
    if (event.phase === 'started' && background.getStore()) {
      if (unreported.size > 10_000) unreported.clear(); // replies that never came (a dropped connection)
      unreported.add(event.requestId);
    }
    const hidden = event.phase === 'started' ? unreported.has(event.requestId) : unreported.delete(event.requestId);
    if (hidden) return;
    for (const listener of listeners) listener(event);
  };
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
      monitorCommands: true,
      // Over the URL's: the append protocol and reads after a conflict rely on them (mongo-shard-keys.ts).
      ...mongoConcerns,
    });
    candidate.on('commandStarted', (e) => {
      const target = e.command[e.commandName];
      const collection = typeof target === 'string' ? { collection: target } : {};
      for (const inspect of inspectors)
        inspect({ command: e.commandName, ...collection, body: e.command, background: background.getStore() === true });
      emit({ phase: 'started', requestId: e.requestId, command: e.commandName, ...collection });
    });
    candidate.on('commandSucceeded', (e) => emit({ phase: 'succeeded', requestId: e.requestId, command: e.commandName }));
    candidate.on('commandFailed', (e) => emit({ phase: 'failed', requestId: e.requestId, command: e.commandName }));
    try {
      await candidate.connect();
      const candidateDb = candidate.db(options.dbName);
      const { key, ...unique } = eventSequenceIndex;
      await candidateDb.collection('events').createIndex(key, unique);
      [client, db] = [candidate, candidateDb];
      events = db.collection<EventDoc>('events');
      constraints = db.collection<ConstraintDoc>('constraints');
      prepareSearch().catch(() => {}); // awaited (and retried) by the first search
      ensureCreatedAt().catch(() => {}); // awaited (and retried) by the repair loop
      prepareShardKeys().catch((e: unknown) => {
        if (closed) return; // closed before they were built: nothing to say
        console.warn(
          'mongo store: shard key indexes not built (sharding a non-empty collection needs them; docs/sharding.md); retried by the next start:',
          (e as Error).message,
        );
      });
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

  /** run, for a read: UnavailableError past readTimeoutMS, and the driver's call aborted through `signal`. */
  const runRead = <T>(work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> =>
    withDeadline((signal) => run(() => work(signal)), options.readTimeoutMS ?? 0);

  // A user's searchable fields go with its state, in the same update: no extra round trip.
  const withSearch = (type: AggregateType, fields: Omit<Snapshot<unknown>, 'id'>) =>
    type === 'user' && options.userFields ? { ...fields, [SEARCH_FIELD]: options.userFields(fields.state) } : fields;

  // The search indexes, and `search` for documents written before it existed: off the
  // request path (its commands are not reported), once per store unless it fails.
  let searchReady: Promise<void> | undefined;
  function prepareSearch(): Promise<void> {
    const project = options.userFields;
    if (!project) return Promise.reject(new Error('mongo store: user search needs the userFields option'));
    return (searchReady ??= background
      .run(true, async () => {
        const users = db.collection(stateCollections.user);
        await ensureUserSearchIndexes(users);
        await backfillUserSearch(users, project);
      })
      .catch((e: unknown) => {
        searchReady = undefined;
        throw e;
      }));
  }

  // The events' range on creation time, for the repair loop (built in the background,
  // not awaited by connect: a large collection takes a while).
  let createdAtIndex: Promise<void> | undefined;
  function ensureCreatedAt(): Promise<void> {
    const { key, ...named } = eventCreatedAtIndex;
    return (createdAtIndex ??= background
      .run(true, () => events.createIndex(key, named))
      .then(
        () => {},
        (e: unknown) => {
          createdAtIndex = undefined;
          throw e;
        },
      ));
  }

  // The hashed indexes of the shard keys (mongo-shard-keys.ts), which sh.shardCollection
  // needs on a non-empty collection: off the request path, once per store unless it fails.
  // A server that has no hashed indexes (FerretDB, which has no sharding either) gets none.
  let shardKeysReady: Promise<IndexReport> | undefined;
  function prepareShardKeys(): Promise<IndexReport> {
    return (shardKeysReady ??= background
      .run(true, async () => {
        const ferret = typeof (await db.command({ buildInfo: 1 })).ferretdbVersion === 'string';
        const unsupported: string[] = [];
        for (const [name, plan] of Object.entries(shardPlan)) {
          const index = plan.indexes.find((i) => i.name === SHARD_KEY_INDEX);
          if (!index) continue;
          if (ferret) {
            unsupported.push(`${name}.${SHARD_KEY_INDEX}`);
            continue;
          }
          const { key, ...named } = index;
          try {
            await db.collection(name).createIndex(key, named);
          } catch (e) {
            // 85 IndexOptionsConflict: the same key under another name (made by an operator) serves as well.
            if (!(e instanceof MongoServerError && e.code === 85)) throw e;
          }
        }
        return { unsupported };
      })
      .catch((e: unknown) => {
        shardKeysReady = undefined;
        throw e;
      }));
  }

  /**
   * Conditional on sequence: an older writer never overwrites a newer document.
   * True when this call wrote it; false when one at this sequence or newer was there.
   */
  async function saveState(type: AggregateType, snap: Snapshot<unknown>): Promise<boolean> {
    const { id, ...fields } = snap;
    // A duplicate key means a document with a sequence >= ours exists, or a racing
    // upsert inserted first; the second attempt settles which.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const result = await states(type).updateOne(
          { _id: id, sequence: { $lt: snap.sequence } },
          { $set: withSearch(type, fields) },
          { upsert: true },
        );
        return result.modifiedCount + result.upsertedCount > 0;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
      }
    }
    return false;
  }

  const saveOrWarn = (type: AggregateType, snap: Snapshot<unknown>) =>
    saveState(type, snap).catch((e: unknown) => {
      warnNotSaved(type, snap.id, e);
      return false;
    });

  /**
   * Folds the events after `known` into it (known null: from the first event) and
   * writes the state document back when there were any. One find on the hot path's
   * miss only: after a ConcurrencyError, or for an append given no base.
   */
  async function catchUpFrom<S>(
    type: AggregateType,
    id: string,
    known: Snapshot<S> | null,
    // The events are the truth: a failed write-back is retried by the next catch-up.
    save: (type: AggregateType, snap: Snapshot<S>) => Promise<boolean> = saveOrWarn,
  ): Promise<Snapshot<S> | null> {
    const behind = await events
      .find({ aggregateType: type, aggregateId: id, sequence: { $gt: known?.sequence ?? 0 } })
      .sort({ sequence: 1 })
      .toArray();
    if (behind.length === 0) return known;
    const snap = reduceEvents<S>(options.reducers[type], known, behind.map(toEvent));
    if (snap) await save(type, snap);
    return snap;
  }

  /** The state document as stored: one findOne, no look at the events (see port.ts). */
  async function loadOne<S>(type: AggregateType, id: string, signal?: AbortSignal): Promise<Snapshot<S> | null> {
    const doc = await states(type).findOne({ _id: id }, { signal });
    return doc ? toSnapshot<S>(doc) : null;
  }

  // A state write that failed after its event was committed (the process lives on):
  // repaired in the background, so reads do not serve the old state until the next
  // write. A crash in between is repaired by that next write (see port.ts).
  const repairs = new Set<NodeJS.Timeout>();
  function repairLater(type: AggregateType, id: string, base: Snapshot<unknown> | null, attempt = 1): void {
    if (closed || attempt > 5) return;
    const timer = setTimeout(
      () => {
        repairs.delete(timer);
        run(async () => {
          const doc = await loadOne(type, id);
          // Settled when the document has caught up (by us or by a later write).
          const from = doc && doc.sequence > (base?.sequence ?? 0) ? doc : base;
          const caught = await catchUpFrom(type, id, from);
          const saved = await loadOne(type, id);
          if ((saved?.sequence ?? 0) < (caught?.sequence ?? 0)) throw new Error('state document still behind');
        }).catch(() => repairLater(type, id, base, attempt + 1));
      },
      250 * 2 ** attempt,
    );
    timer.unref();
    repairs.add(timer);
  }

  // A state document left behind its events by a crash is caught up within about graceMs +
  // intervalMs, with no read added to any request.
  const repairLoop = createRepairLoop(options.repair, {
    events: () => events,
    states,
    ensureCreatedAt,
    catchUp: async (type, id, save) => catchUpFrom(type, id, await loadOne(type, id), save),
    saveState,
    isUnavailable,
    runInBackground: (pass) => background.run(true, () => run(pass)),
    isClosed: () => closed,
  });

  async function isConfirmed(claim: ConstraintDoc, signal?: AbortSignal): Promise<boolean> {
    const { aggregateType, aggregateId, sequence } = claim;
    const event = await events.findOne({ aggregateType, aggregateId, sequence }, { projection: { claims: 1 }, signal });
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

  /**
   * Whether an event whose insert failed without a definite answer is stored after all: asked
   * once, waiting for the answer as long as the insert would (a bound here would answer
   * UNAVAILABLE for an event that was written). Undefined when the lookup failed too.
   */
  async function wasWritten(id: ObjectId): Promise<boolean | undefined> {
    try {
      return (await events.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
    } catch {
      return undefined;
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

  const store: MongoEventStore = {
    onCommand(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },

    inspectCommands(listener) {
      inspectors.add(listener);
      return () => void inspectors.delete(listener);
    },

    indexes: () =>
      run(async () => {
        await ensureCreatedAt();
        if (options.userFields) await prepareSearch();
        return prepareShardKeys();
      }),

    repairStats: repairLoop.stats,

    load: (type, id) => runRead((signal) => loadOne(type, id, signal)),

    loadMany: <S>(type: AggregateType, ids: readonly string[], maxBytes?: number) =>
      runRead(async (signal) => {
        const unique = [...new Set(ids)];
        const result = new Map<string, Snapshot<S>>();
        if (unique.length === 0) return result;
        const docs =
          unique.length === 1
            ? [await states(type).findOne({ _id: unique[0]! }, { signal })].filter((d) => d !== null)
            : await withinBudget(states(type).find({ _id: { $in: unique } }, { signal }), maxBytes);
        // One document comes whole (at most 16 MB): it is weighed after the read.
        if (unique.length === 1 && maxBytes !== undefined && docs[0] && snapshotWeight(docs[0]) > maxBytes)
          throw new ReadLimitError(maxBytes, 0);
        for (const doc of docs) result.set(doc._id, toSnapshot<S>(doc));
        return result;
      }),

    catchUp: (type, id, known) => run(() => catchUpFrom(type, id, known)),

    append: <S>(event: NewEvent, opts?: AppendOptions<S>) =>
      run(async () => {
        const { aggregateType, aggregateId, sequence } = event;
        let current: Snapshot<S> | null;
        if (opts?.base !== undefined) {
          // The caller's snapshot is the expected state: nothing is read. A stale one
          // makes the insert below a duplicate (ConcurrencyError), never a lost update.
          current = opts.base;
          if (current && current.id !== aggregateId) throw new Error(`append: the base is ${current.id}, the event is for ${aggregateId}`);
          if (sequence !== (current?.sequence ?? 0) + 1)
            throw new Error(`append: sequence ${sequence} does not follow the base's ${current?.sequence ?? 0}`);
        } else {
          current = await catchUpFrom<S>(aggregateType, aggregateId, await loadOne<S>(aggregateType, aggregateId));
          const expected = (current?.sequence ?? 0) + 1;
          if (sequence < expected) throw new ConcurrencyError(aggregateType, aggregateId, sequence);
          if (sequence > expected) throw new Error(`sequence gap: ${aggregateType} ${aggregateId} expects ${expected}, got ${sequence}`);
        }

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
        // The driver gives the document its _id before sending it: what tells, after a timeout or
        // a dropped connection, whether the server wrote it after all.
        const doc: EventDoc = { ...stored };
        try {
          if (failures.length > 0) throw failures.find((f) => f instanceof ConcurrencyError) ?? failures[0];
          await events.insertOne(doc);
        } catch (e) {
          // A lost answer (timeout, dropped connection), or a duplicate key from the driver's
          // retry of a write the server had made: this very document may be stored.
          const mayBeOurs =
            failures.length === 0 && doc._id !== undefined && (isDuplicate(e) ? duplicateOfId(e) : !(e instanceof ConcurrencyError));
          const written = mayBeOurs ? await wasWritten(doc._id!) : false;
          if (written !== true) {
            // Not known (the server gone again): if it was written, its state document is caught up later.
            if (written === undefined) repairLater(aggregateType, aggregateId, current);
            // The claims' release keeps any claim its event did get (isConfirmed).
            await release(taken);
            throw isDuplicate(e) ? new ConcurrencyError(aggregateType, aggregateId, sequence) : e;
          }
          // Written though its answer was lost: the append stands (UNAVAILABLE would be a lie).
        }

        const snapshot = reduceEvents<S>(options.reducers[aggregateType], current, [stored])!;
        // The event is committed: the answer stands even if the state write fails.
        await saveState(aggregateType, snapshot).catch((e: unknown) => {
          warnNotSaved(aggregateType, aggregateId, e);
          repairLater(aggregateType, aggregateId, current);
          return false;
        });
        return { event: stored, snapshot };
      }),

    lookup: (key) =>
      runRead(async (signal) => {
        const holder = await constraints.findOne({ _id: key }, { signal });
        if (!holder || (isStale(holder) && !(await isConfirmed(holder, signal)))) return null;
        return { aggregateType: holder.aggregateType, aggregateId: holder.aggregateId };
      }),

    events: (type, id) =>
      runRead(async (signal) => {
        const docs = await events.find({ aggregateType: type, aggregateId: id }, { signal }).sort({ sequence: 1 }).toArray();
        return docs.map(toEvent);
      }),

    eventRange: (type, id, from, to) =>
      runRead(async (signal) => {
        const range = { aggregateType: type, aggregateId: id, sequence: { $gte: from, $lte: to } };
        const docs = await events.find(range, { signal }).sort({ sequence: 1 }).toArray();
        return docs.map(toEvent);
      }),

    // The search set-up (indexes, the backfill of older documents) runs once, as long as it takes:
    // only the search itself is bounded.
    searchUsers: <S>(search: UserSearch) =>
      run(async () => {
        if (search.limit <= 0) return [];
        await prepareSearch();
        return runRead(async (signal) => {
          const { filter, sort, hint } = userSearchQuery(search);
          const cursor = states('user')
            .find(filter as Filter<StateDoc>, { projection: { [SEARCH_FIELD]: 0 }, signal, ...(hint && { hint }) })
            .sort(sort)
            .limit(search.limit);
          const docs = await withinBudget(cursor, search.maxBytes);
          return docs.map((d) => toSnapshot<S>(d));
        });
      }),

    countUsers: (filter) =>
      run(async () => {
        await prepareSearch();
        return runRead((signal) => states('user').countDocuments(userFilterQuery(filter) as Filter<StateDoc>, { signal }));
      }),

    ping: () =>
      runRead(async (signal) => {
        await db.command({ ping: 1 }, { signal });
      }),

    close: async () => {
      closed = true;
      for (const timer of repairs) clearTimeout(timer);
      repairs.clear();
      await repairLoop.stop();
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
  repairLoop.start(); // the startup sweep, then every interval
  return store;
}
