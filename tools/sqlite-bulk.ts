// Writes many users (and the organizations they belong to) straight into a SQLite
// store's database, for benches and tests: the events the commands would write
// (org.added, user.added with its username claim), their reduced states (the model's
// reducers) and user search rows, in large transactions. The gateway must not be
// running on the folder (the database is locked while open).
//
//   node --import tsx tools/sqlite-bulk.ts <dataDir> <users> [orgs]
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { orgDomain } from '../src/commands/orgs.ts';
import { FILE_MODE, makeDataDir } from '../src/data-dir.ts';
import { createIdGenerator } from '../src/model/ids.ts';
import { orgEvent } from '../src/model/orgs.ts';
import { reducers } from '../src/model/reducers.ts';
import { userEvent, userSearchFields, type UserAdded } from '../src/model/users.ts';
import type { AggregateType, StoredEvent } from '../src/store/port.ts';
import { reduceEvents } from '../src/store/reduce.ts';
import { eventRow, searchRow, stateRow } from '../src/store/sqlite-rows.ts';
import { DB_FILE, openDatabase, prepareWrites, writeAppend, type Writes } from '../src/store/sqlite-schema.ts';
import { chmod, open } from 'node:fs/promises';
import { createLogger, logFormatFor, type Logger } from '../src/log.ts';
import { DEFAULT_PROGRESS_INTERVAL_MS, startProgress } from '../src/progress.ts';
import { ms } from '../src/config-values.ts';

export interface BulkLoad {
  dataDir: string;
  users: number;
  /** Organizations the users are spread over (round robin); default 10. */
  orgs?: number;
  /** Users per transaction; default 20,000. */
  batch?: number;
  /** Makes usernames unique across loads into one folder; default random. */
  tag?: string;
  instanceDomain?: string;
  onProgress?: (written: number) => void;
  /** Count, rate and share done in this log every intervalMs (src/progress.ts; work bulk_load). */
  progress?: { logger: Logger; intervalMs: number };
}

export interface BulkLoaded {
  orgIds: string[];
  /** Up to 1,000 of the user ids written, evenly spread, the first and last included. */
  sampleUserIds: string[];
}

export const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Frances',
  'John',
  'Radia',
  'Edsger',
  'Hedy',
  'Tim',
  'Karen',
  'Donald',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Allen',
  'Backus',
  'Perlman',
  'Dijkstra',
  'Lamarr',
  'Lee',
  'Jones',
  'Knuth',
];

/** The i-th generated user of a load (first name FIRST[i % 16]; email `<username>@bulk.example.com`, verified for even i). */
export function bulkUser(i: number, tag: string): UserAdded {
  const [first, last] = [FIRST[i % FIRST.length]!, LAST[Math.floor(i / FIRST.length) % LAST.length]!];
  const username = `${first}.${last}.${tag}${i}`.toLowerCase();
  return {
    username,
    profile: {
      firstName: first,
      lastName: last,
      nickName: null,
      displayName: `${first} ${last}`,
      preferredLanguage: 'en',
      gender: 'GENDER_UNSPECIFIED',
    },
    email: { email: `${username}@bulk.example.com`, isVerified: i % 2 === 0 },
    phone: null,
    passwordHash: null,
    passwordChangeRequired: false,
    metadata: [],
    idpLinks: [],
    u2fTokens: [],
  };
}

function append(w: Writes, type: AggregateType, event: Omit<StoredEvent, 'aggregateType' | 'sequence' | 'creator'>): void {
  const stored: StoredEvent = { ...event, aggregateType: type, sequence: 1, creator: 'bulk-loader' };
  const snapshot = reduceEvents(reducers[type], null, [stored])!;
  const result = writeAppend(w, {
    event: eventRow(stored),
    claims: stored.claims,
    state: stateRow(type, snapshot),
    search: searchRow(type, snapshot, userSearchFields),
  });
  if (!('ok' in result)) throw new Error(`bulk load: ${type} ${event.aggregateId}: ${JSON.stringify(result)}`);
}

