// Long work says how far it is: an old log's import at the first start (the gateway's log and
// /metrics), the MongoDB search backfill, and the bulk loader. PROGRESS_INTERVAL_MS is set low
// here so that a short run reports several times; the lines' numbers are checked, not their timing.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { reducers } from '../src/model/reducers.ts';
import { userEvent, userSearchFields, type UserAdded } from '../src/model/users.ts';
import { createMongoStore } from '../src/store/mongo.ts';
import type { StoredEvent } from '../src/store/port.ts';
import { bulkLoadUsers as mongoBulkLoad, type BulkUser } from '../tools/mongo-bulk.ts';
import { bulkLoadUsers as sqliteBulkLoad } from '../tools/sqlite-bulk.ts';
import { spawnGateway } from './support/child-gateway.ts';
import { writeOldLog } from './support/old-log.ts';
import { describeWith } from './support/servers.ts';

interface ProgressLine {
  level: string;
  msg: string;
  work: string;
  done: number;
  total?: number;
  percent: number;
  ratePerSecond: number;
}

const progressOf = (lines: string[], work: string): ProgressLine[] =>
  lines
    .map((l) => JSON.parse(l) as ProgressLine)
    .filter((l) => l.work === work)
    .map((l) => ({ ...l }));

/** Several lines, counts and shares never going back, the last one the end at 100 %. */
function expectReports(lines: ProgressLine[], done: number): void {
  expect(lines.length).toBeGreaterThanOrEqual(3);
  for (const [i, line] of lines.entries()) {
    expect(line).toMatchObject({ level: 'info', done: expect.any(Number), percent: expect.any(Number), ratePerSecond: expect.any(Number) });
    expect(line.msg).toMatch(new RegExp(`^${line.work}: .*${line.done}.* \\(${line.percent} %\\), ${line.ratePerSecond} \\w+/s$`));
    if (i > 0) {
      expect(line.done).toBeGreaterThanOrEqual(lines[i - 1]!.done);
      expect(line.percent).toBeGreaterThanOrEqual(lines[i - 1]!.percent);
    }
    if (i < lines.length - 1) expect(line.percent).toBeLessThan(100);
  }
  expect(lines.at(-1)).toMatchObject({ done, percent: 100 });
  expect(lines.at(-1)!.msg).toMatch(/: done, /);
  expect(lines.some((l) => l.ratePerSecond > 0)).toBe(true);
}

const human = (username: string): UserAdded => ({
  username,
  profile: { firstName: 'Old', lastName: 'Log', nickName: null, displayName: null, preferredLanguage: null, gender: 'GENDER_UNSPECIFIED' },
  email: { email: `${username}@example.com`, isVerified: false },
  phone: null,
  passwordHash: null,
  passwordChangeRequired: false,
  metadata: [],
  idpLinks: [],
  u2fTokens: [],
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const freshDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'progress-'));
  dirs.push(dir);
  return dir;
};

describe('progress of long work', () => {
  it("an old log's import at the first start: count, rate and share in the log, ending at 100 %, and in /metrics", async () => {
    const dataDir = freshDir();
    const events: StoredEvent[] = Array.from({ length: 20_000 }, (_, i) => ({
      aggregateType: 'user',
      aggregateId: `old-${i}`,
      sequence: 1,
      ...userEvent.added(human(`old${i}`)),
      creator: 'system',
      resourceOwner: 'org-old',
      createdAt: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, i)),
      claims: [`username:old${i}`],
    }));
    await writeOldLog(dataDir, events);
    const gw = await spawnGateway({ dataDir, env: { PROGRESS_INTERVAL_MS: '1' } });
    try {
      const lines = progressOf(gw.logs, 'log_import');
      expectReports(lines, 20_000);
      expect(lines.every((l) => l.total === undefined)).toBe(true); // the events of a log are known once it is read
      const metrics = await (await fetch(`${gw.base}/metrics`)).text();
      expect(metrics).toMatch(/^gateway_long_work_done\{work="log_import"\} 20000$/m);
      expect(metrics).toMatch(/^gateway_long_work_ratio\{work="log_import"\} 1$/m);
    } finally {
      await gw.stop();
    }
  });

  it('the embedded bulk loader: count, rate and share of its users', async () => {
    const lines: string[] = [];
    await sqliteBulkLoad({
      dataDir: freshDir(),
      users: 5000,
      orgs: 2,
      batch: 500,
      progress: { logger: createLogger('info', (l) => lines.push(l)), intervalMs: 1 },
    });
    const reports = progressOf(lines, 'bulk_load');
    expectReports(reports, 5000);
    expect(reports.every((l) => l.total === 5000)).toBe(true);
  });
});

describeWith('mongo', 'progress of the MongoDB search backfill', (url) => {
  it('documents without search fields: count, rate and share in the log, and to the metrics observer', async () => {
    const dbName = `progress_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const users: BulkUser[] = Array.from({ length: 300 }, (_, i) => ({ id: `bf-${i}`, orgId: 'org-bf', user: human(`bf${i}`) }));
    await mongoBulkLoad({ url, dbName, users, batch: 100 });
    const client = await new MongoClient(url).connect();
    try {
      // As written before the search fields existed (an upgrade).
      await client
        .db(dbName)
        .collection('users')
        .updateMany({}, { $unset: { search: '' } });
      const lines: string[] = [];
      const observed: [string, number, number][] = [];
      const store = await createMongoStore({
        url,
        dbName,
        reducers,
        userFields: userSearchFields,
        repair: false,
        logger: createLogger('info', (l) => lines.push(l)),
        progress: { intervalMs: 1, observe: (work, done, share) => observed.push([work, done, share]) },
      });
      try {
        await store.indexes();
        const reports = progressOf(lines, 'user_search_backfill');
        expectReports(reports, 300);
        expect(reports.every((l) => l.total === 300)).toBe(true);
        expect(observed.at(0)).toEqual(['user_search_backfill', 0, 0]);
        expect(observed.at(-1)).toEqual(['user_search_backfill', 300, 1]);
        expect(
          await client
            .db(dbName)
            .collection('users')
            .countDocuments({ search: { $exists: false } }),
        ).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await client.db(dbName).dropDatabase();
      await client.close();
    }
  });
});
