// What the SQLite event store (src/store/sqlite.ts) adds to the shared contract
// (test/store.contract.test.ts): durability across kill -9, group commit with an append
// failing alone, the import of the old log, a bounded cache, a start that reads no event,
// one owner per folder, owner-only files; the shared user search contract and its query plans.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { access, appendFile, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SQLInputValue } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { MAX_FILTER_VALUES } from '../src/commands/user-search-inputs.ts';
import { reducers } from '../src/model/reducers.ts';
import { userEvent, userSearchFields, type User, type UserAdded, type UserEvent } from '../src/model/users.ts';
import { LOG_FILE } from '../src/store/log-import.ts';
import { ConcurrencyError, ConstraintError, type NewEvent, type Reducer, type Reducers, type StoredEvent } from '../src/store/port.ts';
import { reduceEvents } from '../src/store/reduce.ts';
import { bulkLoadUsers } from '../tools/sqlite-bulk.ts';
import { DB_FILE, openDatabase } from '../src/store/sqlite-schema.ts';
import { countQuery, searchQuery } from '../src/store/sqlite-search.ts';
import type { UserFilter } from '../src/store/read-models.ts';
import { createSqliteStore, type SqliteStore } from '../src/store/sqlite.ts';
import { userSearchContract } from './support/user-search-contract.ts';
import { increment } from './support/increment.ts';
import { writeOldLog } from './support/old-log.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
const newDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'store-sqlite-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

interface Counter {
  count: number;
}
const counter: Reducer<Counter> = (state, event) => ({ count: (state?.count ?? 0) + ((event.payload.add as number | undefined) ?? 1) });
const counters: Reducers = { instance: counter, org: counter, user: counter, idp: counter, project: counter };

const ev = (aggregateId: string, sequence: number, payload: Record<string, unknown> = { add: 1 }): NewEvent => ({
  aggregateType: 'user',
  aggregateId,
  sequence,
  type: 'user.counted',
  payload,
  creator: 'tester',
  resourceOwner: 'org-1',
});

const human = (username: string): UserAdded => ({
  username,
  profile: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    nickName: null,
    displayName: null,
    preferredLanguage: null,
    gender: 'GENDER_UNSPECIFIED',
  },
  email: { email: `${username}@example.com`, isVerified: false },
  phone: null,
  passwordHash: null,
  passwordChangeRequired: false,
  metadata: [],
  idpLinks: [],
  u2fTokens: [],
});

/** A user event of `aggregateId` in org-1, as a command appends it. */
const userAt = (aggregateId: string, sequence: number, event: UserEvent) => ({
  aggregateType: 'user' as const,
  aggregateId,
  sequence,
  ...event,
  creator: 'system',
  resourceOwner: 'org-1',
});

