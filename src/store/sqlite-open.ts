// Opening the SQLite store's folder (src/store/sqlite.ts): the data folder and the database
// file owner-only, the worker that owns the database, and an old data folder's event log
// (the log store's events.log) imported at the first start on it.
import { access, chmod, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, makeDataDir } from '../data-dir.ts';
import type { Logger } from '../log.ts';
import type { ProgressObserver } from '../progress.ts';
import { importLog, LOG_FILE } from './log-import.ts';
import type { Reducers, UserProjection } from './port.ts';
import { startSqliteWorker, type SqliteClient } from './sqlite-client.ts';
import { DB_FILE } from './sqlite-schema.ts';

const IMPORTED_SUFFIX = '.imported';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

export interface OpenSqlite {
  dataDir: string;
  reducers: Reducers;
  userFields?: UserProjection;
  logger: Logger;
  progress: { intervalMs: number; observe?: ProgressObserver };
}

/** The worker, its database open (and an old log imported): the caller closes it. */
export async function openSqlite({ dataDir, reducers, userFields, logger, progress }: OpenSqlite): Promise<SqliteClient> {
  await makeDataDir(dataDir);
  const path = join(dataDir, DB_FILE);
  // Created owner-only before SQLite opens it: its -wal file gets the same mode.
  await (await open(path, 'a', FILE_MODE)).close();
  await chmod(path, FILE_MODE);

  const worker = startSqliteWorker(path);
  const opened = await worker.call<{ empty: boolean; importedFrom: string | null }>({ op: 'open' }).catch(async (e) => {
    await worker.terminate();
    throw worker.failure ?? e;
  });
  await importOldLog(opened).catch(async (e) => {
    await worker.call({ op: 'close' }).catch(() => {});
    await worker.terminate();
    throw e;
  });
  return worker;

  // An old log beside a database: imported now when the database is new, renamed when a
  // previous start imported it but stopped before the rename; otherwise refused.
  async function importOldLog({ empty, importedFrom }: { empty: boolean; importedFrom: string | null }) {
    const log = join(dataDir, LOG_FILE);
    if (!(await exists(log))) return;
    if (!empty && !importedFrom) throw new Error(`${log} and ${path} both hold events: move one away`);
    const target = log + IMPORTED_SUFFIX;
    if (await exists(target)) throw new Error(`${log} is to be renamed to ${target}, which exists: move one away`);
    const count = empty ? await importLog({ path: log, reducers, userFields, call: worker.call, logger, progress }) : 0;
    await rename(log, target);
    logger.log('warn', `imported the old event log into ${DB_FILE} and renamed it`, { events: count, from: log, to: target });
  }
}
