// Writes many users straight into a MongoDB (or FerretDB) store's database, for tests
// and benches: for each user the documents that the store's append (src/store/mongo.ts)
// writes for its user.added event at sequence 1, and nothing else:
//   constraints  one claim per uniqueness key ({ _id: key, aggregateType, aggregateId,
//                sequence: 1, claimedAt, token }), confirmed by the event that lists it;
//   events       the event ({ aggregateType, aggregateId, sequence: 1, type, payload,
//                creator, resourceOwner, createdAt, claims });
//   users        the state document as saveState's upsert creates it ({ _id, changeDate,
//                creationDate, resourceOwner, search, sequence: 1, state }), the
//                state reduced by the model's reducer and `search` projected by
//                userSearchFields (what src/stores.ts gives the store).
// Instead of one insert per claim, one insert and one upsert per user, it sends one
// insertMany per collection and batch (unordered), in that order (claims, events,
// states): a load cut off half way leaves what a crash between an append's writes
// leaves, which the store's protocol copes with (port.ts).
//
// Gateways may be running on the database: the unique indexes judge as they do for
// append. A user whose id has an event already, or a claim held by another aggregate
// (or by another user of the same load), fails its whole batch: what that batch wrote
// is deleted again and ConcurrencyError / ConstraintError thrown, as append would;
// the batches before it stay written. One difference: a claim left unconfirmed by a
// failed append is refused here too, where append takes it over after claimGraceMs.
// Only new users: no other event types, no organizations.
//
// Like the store (mongo-shard-keys.ts, docs/sharding.md): writes with majority write
// concern, journaled (also on a db given open), and every delete names its collection's
// shard key (an event's undo: aggregateType and aggregateId with its _id).
import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, MongoClient, ObjectId, type Collection, type Db, type Document } from 'mongodb';
import type { Logger } from '../src/log.ts';
import { reducers } from '../src/model/reducers.ts';
import { startProgress } from '../src/progress.ts';
import { humanUserClaims, userEvents, userSearchFields, type User, type UserAdded } from '../src/model/users.ts';
import { eventSequenceIndex, mongoConcerns, stateCollections } from '../src/store/mongo-shard-keys.ts';
import { SEARCH_FIELD } from '../src/store/mongo-user-search.ts';
import { ConcurrencyError, ConstraintError, type Snapshot, type StoredEvent } from '../src/store/port.ts';
import { reduceEvents } from '../src/store/reduce.ts';

/** One user to write, as addHumanUser would add it. */
export interface BulkUser {
  /** The user id (the aggregate id). */
  id: string;
  /** The owning organization (the event's resourceOwner). */
  orgId: string;
  /** The user.added payload (userEvent.added). */
  user: UserAdded;
  /** Uniqueness keys; default addHumanUser's (humanUserClaims): `username:<folded>` and `idpLink:<idpId>:<userId>` per link. */
  claims?: string[];
  /** The event's time, so the user's creationDate and changeDate; default: when its batch is written. */
  createdAt?: Date;
  /** The event's creator; default 'bulk-loader'. */
  creator?: string;
}

/** The database: an open one, or a URL and name (a client opened and closed here). */
export type MongoBulkTarget = { db: Db } | { url: string; dbName: string };

export type MongoBulkLoad = MongoBulkTarget & {
  users: readonly BulkUser[];
  /** Users per batch (one insertMany per collection and batch); default 1,000. */
  batch?: number;
  /** Called after each batch with the number of users written so far. */
  onProgress?: (written: number) => void;
  /** Count, rate and share done in this log every intervalMs (src/progress.ts; work bulk_load). */
  progress?: { logger: Logger; intervalMs: number };
};

export interface MongoBulkLoaded {
  /** What the store's load answers for each user, in the order given. */
  snapshots: Snapshot<User>[];
}

interface Written {
  collection: Collection<Document>;
  docs: Document[];
}

/** Which of docs an unordered insertMany wrote, from its error (every other one was). */
function insertedOf(e: MongoBulkWriteError, docs: Document[]): Document[] {
  const failed = new Set((Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors]).map((w) => w.index));
  return docs.filter((_, i) => !failed.has(i));
}