describe('sqlite event store', () => {
  it('keeps every acknowledged append when its process is killed (kill -9) mid-run', async () => {
    const dir = await newDir();
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sqlite-writer-child.ts', dir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (l) => stderr.push(l));
    const exited = new Promise<string | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
    const acked = new Map<string, number>();
    let lines = 0;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const [id, sequence] = line.split(' ');
      if (sequence === undefined) return;
      acked.set(id!, Math.max(acked.get(id!) ?? 0, Number(sequence)));
      if (++lines === 400) child.kill('SIGKILL');
    });
    expect(await exited, stderr.join('\n')).toBe('SIGKILL');
    expect(acked.size).toBe(8);

    const store = await createSqliteStore({ dataDir: dir, reducers: counters });
    try {
      for (const [id, sequence] of acked) {
        const events = await store.events('user', id);
        expect(events.length).toBeGreaterThanOrEqual(sequence);
        expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
        // The state row was committed with its event: never behind, never ahead.
        expect(await store.load<Counter>('user', id)).toMatchObject({ sequence: events.length, state: { count: events.length } });
        expect(await store.lookup(`claim:${id}:${sequence}`)).toEqual({ aggregateType: 'user', aggregateId: id });
      }
    } finally {
      await store.close();
    }
  });

  it('loses nothing with 50 concurrent writers on each of two users that evict each other from a one-entry cache', async () => {
    const store = await createSqliteStore({ dataDir: await newDir(), reducers: counters, cacheEntries: 1 });
    try {
      const [a, b] = [`u-${randomUUID()}`, `u-${randomUUID()}`];
      const attempts = await Promise.all([a, b].flatMap((id) => Array.from({ length: 50 }, () => increment(store, id, ev))));
      expect(attempts.some((n) => n > 1)).toBe(true);
      for (const id of [a, b]) {
        expect(await store.load<Counter>('user', id)).toMatchObject({ sequence: 50, state: { count: 50 } });
        expect((await store.events('user', id)).map((e) => e.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      }
      expect(store.stats.cached).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('commits concurrent appends together, each in its own savepoint: a conflicting one fails alone', async () => {
    const store = await createSqliteStore({ dataDir: await newDir(), reducers: counters, cacheEntries: 1 });
    try {
      await store.append(ev('holder', 1), { claims: ['k:taken'] });
      await store.append(ev('old', 1));
      await store.append(ev('evicts-old', 1)); // 'old' is no longer in memory: the worker judges it
      const before = { ...store.stats };
      const results = await Promise.allSettled([
        store.append(ev('a', 1), { base: null }),
        store.append(ev('b', 1), { base: null, claims: ['k:free', 'k:taken'] }),
        store.append(ev('old', 1), { base: null }),
        ...Array.from({ length: 50 }, (_, i) => store.append(ev(`c${i}`, 1), { base: null })),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(51);
      expect(results[1]).toMatchObject({ status: 'rejected', reason: expect.any(ConstraintError) });
      expect(results[2]).toMatchObject({ status: 'rejected', reason: expect.any(ConcurrencyError) });
      expect(store.stats.appends - before.appends).toBe(53);
      expect(store.stats.syncs - before.syncs).toBe(1); // one transaction, one commit
      expect(await store.load('user', 'b')).toBeNull();
      expect(await store.events('user', 'b')).toEqual([]);
      expect(await store.lookup('k:free')).toBeNull();
      expect(await store.events('user', 'old')).toHaveLength(1);
      expect((await store.load<Counter>('user', 'c49'))?.sequence).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('imports the old log at first start (events, claims, states, search rows), renames it, and says so', async () => {
    const dir = await newDir();
    // As the old log store wrote them: a user added then changed, an org with a Date and bytes in its payload.
    const at = (ms: number) => new Date(Date.UTC(2024, 4, 6, 7, 8, 9, ms));
    const adaEvents: StoredEvent[] = [
      { ...userAt('ada', 1, userEvent.added(human('Ada'))), createdAt: at(1), claims: ['username:ada'] },
      { ...userAt('ada', 2, userEvent.emailChanged('ada@new.example.com', true)), creator: 'ada', createdAt: at(2), claims: [] },
    ];
    const orgEvents: StoredEvent[] = [
      {
        aggregateType: 'org',
        aggregateId: 'org-1',
        sequence: 1,
        type: 'org.added',
        payload: { name: 'One', domain: 'one.localhost', at: new Date('2024-05-06T07:08:09.010Z'), raw: Buffer.from([1, 2]) },
        creator: 'system',
        resourceOwner: 'org-1',
        createdAt: at(3),
        claims: ['orgName:one'],
      },
    ];
    await writeOldLog(dir, [...adaEvents, ...orgEvents]);
    const oldEvents = { ada: adaEvents, org: orgEvents };
    const oldAda = reduceEvents<User>(reducers.user, null, adaEvents);
    const oldOrg = reduceEvents(reducers.org, null, orgEvents);
    await appendFile(join(dir, LOG_FILE), '{"aggregateType":"user","aggre'); // torn by a crash

    const lines: string[] = [];
    const store: SqliteStore = await createSqliteStore({
      dataDir: dir,
      reducers,
      userFields: userSearchFields,
      logger: createLogger('info', (l) => lines.push(l)),
    });
    const logged = lines.map((l) => JSON.parse(l) as { level: string; msg: string; events?: number });
    expect(logged).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringContaining('torn last line') }));
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('imported the old event log'), events: 3 }),
    );
    try {
      await expect(access(join(dir, LOG_FILE))).rejects.toThrow();
      await access(join(dir, `${LOG_FILE}.imported`));
      expect(await store.events('user', 'ada')).toEqual(oldEvents.ada);
      expect(await store.events('org', 'org-1')).toEqual(oldEvents.org);
      expect(await store.load('user', 'ada')).toEqual(oldAda);
      expect(await store.load('org', 'org-1')).toEqual(oldOrg);
      expect(await store.lookup('username:ada')).toEqual({ aggregateType: 'user', aggregateId: 'ada' });
      expect(await store.lookup('orgName:one')).toEqual({ aggregateType: 'org', aggregateId: 'org-1' });
      const found = await store.searchUsers({
        filter: { orgId: 'org-1', email: { op: 'EXACT', value: 'ada@new.example.com' } },
        sort: 'USERNAME',
        descending: false,
        limit: 10,
      });
      expect(found.map((s) => s.id)).toEqual(['ada']);
      await expect(store.append(ev('ada', 2))).rejects.toBeInstanceOf(ConcurrencyError);
    } finally {
      await store.close();
    }
    // Imported once: the next start finds no log and reads nothing.
    const again = await createSqliteStore({ dataDir: dir, reducers, userFields: userSearchFields });
    expect((await again.events('user', 'ada')).length).toBe(2);
    await again.close();
  });

  it('refuses a corrupt old log, importing none of it and leaving it where it is', async () => {
    const dir = await newDir();
    await writeOldLog(dir, [{ ...ev('x', 1), createdAt: new Date(), claims: ['k:x'] }]);
    await appendFile(join(dir, LOG_FILE), 'not json\n');
    await expect(createSqliteStore({ dataDir: dir, reducers: counters })).rejects.toThrow(/line 2 is corrupt/);
    await access(join(dir, LOG_FILE));
    await rm(join(dir, LOG_FILE));
    const store = await createSqliteStore({ dataDir: dir, reducers: counters });
    expect(await store.events('user', 'x')).toEqual([]);
    expect(await store.lookup('k:x')).toBeNull();
    await store.close();
  });

  it('holds at most cacheEntries snapshots and still serves every aggregate', async () => {
    const dir = await newDir();
    let store = await createSqliteStore({ dataDir: dir, reducers: counters, cacheEntries: 10 });
    const ids = Array.from({ length: 100 }, (_, i) => `lru-${i}`);
    await Promise.all(ids.map((id, i) => store.append(ev(id, 1, { add: i }))));
    expect(store.stats.cached).toBe(10);
    for (const [i, id] of ids.entries()) expect(await store.load<Counter>('user', id)).toMatchObject({ sequence: 1, state: { count: i } });
    const many = await store.loadMany<Counter>('user', ids);
    expect(ids.map((id) => many.get(id)?.state.count)).toEqual(ids.map((_, i) => i));
    expect(store.stats.cached).toBe(10);
    expect(store.stats.statesRead).toBeGreaterThanOrEqual(180); // from the database, not memory
    await store.close();
    store = await createSqliteStore({ dataDir: dir, reducers: counters, cacheEntries: 10 });
    await increment(store, 'lru-5', ev);
    expect(await store.load<Counter>('user', 'lru-5')).toMatchObject({ sequence: 2, state: { count: 6 } });
    await store.close();
  });

  it('holds at most cacheBytes of user states in memory, keeps none heavier than that, and still serves every user whole', async () => {
    // Users as large as SPEC allows hold 20 metadata values of up to 500,000 characters:
    // an entry count alone would let a few thousand of them fill any heap.
    const budget = 4 * 1024 * 1024;
    const store = await createSqliteStore({ dataDir: await newDir(), reducers, userFields: userSearchFields, cacheBytes: budget });
    const value = (seed: number, chars: number) => Buffer.alloc((chars / 4) * 3, seed).toString('base64');
    const withMetadata = (name: string, values: number, chars: number): UserAdded => ({
      ...human(name),
      metadata: Array.from({ length: values }, (_, k) => ({ key: `k${k}`, value: value(k + name.length, chars) })),
    });
    const append = (id: string, user: UserAdded) =>
      store.append(
        { aggregateType: 'user', aggregateId: id, sequence: 1, ...userEvent.added(user), creator: 'tester', resourceOwner: 'org-1' },
        { base: null },
      );
    const ids = Array.from({ length: 12 }, (_, i) => `big-${i}`);
    for (const id of ids) await append(id, withMetadata(id, 2, 500_000)); // about 1 MB of JSON each
    expect(store.stats.cachedBytes).toBeGreaterThan(3 * 1000_000);
    expect(store.stats.cachedBytes).toBeLessThanOrEqual(budget);
    expect(store.stats.cached).toBeLessThan(5);
    for (const id of ids) {
      const user = await store.load<User>('user', id);
      expect(user?.state.metadata.map((m) => m.value)).toEqual([value(0 + id.length, 500_000), value(1 + id.length, 500_000)]);
      expect(store.stats.cachedBytes).toBeLessThanOrEqual(budget);
    }

    // Heavier than the whole budget: answered from the database every time, never held.
    await append('huge', withMetadata('huge', 10, 500_000));
    const before = { ...store.stats, cachedBytes: store.stats.cachedBytes };
    for (let i = 0; i < 3; i++) expect((await store.load<User>('user', 'huge'))?.state.metadata).toHaveLength(10);
    expect(store.stats.statesRead - before.statesRead).toBe(3);
    expect(store.stats.cachedBytes).toBe(before.cachedBytes);
    await store.close();
  });

  it('opens a store of 200,000 users without reading their events or states, and serves them', { timeout: 300_000 }, async () => {
    const dir = await newDir();
    const { orgIds, sampleUserIds } = await bulkLoadUsers({ dataDir: dir, users: 200_000, orgs: 4 });
    const store = await createSqliteStore({ dataDir: dir, reducers, userFields: userSearchFields });
    try {
      expect(store.stats).toMatchObject({ eventsRead: 0, statesRead: 0, cached: 0 });
      const user = (await store.load<User>('user', sampleUserIds.at(-1)!))!;
      expect(user).toMatchObject({ sequence: 1, resourceOwner: orgIds[199_999 % 4], state: { state: 'USER_STATE_INITIAL' } });
      expect(await store.lookup(`username:${user.state.username}`)).toEqual({ aggregateType: 'user', aggregateId: user.id });
      expect(await store.load('org', orgIds[0]!)).toMatchObject({ sequence: 1 });
      expect(store.stats).toMatchObject({ eventsRead: 0, statesRead: 2 });
      expect(await store.countUsers({ orgId: orgIds[1] })).toBe(50_000);
      const page = await store.searchUsers<User>({
        filter: { orgId: orgIds[2], username: { op: 'PREFIX', value: 'grace.' } },
        sort: 'USERNAME',
        descending: false,
        limit: 5,
      });
      expect(page).toHaveLength(5);
      expect(page.every((s) => s.resourceOwner === orgIds[2] && s.state.username.startsWith('grace.'))).toBe(true);
      expect(store.stats.statesRead).toBe(2 + 5); // the page's users, loaded after the search named them
      const again = await store.searchUsers<User>({
        filter: { orgId: orgIds[2], username: { op: 'PREFIX', value: 'grace.' } },
        sort: 'USERNAME',
        descending: false,
        limit: 5,
      });
      expect(again.map((s) => s.id)).toEqual(page.map((s) => s.id));
      expect(store.stats.statesRead).toBe(2 + 5); // the same page again: from memory
      // Written by the loader as the commands write them: the next command appends on it.
      const { snapshot } = await store.append<User>(
        {
          aggregateType: 'user',
          aggregateId: user.id,
          sequence: 2,
          ...userEvent.emailVerified(),
          creator: 'tester',
          resourceOwner: user.resourceOwner,
        },
        { base: user },
      );
      expect(snapshot.state.email.isVerified).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('lets one store own a folder at a time', async () => {
    const dir = await newDir();
    const first = await createSqliteStore({ dataDir: dir, reducers: counters });
    await expect(createSqliteStore({ dataDir: dir, reducers: counters })).rejects.toThrow(/in use by another process/);
    await first.append(ev('a', 1));
    await first.close();
    const second = await createSqliteStore({ dataDir: dir, reducers: counters });
    expect((await second.load('user', 'a'))?.sequence).toBe(1);
    await second.close();
  });

  it('keeps its files owner-only whatever the umask', async () => {
    const previous = process.umask(0o022);
    try {
      const dir = join(await newDir(), 'data');
      const store = await createSqliteStore({ dataDir: dir, reducers: counters });
      await store.append(ev('a', 1));
      const files = await readdir(dir);
      expect(files).toContain(DB_FILE);
      for (const f of files) expect([f, ((await stat(join(dir, f))).mode & 0o777).toString(8)]).toEqual([f, '600']);
      expect(((await stat(dir)).mode & 0o777).toString(8)).toBe('700');
      await store.close();
    } finally {
      process.umask(previous);
    }
  });
});

describe('sqlite event store: user search', () => {
  userSearchContract(async () => createSqliteStore({ dataDir: await newDir(), reducers, userFields: userSearchFields, cacheEntries: 16 }));
});

// The plans SQLite makes for the searches, on the real schema: a page is an index range read
// from its key on; a list of ids or emails (ListUsers' in_user_ids_query, in_user_emails_query)
// is one lookup per value, never a walk of the organization's users, however many it has.
describe('sqlite event store: user search plans', () => {
  const db = openDatabase(':memory:');
  afterAll(() => db.close());
  const plan = (q: { sql: string; params: SQLInputValue[] }) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[]).map((r) => r.detail);
  const ids = Array.from({ length: MAX_FILTER_VALUES }, (_, i) => `id-${i}`);
  const after = { USERNAME: { value: 'm', id: 'x' }, CREATION_DATE: { value: 1, id: 'x' } } as const;

  for (const sort of ['USERNAME', 'CREATION_DATE'] as const) {
    for (const orgId of ['org-a', undefined]) {
      const name = `${sort}, ${orgId ? 'an organization' : 'every organization'}`;
      it(`a page without a list: the order's index, no sort (${name})`, () => {
        const steps = plan(
          searchQuery({ filter: { orgId, state: 'USER_STATE_ACTIVE' }, sort, descending: false, limit: 101, after: after[sort] }),
        );
        expect(steps.some((s) => /^SEARCH u USING (COVERING )?INDEX user_search_(org_)?(username|created) /.test(s))).toBe(true);
        expect(steps.join(' | ')).not.toContain('TEMP B-TREE');
      });
      it(`ids: one primary key lookup each, with or without a key to page from (${name})`, () => {
        const filters: UserFilter[] = [
          { orgId, ids },
          { orgId, allOf: [{ ids }], username: { op: 'PREFIX', value: 'a' } },
        ];
        for (const filter of filters) {
          for (const from of [undefined, after[sort]]) {
            const steps = plan(searchQuery({ filter, sort, descending: true, limit: 101, after: from }));
            expect(steps[1]).toBe('SEARCH u USING PRIMARY KEY (id=?)');
          }
        }
        expect(plan(countQuery({ orgId, ids }))).toEqual(['SEARCH u USING PRIMARY KEY (id=?)']);
      });
      it(`emails: one lookup each in the email index (${name})`, () => {
        const steps = plan(
          searchQuery({
            filter: { orgId, emails: ['a@example.com', 'b@example.com'] },
            sort,
            descending: false,
            limit: 101,
            after: after[sort],
          }),
        );
        expect(steps[1]).toMatch(/^SEARCH u USING (COVERING )?INDEX user_search_(org_)?email_sorts \((org=\? AND )?email=\?/);
      });
    }
  }
});
