// The MongoDB store's connection and how it runs commands (src/store/mongo.ts): the client,
// opened on the first call and again after a failed connect; the driver's command monitoring,
// reported to onCommand listeners except for the store's background work; and run/runRead,
// which turn a driver error that means "the server is not there now" into UnavailableError.
import { AsyncLocalStorage } from 'node:async_hooks';
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
} from 'mongodb';
import { UnavailableError } from '../errors.ts';
import type { ConstraintDoc, EventDoc, StateDoc } from './mongo-docs.ts';
import { eventSequenceIndex, mongoConcerns, stateCollections } from './mongo-shard-keys.ts';
import type { AggregateType } from './port.ts';

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

export interface ConnectionOptions {
  url: string;
  dbName: string;
  serverSelectionTimeoutMS?: number;
  readTimeoutMS?: number;
  onCommand?: MongoCommandListener;
  inspect?: (command: InspectedCommand) => void;
}

export interface MongoConnection {
  readonly listeners: Set<MongoCommandListener>;
  readonly inspectors: Set<(command: InspectedCommand) => void>;
  /** Set on connect: read them when a call runs. */
  readonly db: Db;
  readonly events: Collection<EventDoc>;
  readonly constraints: Collection<ConstraintDoc>;
  states(type: AggregateType): Collection<StateDoc>;
  /** Runs work in the store's background context: its commands are not reported to listeners. */
  inBackground<T>(work: () => T): T;
  /** Connected first (connecting when not yet); a driver error that means "not there now" becomes UnavailableError. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** run, for a read: UnavailableError past readTimeoutMS, and the driver's call aborted through `signal`. */
  runRead<T>(work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T>;
  readonly closed: boolean;
  /** No connect after this (the background work ends before the client closes: see disconnect). */
  markClosed(): void;
  /** Waits for a connect under way, then closes the client. */
  disconnect(): Promise<void>;
}

// Server error codes that mean "try another node / later", not "your request is wrong".
const transientCodes = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

export function isUnavailable(e: unknown): boolean {
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

export const isDuplicate = (e: unknown) => e instanceof MongoServerError && e.code === 11000;
/** A duplicate key on `_id`, not on (aggregate, sequence): the driver's retry met its own document. */
export const duplicateOfId = (e: unknown) =>
  e instanceof MongoServerError && (e.keyPattern?._id !== undefined || /index: _id_ /.test(e.message));

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

/** `onConnected` starts the background work that needs the collections (index builds). */
export function createMongoConnection(options: ConnectionOptions, onConnected: () => void): MongoConnection {
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
  let closed = false;

  function monitoredClient(): MongoClient {
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
    return candidate;
  }

  // A client whose first connect failed stays closed for good, so connecting is
  // ours: retried on the next operation. The unique index is what makes appends
  // safe, so nothing runs before it exists.
  async function connect(): Promise<void> {
    if (closed) throw new Error('mongo store is closed');
    const candidate = monitoredClient();
    try {
      await candidate.connect();
      const candidateDb = candidate.db(options.dbName);
      const { key, ...unique } = eventSequenceIndex;
      await candidateDb.collection('events').createIndex(key, unique);
      [client, db] = [candidate, candidateDb];
      events = db.collection<EventDoc>('events');
      constraints = db.collection<ConstraintDoc>('constraints');
      onConnected();
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

  return {
    listeners,
    inspectors,
    get db() {
      return db;
    },
    get events() {
      return events;
    },
    get constraints() {
      return constraints;
    },
    states: (type) => db.collection<StateDoc>(stateCollections[type]),
    inBackground: (work) => background.run(true, work),
    run,
    runRead: (work) => withDeadline((signal) => run(() => work(signal)), options.readTimeoutMS ?? 0),
    get closed() {
      return closed;
    },
    markClosed() {
      closed = true;
    },
    async disconnect() {
      await connected?.catch(() => {});
      await client?.close();
    },
  };
}
