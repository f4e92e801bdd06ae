// The MongoDB store's sharding plan (docs/sharding.md): the shard key of every collection,
// the indexes the store creates on each, the queries known to scatter, and the read and
// write concerns of its client. One table for the store (src/store/mongo.ts creates the
// indexes and opens its client with these options), the doc (it shows the same keys) and
// test/store.mongo-sharding.test.ts (it checks every command the store sends against it,
// and the doc against it).
import type { IndexDescription, MongoClientOptions } from 'mongodb';
import type { AggregateType } from './port.ts';
import { userSearchIndexes } from './mongo-user-search.ts';

/** The state document collection of each aggregate type (_id: the aggregate id). */
export const stateCollections: Record<AggregateType, string> = {
  instance: 'instances',
  org: 'orgs',
  user: 'users',
  idp: 'idps',
  project: 'projects',
};

/** A shard key as sh.shardCollection takes it. */
export type ShardKey = Readonly<Record<string, 1 | 'hashed'>>;

export interface CollectionPlan {
  /** The shard key: every find, update and delete of the hot path names each of its fields with a value (or $in). */
  shardKey: ShardKey;
  /** Whether to shard it at all (instances: one document, nothing to spread). */
  shard: boolean;
  /** Why this key. */
  why: string;
  /** The indexes the store creates besides _id (the shard key's own one included). */
  indexes: readonly IndexDescription[];
}

/** The name of the index that supports each collection's shard key (sh.shardCollection needs it on a non-empty collection). */
export const SHARD_KEY_INDEX = 'shard_key';

/** The unique index that judges appends: it has the events' shard key as its prefix (field names), so it stays enforceable once sharded. */
export const eventSequenceIndex = {
  key: { aggregateType: 1, aggregateId: 1, sequence: 1 },
  name: 'aggregate_sequence',
  unique: true,
} as const satisfies IndexDescription;
/** The repair loop's range on creation time (mongo.ts). */
export const eventCreatedAtIndex = { key: { createdAt: 1, _id: 1 }, name: 'created_at' } as const satisfies IndexDescription;

const shardKeyIndex = (key: ShardKey): IndexDescription => ({ key: { ...key }, name: SHARD_KEY_INDEX });

const byId: ShardKey = { _id: 'hashed' };
const stateWhy =
  'Every read and write of the hot path names the document by _id (the aggregate id); ids are snowflakes, ' +
  'time-ordered, so a ranged key would send every new aggregate to the last chunk: hashed spreads them.';

export const shardPlan: Readonly<Record<string, CollectionPlan>> = {
  events: {
    shardKey: { aggregateType: 1, aggregateId: 'hashed' },
    shard: true,
    why:
      'All events of one aggregate on one shard: loads of its history, catch-up and the unique (aggregateType, ' +
      'aggregateId, sequence) index, which has the key as its prefix and so stays the judge of appends. ' +
      'aggregateId hashed: snowflake ids are time-ordered.',
    indexes: [eventSequenceIndex, eventCreatedAtIndex, shardKeyIndex({ aggregateType: 1, aggregateId: 'hashed' })],
  },
  constraints: {
    shardKey: byId,
    shard: true,
    why: 'A claim is only ever read, taken over and released by its key (_id); hashed: the keys share a few prefixes (username:, idpLink:, …).',
    indexes: [shardKeyIndex(byId)],
  },
  [stateCollections.instance]: { shardKey: byId, shard: false, why: `One document. ${stateWhy}`, indexes: [shardKeyIndex(byId)] },
  [stateCollections.org]: { shardKey: byId, shard: true, why: stateWhy, indexes: [shardKeyIndex(byId)] },
  [stateCollections.user]: {
    shardKey: byId,
    shard: true,
    why: `${stateWhy} User searches (by organization or instance-wide) scatter: an admin query.`,
    indexes: [shardKeyIndex(byId), ...userSearchIndexes],
  },
  [stateCollections.idp]: { shardKey: byId, shard: true, why: stateWhy, indexes: [shardKeyIndex(byId)] },
  [stateCollections.project]: { shardKey: byId, shard: true, why: stateWhy, indexes: [shardKeyIndex(byId)] },
  // Not the store's: the node-id leases of src/node-ids.ts (only without Redis), at most 1,024 small documents.
  node_id_leases: {
    shardKey: byId,
    shard: false,
    why: 'At most 1,024 small documents, each taken, renewed and released by its _id (the node id): nothing to spread.',
    indexes: [],
  },
};

/** A query that names no shard key value: sent to every shard. Only admin and background work may. */
export interface ScatterQuery {
  collection: string;
  /** The command name as the driver sends it. */
  command: 'find' | 'aggregate' | 'update' | 'delete';
  /** The store call or background job that sends it. */
  source: 'searchUsers' | 'countUsers' | 'repair sweep' | 'search backfill';
  path: 'admin' | 'background';
  why: string;
}

export const scatterQueries: readonly ScatterQuery[] = [
  {
    collection: stateCollections.user,
    command: 'find',
    source: 'searchUsers',
    path: 'admin',
    why: 'filters and sorts on resourceOwner and search fields, never on _id',
  },
  {
    collection: stateCollections.user,
    command: 'aggregate',
    source: 'countUsers',
    path: 'admin',
    why: 'counts a filter (totalCount), never on _id',
  },
  {
    collection: 'events',
    command: 'find',
    source: 'repair sweep',
    path: 'background',
    why: 'events created in a time range, of any aggregate',
  },
  {
    collection: stateCollections.user,
    command: 'find',
    source: 'search backfill',
    path: 'background',
    why: 'user documents without search fields, once after an upgrade',
  },
  {
    collection: stateCollections.user,
    command: 'aggregate',
    source: 'search backfill',
    path: 'background',
    why: 'counts those documents first, for its progress (share done)',
  },
];

/**
 * The client's read and write concerns, set by the store over whatever MONGODB_URL says:
 * every write acknowledged by a majority, journaled; every read on the primary, at read
 * concern "local" (a read after a duplicate-key conflict must see the event that caused
 * it, which a "majority" read may not yet). See docs/sharding.md.
 */
export const mongoConcerns = {
  writeConcern: { w: 'majority', journal: true },
  readPreference: 'primary',
  readConcern: { level: 'local' },
  // The same under the URL's own names, which would otherwise win over the two objects above
  // (the driver merges options by name; test/store.mongo-sharding.test.ts gives it a URL saying otherwise).
  w: 'majority',
  journal: true,
  readConcernLevel: 'local',
} as const satisfies MongoClientOptions;
