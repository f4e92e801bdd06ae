// The MongoDB store's indexes beyond the unique one connect makes (src/store/mongo.ts), all
// built off the request path in the store's background context (their commands are not
// reported), each once per store unless it fails (then again by the next caller):
//   search      the user search indexes, and `search` for documents written before it existed
//   createdAt   the events' range on creation time, for the repair loop
//   shard keys  the hashed indexes of the plan (mongo-shard-keys.ts) that sh.shardCollection
//               needs on a non-empty collection; none on a server without hashed indexes
import { MongoServerError } from 'mongodb';
import type { Logger } from '../log.ts';
import type { ProgressObserver } from '../progress.ts';
import type { MongoConnection } from './mongo-connection.ts';
import { eventCreatedAtIndex, SHARD_KEY_INDEX, shardPlan, stateCollections } from './mongo-shard-keys.ts';
import { backfillUserSearch, ensureUserSearchIndexes } from './mongo-user-search.ts';
import type { UserProjection } from './port.ts';

/** What indexes() found: the indexes of the plan this server cannot build, as `collection.index`. */
export interface IndexReport {
  /** FerretDB has no hashed indexes (nor sharding): the shard key indexes are left out there. */
  unsupported: string[];
}

export interface MongoIndexes {
  /** The search indexes and backfill; rejects without the userFields option. */
  prepareSearch(): Promise<void>;
  ensureCreatedAt(): Promise<void>;
  prepareShardKeys(): Promise<IndexReport>;
  /** After connect: starts all three, awaited (and retried) later by whoever needs them. */
  startAll(): void;
}

/** `promise ??= start()`, forgotten again when it fails so that the next caller retries. */
function once<T>(start: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= start().catch((e: unknown) => {
      pending = undefined;
      throw e;
    }));
}

export function createMongoIndexes(
  conn: MongoConnection,
  userFields: UserProjection | undefined,
  logger: Logger,
  progress: { intervalMs: number; observe?: ProgressObserver },
): MongoIndexes {
  const search = once(() =>
    conn.inBackground(async () => {
      const users = conn.db.collection(stateCollections.user);
      await ensureUserSearchIndexes(users);
      await backfillUserSearch(users, userFields!, { logger, ...progress });
    }),
  );
  const prepareSearch = () => (userFields ? search() : Promise.reject(new Error('mongo store: user search needs the userFields option')));

  // Built in the background, not awaited by connect: a large collection takes a while.
  const ensureCreatedAt = once(async () => {
    const { key, ...named } = eventCreatedAtIndex;
    await conn.inBackground(() => conn.events.createIndex(key, named));
  });

  // A server that has no hashed indexes (FerretDB, which has no sharding either) gets none.
  const prepareShardKeys = once(() =>
    conn.inBackground(async (): Promise<IndexReport> => {
      const ferret = typeof (await conn.db.command({ buildInfo: 1 })).ferretdbVersion === 'string';
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
          await conn.db.collection(name).createIndex(key, named);
        } catch (e) {
          // 85 IndexOptionsConflict: the same key under another name (made by an operator) serves as well.
          if (!(e instanceof MongoServerError && e.code === 85)) throw e;
        }
      }
      return { unsupported };
    }),
  );

  return {
    prepareSearch,
    ensureCreatedAt,
    prepareShardKeys,
    startAll() {
      prepareSearch().catch(() => {}); // awaited (and retried) by the first search
      ensureCreatedAt().catch(() => {}); // awaited (and retried) by the repair loop
      prepareShardKeys().catch((e: unknown) => {
        if (conn.closed) return; // closed before they were built: nothing to say
        logger.log(
          'warn',
          'mongo store: shard key indexes not built (sharding a non-empty collection needs them; docs/sharding.md); retried by the next start',
          { error: (e as Error).message },
        );
      });
    },
  };
}
