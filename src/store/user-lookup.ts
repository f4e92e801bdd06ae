// Does a user exist? For `npm run token` (src/cli/token.ts), which mints tokens only for users
// the configured store holds. Read-only and without the store's start-up work: no folder or
// database created, no old log imported, no index built.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { MongoClient } from 'mongodb';
import { stateCollections } from './mongo-shard-keys.ts';
import { DB_FILE } from './sqlite-schema.ts';

/** found / not found, or why the store could not be asked (the caller decides what that means). */
export type UserLookup = { found: boolean } | { unknown: string };

/** In DATA_DIR's database; a running gateway holds it exclusively (locking_mode=EXCLUSIVE), so then: unknown. */
export async function userInSqlite(dataDir: string, userId: string): Promise<UserLookup> {
  const path = join(dataDir, DB_FILE);
  try {
    await access(path);
  } catch {
    return { found: false }; // no database: no user
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 0 });
    return { found: db.prepare("SELECT 1 FROM states WHERE type = 'user' AND id = ?").get(userId) !== undefined };
  } catch (e) {
    const why = (e as { errstr?: string }).errstr === 'database is locked' ? 'a running gateway holds it' : (e as Error).message;
    return { unknown: `${path} cannot be read (${why})` };
  } finally {
    db?.close();
  }
}

/** In the users collection of MONGODB_URL's database: one findOne by _id. */
export async function userInMongo(url: string, dbName: string, userId: string): Promise<UserLookup> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
  try {
    await client.connect();
    const found = await client
      .db(dbName)
      .collection<{ _id: string }>(stateCollections.user)
      .findOne({ _id: userId }, { projection: { _id: 1 } });
    return { found: found !== null };
  } catch (e) {
    return { unknown: `MongoDB did not answer (${(e as Error).message})` };
  } finally {
    await client.close().catch(() => {});
  }
}