/** Deletes what a failed batch wrote: only documents equal to ours (a claim by its token, an event by its _id). */
async function undo(written: Written[]): Promise<void> {
  for (const { collection, docs } of written.reverse()) {
    if (docs.length === 0) continue;
    const keys = docs.map((d) => d._id as unknown);
    const mine =
      collection.collectionName === 'constraints'
        ? { token: { $in: docs.map((d) => d.token as string) } }
        : collection.collectionName === 'events'
          ? { aggregateType: 'user', aggregateId: { $in: docs.map((d) => d.aggregateId as string) } } // the shard key: no scatter
          : { sequence: 1 };
    await collection.deleteMany({ _id: { $in: keys }, ...mine } as Document, { writeConcern: mongoConcerns.writeConcern });
  }
}

/** The first duplicate key among a bulk error's write errors, as append reports it. */
function refusal(e: MongoBulkWriteError, docs: Document[], kind: 'claim' | 'event' | 'state'): Error {
  const errors = Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
  const duplicate = errors.find((w) => w.code === 11000);
  if (!duplicate) return e;
  const doc = docs[duplicate.index]!;
  if (kind === 'claim') return new ConstraintError(doc._id as string);
  return new ConcurrencyError('user', kind === 'event' ? (doc.aggregateId as string) : (doc._id as string), 1);
}

export async function bulkLoadUsers(load: MongoBulkLoad): Promise<MongoBulkLoaded> {
  const batchSize = Math.max(1, Math.floor(load.batch ?? 1000));
  let client: MongoClient | undefined;
  let db: Db;
  if ('db' in load) db = load.db;
  else {
    client = await new MongoClient(load.url, { ignoreUndefined: true, ...mongoConcerns }).connect();
    db = client.db(load.dbName);
  }
  try {
    // The index that makes a second event for one user a duplicate; the store creates it
    // on connect (the same name and keys: nothing happens when it exists).
    const { key, ...unique } = eventSequenceIndex;
    await db.collection('events').createIndex(key, unique);
    const constraints = db.collection('constraints');
    const events = db.collection('events');
    const states = db.collection(stateCollections.user);

    const snapshots: Snapshot<User>[] = [];
    const shown = load.progress && startProgress({ work: 'bulk_load', unit: 'users', total: load.users.length, ...load.progress });
    for (let from = 0; from < load.users.length; from += batchSize) {
      const now = new Date();
      const claimDocs: Document[] = [];
      const eventDocs: Document[] = [];
      const stateDocs: Document[] = [];
      for (const u of load.users.slice(from, from + batchSize)) {
        const claims = [...new Set(u.claims ?? humanUserClaims(u.user))];
        const stored: StoredEvent = {
          aggregateType: 'user',
          aggregateId: u.id,
          sequence: 1,
          type: userEvents.added,
          payload: { ...u.user },
          creator: u.creator ?? 'bulk-loader',
          resourceOwner: u.orgId,
          createdAt: u.createdAt ?? now,
          claims,
        };
        const snapshot = reduceEvents<User>(reducers.user, null, [stored])!;
        snapshots.push(snapshot);
        for (const key of claims)
          claimDocs.push({ _id: key, aggregateType: 'user', aggregateId: u.id, sequence: 1, claimedAt: now, token: randomUUID() });
        eventDocs.push({ ...stored, _id: new ObjectId() });
        // An upsert's $set adds its fields in lexicographic order (MongoDB 5+, FerretDB): so here too.
        const { id, ...fields } = snapshot;
        const set: Document = { ...fields, [SEARCH_FIELD]: userSearchFields(snapshot.state) };
        stateDocs.push({
          _id: id,
          ...Object.fromEntries(
            Object.keys(set)
              .sort()
              .map((k) => [k, set[k]]),
          ),
        });
      }

      const written: Written[] = [];
      for (const [collection, docs, kind] of [
        [constraints, claimDocs, 'claim'],
        [events, eventDocs, 'event'],
        [states, stateDocs, 'state'],
      ] as const) {
        if (docs.length === 0) continue;
        try {
          await collection.insertMany(docs, { ordered: false, ignoreUndefined: true, writeConcern: mongoConcerns.writeConcern });
          written.push({ collection, docs });
        } catch (e) {
          if (!(e instanceof MongoBulkWriteError)) throw e; // unknown what was written: load again into a fresh database
          written.push({ collection, docs: insertedOf(e, docs) });
          await undo(written);
          throw refusal(e, docs, kind);
        }
      }
      load.onProgress?.(Math.min(from + batchSize, load.users.length));
      shown?.update(Math.min(from + batchSize, load.users.length));
    }
    shown?.finish(load.users.length);
    return { snapshots };
  } finally {
    await client?.close();
  }
}
