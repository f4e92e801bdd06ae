// EventStore on MongoDB (or FerretDB v1): no transactions, no change streams,
// only single-document writes. See docs/architecture.md, Persistence and the protocol in port.ts.
//
// Commands per call, the budget's unit (docs/performance.md; counted by
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
// By concern: the connection and how commands run (mongo-connection.ts), the claims of unique
// values (mongo-claims.ts), the state documents (mongo-states.ts), the indexes built in the
// background (mongo-indexes.ts), the append (mongo-append.ts) and the reads (mongo-reads.ts).
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
import { UnavailableError } from '../errors.ts';
import { createLogger, type Logger } from '../log.ts';
import { DEFAULT_PROGRESS_INTERVAL_MS, type ProgressObserver } from '../progress.ts';
import { createMongoAppend } from './mongo-append.ts';
import { createMongoClaims } from './mongo-claims.ts';
import { createMongoConnection, isUnavailable, type InspectedCommand, type MongoCommandListener } from './mongo-connection.ts';
import { createMongoIndexes, type IndexReport } from './mongo-indexes.ts';
import { createMongoReads } from './mongo-reads.ts';
import { createRepairLoop, type RepairOptions, type RepairStats } from './mongo-repair.ts';
import { stateCollections } from './mongo-shard-keys.ts';
import { createMongoStates } from './mongo-states.ts';
import type { EventStore, Reducers, UserProjection } from './port.ts';

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
  /** Where its warnings and the search backfill's progress go; default: JSON lines on stderr. */
  logger?: Logger;
  /** How often the search backfill reports (PROGRESS_INTERVAL_MS; default 5 s), and who else is told (metrics). */
  progress?: { intervalMs?: number; observe?: ProgressObserver };
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
export type { IndexReport, RepairOptions, RepairStats };
export type { InspectedCommand, MongoCommandEvent, MongoCommandListener } from './mongo-connection.ts';

export async function createMongoStore(options: MongoStoreOptions): Promise<MongoEventStore> {
  const conn = createMongoConnection(options, () => indexes.startAll());
  const logger = options.logger ?? createLogger();
  const progress = { intervalMs: options.progress?.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS, observe: options.progress?.observe };
  const indexes = createMongoIndexes(conn, options.userFields, logger, progress);
  const states = createMongoStates(conn, options.reducers, options.userFields, logger);
  const claims = createMongoClaims(conn, options.claimGraceMs ?? 30_000);

  // A state document left behind its events by a crash is caught up within about graceMs +
  // intervalMs, with no read added to any request.
  const repairLoop = createRepairLoop(options.repair, {
    events: () => conn.events,
    states: conn.states,
    ensureCreatedAt: indexes.ensureCreatedAt,
    catchUp: async (type, id, save) => states.catchUpFrom(type, id, await states.loadOne(type, id), save),
    saveState: states.saveState,
    isUnavailable,
    runInBackground: (pass) => conn.inBackground(() => conn.run(pass)),
    isClosed: () => conn.closed,
    logger,
  });

  const store: MongoEventStore = {
    onCommand(listener) {
      conn.listeners.add(listener);
      return () => void conn.listeners.delete(listener);
    },

    inspectCommands(listener) {
      conn.inspectors.add(listener);
      return () => void conn.inspectors.delete(listener);
    },

    indexes: () =>
      conn.run(async () => {
        await indexes.ensureCreatedAt();
        if (options.userFields) await indexes.prepareSearch();
        return indexes.prepareShardKeys();
      }),

    repairStats: repairLoop.stats,

    ...createMongoReads(conn, states, claims, indexes),

    catchUp: (type, id, known) => conn.run(() => states.catchUpFrom(type, id, known)),

    append: createMongoAppend(conn, states, claims, options.reducers),

    close: async () => {
      conn.markClosed();
      states.cancelRepairs();
      await repairLoop.stop();
      await conn.disconnect();
    },
  };

  try {
    await conn.run(async () => {});
  } catch (e) {
    if (!(e instanceof UnavailableError)) throw e;
    logger.log('warn', 'mongo store: server unreachable at start; operations fail until it answers');
  }
  repairLoop.start(); // the startup sweep, then every interval
  return store;
}