export async function bulkLoadUsers(options: BulkLoad): Promise<BulkLoaded> {
  const { dataDir, users } = options;
  const orgCount = Math.max(1, options.orgs ?? 10);
  const batch = options.batch ?? 20_000;
  const tag = options.tag ?? Math.random().toString(36).slice(2, 6);
  const domain = options.instanceDomain ?? 'localhost';
  await makeDataDir(dataDir);
  const path = join(dataDir, DB_FILE);
  await (await open(path, 'a', FILE_MODE)).close();
  await chmod(path, FILE_MODE);

  const db = openDatabase(path, { cacheMb: 256 });
  try {
    // A tool's load: a crash means loading again, so no fsync per transaction; one at the end.
    db.exec('PRAGMA synchronous = OFF');
    const w = prepareWrites(db);
    const ids = createIdGenerator({ nodeId: 1023 });
    const now = Date.now();
    const orgIds = Array.from({ length: orgCount }, () => ids.next());
    db.exec('BEGIN');
    orgIds.forEach((orgId, i) => {
      const name = `Bulk ${tag} ${i + 1}`;
      const dns = orgDomain(name, domain);
      append(w, 'org', {
        aggregateId: orgId,
        ...orgEvent.added(name, dns),
        resourceOwner: orgId,
        createdAt: new Date(now - users * 1000),
        claims: [`orgDomain:${dns}`, `orgName:${name.toLowerCase()}`],
      });
    });
    const shown = options.progress && startProgress({ work: 'bulk_load', unit: 'users', total: users, ...options.progress });
    const sampleEvery = Math.max(1, Math.floor(users / 1000));
    const sampleUserIds: string[] = [];
    for (let i = 0; i < users; i++) {
      const user = bulkUser(i, tag);
      const username = user.username;
      const id = ids.next();
      append(w, 'user', {
        aggregateId: id,
        ...userEvent.added(user),
        resourceOwner: orgIds[i % orgCount]!,
        createdAt: new Date(now - (users - i) * 1000),
        claims: [`username:${username}`],
      });
      if (i % sampleEvery === 0 || i === users - 1) sampleUserIds.push(id);
      if ((i + 1) % batch === 0) {
        db.exec('COMMIT');
        options.onProgress?.(i + 1);
        shown?.update(i + 1);
        await setImmediate();
        db.exec('BEGIN');
      }
    }
    db.exec('COMMIT');
    db.exec('PRAGMA synchronous = FULL; PRAGMA wal_checkpoint(TRUNCATE)');
    shown?.finish(users);
    return { orgIds, sampleUserIds };
  } finally {
    if (db.isTransaction) db.exec('ROLLBACK');
    db.close();
  }
}

if (import.meta.main) {
  const [dataDir, users, orgs] = process.argv.slice(2);
  if (!dataDir || !Number.isInteger(Number(users))) {
    process.stderr.write('usage: node --import tsx tools/sqlite-bulk.ts <dataDir> <users> [orgs]\n');
    process.exit(2);
  }
  // Logged as the gateway logs (LOG_FORMAT, PROGRESS_INTERVAL_MS), so the same collector reads both.
  const env = process.env;
  const format = env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty' ? env.LOG_FORMAT : undefined;
  const logger = createLogger('info', undefined, undefined, logFormatFor(format, env.NODE_ENV === 'production'));
  const intervalMs = ms('PROGRESS_INTERVAL_MS', env.PROGRESS_INTERVAL_MS, DEFAULT_PROGRESS_INTERVAL_MS, 1);
  await bulkLoadUsers({ dataDir, users: Number(users), orgs: orgs ? Number(orgs) : undefined, progress: { logger, intervalMs } });
  logger.log('info', `${users} users written to ${join(dataDir, DB_FILE)}`);
}
