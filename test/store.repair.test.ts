// The MongoDB store's repair loop (src/store/mongo-repair.ts, run by src/store/mongo.ts; the bound in src/store/port.ts):
// a state document left behind its events by a crash between the two writes is
// caught up in the background, without a write to that aggregate and without a read
// added to any request. The crash is played by inserting the event directly, as
// test/e2e.catch-up.test.ts does. On FerretDB (MongoDB-wire).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { orgEvent, type Org } from '../src/model/orgs.ts';
import { userEvent, type Profile, type User } from '../src/model/users.ts';
import { createMongoStore, type MongoEventStore, type MongoStoreOptions } from '../src/store/mongo.ts';
import { ConcurrencyError, type EventStore, type NewEvent, type Reducer, type Reducers } from '../src/store/port.ts';
import { MeDocument, UpdateHumanProfileDocument, UserDocument, AddHumanUserDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const uid = (prefix = 'u') => `${prefix}-${randomUUID().slice(0, 8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Counter {
  count: number;
}
const counter: Reducer<Counter> = (state, event) => {
  if (event.payload.poison) throw new Error(`event ${event.sequence} of ${event.aggregateId} cannot be folded`);
  return { count: (state?.count ?? 0) + ((event.payload.add as number | undefined) ?? 0) };
};
const reducers: Reducers = { instance: counter, org: counter, user: counter, idp: counter, project: counter };

function ev(aggregateId: string, sequence: number, payload: Record<string, unknown> = { add: 1 }): NewEvent {
  return { aggregateType: 'user', aggregateId, sequence, type: 'user.counted', payload, creator: 'tester', resourceOwner: 'org-1' };
}

/** The event committed, its state write never made: what a crash between the two leaves. */
async function crashAfterEvent(db: Db, event: NewEvent, createdAt = new Date()): Promise<void> {
  await db.collection('events').insertOne({ ...event, createdAt, claims: [] });
}

/**
 * Runs `check`, a claim about an event younger than the repair loop's grace (2 s), and holds
 * it only when it finished while the event (inserted at `inserted`) was still that young: on
 * a machine slow enough that it did not, the loop may rightly have repaired it already. Says
 * so in the log, so that a run that never checks shows.
 */
async function whileYounger(inserted: number, check: () => Promise<void>): Promise<void> {
  const failure = await check().then(
    () => undefined,
    (e: unknown) => e,
  );
  const age = Date.now() - inserted;
  if (age < 1500) {
    if (failure) throw failure;
  } else {
    console.log(`[repair] !!! not checked: the step before the grace ended took ${age} ms (a loaded machine)`);
  }
}

/** Polls until check passes; the milliseconds it took. */
async function until(check: () => Promise<boolean>, timeoutMs = 15_000, everyMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** One +1 as the command runner makes it: load once, append on it, catch up only after a conflict. */
async function increment(store: EventStore, id: string): Promise<void> {
  let current = await store.load<Counter>('user', id);
  for (let attempt = 1; ; attempt++) {
    try {
      await store.append(ev(id, (current?.sequence ?? 0) + 1), { base: current });
      return;
    } catch (e) {
      if (!(e instanceof ConcurrencyError) || attempt > 500) throw e;
      await sleep(Math.random() * 3);
      current = await store.catchUp<Counter>('user', id, current);
    }
  }
}

describeWith('mongo', 'the state repair loop on MongoDB-wire', (mongoUrl) => {
  const prefix = `repair_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const client = new MongoClient(mongoUrl);
  const used: string[] = [];
  const database = (name: string) => {
    used.push(`${prefix}_${name}`);
    return { dbName: `${prefix}_${name}`, db: client.db(`${prefix}_${name}`) };
  };
  const stores: EventStore[] = [];
  const open = async (dbName: string, more: Partial<MongoStoreOptions> = {}) => {
    const store = await createMongoStore({ url: mongoUrl, dbName, reducers, ...more });
    stores.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.allSettled(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    for (const name of used)
      await client
        .db(name)
        .dropDatabase()
        .catch(() => {});
    await client.close();
  });

  describe('through the gateway over HTTP, at the default intervals (1 s, grace 2 s)', () => {
    const { dbName, db } = database('gateway');
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { MONGODB_URL: mongoUrl, MONGODB_DB: dbName } });
    });
    afterAll(async () => gw?.close());

    const addUser = async (firstName = 'Rita') => {
      const res = await gw.send(AddHumanUserDocument, {
        input: { profile: { firstName, lastName: 'Pair' }, email: { email: `${uid('r')}@example.com`, returnCode: true } },
      });
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser.userId;
    };
    const store = () => gw.gateway.stores.store as MongoEventStore;

    it('a profile change left without its state document shows in load, user(id) and me within seconds, with no write to the user', async () => {
      const id = await addUser();
      const before = (await store().load<User>('user', id))!;
      const profile: Profile = { ...before.state.profile, firstName: 'Repaired', displayName: 'Repaired Pair' };
      const repairedBefore = store().repairStats.repaired;
      const inserted = Date.now();
      await crashAfterEvent(db, {
        aggregateType: 'user',
        aggregateId: id,
        sequence: 2,
        ...userEvent.profileChanged(profile),
        creator: 'crashed-gateway',
        resourceOwner: before.resourceOwner,
      });

      // Younger than the grace period: the document as stored (its writer may be between its two writes).
      await whileYounger(inserted, async () => expect((await store().load<User>('user', id))?.sequence).toBe(1));
      // Then within seconds: the grace (2 s), the interval (1 s), and the passes' own time,
      // which the loop stretches when FerretDB is slow (up to ten intervals).
      const ms = await until(async () => (await store().load<User>('user', id))?.sequence === 2, 30_000);
      console.log(`[repair] a profile change inserted directly showed in store.load after ${ms} ms (grace 2000 ms, interval 1000 ms)`);

      expect((await store().load<User>('user', id))?.state.profile).toEqual(profile);
      const read = await gw.send(UserDocument, { id });
      expect(read.errors, read.text).toBeUndefined();
      expect(read.data?.user?.profile?.firstName).toBe('Repaired');
      const me = await gw.send(MeDocument, {}, { token: await gw.tokenFor(id) });
      expect(me.errors, me.text).toBeUndefined();
      expect(me.data?.me?.profile?.firstName).toBe('Repaired');
      // Nothing was written to the user: the events are the two there were.
      expect((await store().events('user', id)).map((e) => e.creator)).toEqual([gw.adminId, 'crashed-gateway']);
      expect(store().repairStats.repaired).toBeGreaterThan(repairedBefore);
    });

    it('an organization role grant left without its state document takes effect for permission checks within seconds', async () => {
      const [manager, target] = [await addUser('Manny'), await addUser('Tara')];
      const token = await gw.tokenFor(manager);
      const change = (firstName: string) =>
        gw.send(UpdateHumanProfileDocument, { input: { userId: target, firstName, lastName: 'Pair' } }, { token });

      const denied = await change('Denied');
      expect(denied.errors?.[0]?.extensions?.code, denied.text).toBe('PERMISSION_DENIED');

      const org = (await store().load<Org>('org', gw.defaultOrgId))!;
      const inserted = Date.now();
      await crashAfterEvent(db, {
        aggregateType: 'org',
        aggregateId: org.id,
        sequence: org.sequence + 1,
        ...orgEvent.memberAdded(manager, ['ORG_USER_MANAGER']),
        creator: gw.adminId,
        resourceOwner: org.id,
      });
      await whileYounger(inserted, async () => {
        const stillDenied = await change('Early');
        expect(stillDenied.errors?.[0]?.extensions?.code, stillDenied.text).toBe('PERMISSION_DENIED');
      });

      let answer = denied;
      const ms = await until(
        async () => {
          answer = await change('Granted');
          return answer.errors === undefined;
        },
        30_000,
        100,
      );
      console.log(`[repair] an org role grant inserted directly took effect after ${ms} ms`);
      expect(answer.data?.updateHumanProfile.details.sequence).toBe('2');
      const orgAfter = (await store().load<Org>('org', org.id))!;
      expect(orgAfter.sequence).toBe(org.sequence + 1);
      expect(orgAfter.state.members).toContainEqual({ userId: manager, roles: ['ORG_USER_MANAGER'] });
      expect(await store().events('org', org.id)).toHaveLength(org.sequence + 1);
    });
  });

  it('a newly started store repairs what was left behind before it started (the startup sweep), a batch at a time', async () => {
    const { dbName, db } = database('startup');
    const writer = await open(dbName, { repair: false });
    const ids = Array.from({ length: 7 }, () => uid());
    for (const id of ids) await writer.append(ev(id, 1), { base: null });
    // Left by a crash of every gateway 20 minutes ago (far behind any overlap), and one 2 hours ago.
    const old = new Date(Date.now() - 20 * 60_000);
    for (const id of ids) await crashAfterEvent(db, ev(id, 2, { add: 10 }), old);
    const ancient = uid();
    await writer.append(ev(ancient, 1), { base: null });
    await crashAfterEvent(db, ev(ancient, 2, { add: 10 }), new Date(Date.now() - 2 * 3_600_000));
    await writer.close();
    expect(await db.collection('users').countDocuments({ _id: { $in: ids as never[] }, sequence: 1 })).toBe(ids.length);

    const started = await open(dbName, { repair: { intervalMs: 20, batchSize: 3 } });
    await until(async () => started.repairStats.sweeps >= 1);
    for (const id of ids)
      expect(await started.load<Counter>('user', id)).toMatchObject({ sequence: 2, state: { count: 11 }, changeDate: old });
    expect(started.repairStats.repaired).toBe(ids.length);
    expect(started.repairStats.passes).toBeGreaterThanOrEqual(3); // 7 aggregates, 3 events per pass
    // Older than the startup window (1 h): left to the next write to it.
    expect((await started.load<Counter>('user', ancient))?.sequence).toBe(1);
    expect(await started.events('user', ids[0]!)).toHaveLength(2);
  });

  it('finds an event written by a gateway whose clock is behind (inside the overlap), after its sweep went past', async () => {
    const { dbName, db } = database('skew');
    const store = await open(dbName, { repair: { intervalMs: 20, graceMs: 100, overlapMs: 10_000 } });
    const id = uid();
    await store.append(ev(id, 1), { base: null });
    const sweeps = store.repairStats.sweeps;
    await until(async () => store.repairStats.sweeps >= sweeps + 2);
    await crashAfterEvent(db, ev(id, 2, { add: 4 }), new Date(Date.now() - 5_000));
    await until(async () => (await store.load<Counter>('user', id))?.sequence === 2, 5_000);
    expect((await store.load<Counter>('user', id))?.state.count).toBe(5);
  });

  it('does not fight live writers: 50 concurrent writers on one user, two gateways looping every 5 ms with no grace, nothing lost', async () => {
    const { dbName } = database('writers');
    const tight = { intervalMs: 5, graceMs: 0 };
    const [a, b] = [await open(dbName, { repair: tight }), await open(dbName, { repair: tight })];
    const id = uid();
    await a.append(ev(id, 1), { base: null });
    await Promise.all(Array.from({ length: 50 }, (_, i) => increment(i % 2 ? a : b, id)));
    const after = await a.load<Counter>('user', id);
    expect(after).toMatchObject({ sequence: 51, state: { count: 51 } });
    expect((await a.events('user', id)).map((e) => e.sequence)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    expect(await a.catchUp('user', id, null)).toEqual(after);
    expect(a.repairStats.passes + b.repairStats.passes).toBeGreaterThan(0);
    expect(a.repairStats.errors + b.repairStats.errors).toBe(0);
  });

  it('keeps going past an event it cannot fold, and reports failures at most once per 10 s', async () => {
    const { dbName, db } = database('poison');
    const writer = await open(dbName, { repair: false });
    const [bad1, bad2, good] = [uid(), uid(), uid()];
    for (const id of [bad1, bad2, good]) await writer.append(ev(id, 1), { base: null });
    await crashAfterEvent(db, ev(bad1, 2, { poison: true }));
    await crashAfterEvent(db, ev(bad2, 2, { poison: true }));
    await crashAfterEvent(db, ev(good, 2, { add: 1 }));
    const lines: string[] = [];
    {
      const store = await open(dbName, { repair: { intervalMs: 20, graceMs: 0 }, logger: createLogger('info', (l) => lines.push(l)) });
      await until(async () => (await store.load<Counter>('user', good))?.sequence === 2);
      await until(async () => store.repairStats.errors >= 2);
      await until(async () => store.repairStats.sweeps >= 3);
      const reports = lines
        .map((l) => JSON.parse(l) as { msg: string; error?: string })
        .filter((l) => l.msg.startsWith('mongo store: state repair'));
      expect(reports).toHaveLength(1);
      expect(reports[0]!.error).toMatch(/cannot be folded/);
      expect((await store.load<Counter>('user', bad1))?.sequence).toBe(1);
    }
  });

  it('sends none of its commands to onCommand listeners (they count requests)', async () => {
    const { dbName, db } = database('quiet');
    const store = await open(dbName, { repair: { intervalMs: 10, graceMs: 0 } });
    const seen: string[] = [];
    const stop = store.onCommand((e) => seen.push(`${e.phase} ${e.command}`));
    const id = uid();
    await store.append(ev(id, 1), { base: null });
    await crashAfterEvent(db, ev(id, 2));
    await until(async () => store.repairStats.repaired >= 1 && store.repairStats.passes >= 5, 5_000, 5);
    stop();
    // Only the append's two commands (the polling above reads through repairStats, not the store).
    expect(seen).toEqual(['started insert', 'succeeded insert', 'started update', 'succeeded update']);
  });

  it('stops on close: no pass after it, and a process whose store is closed exits by itself', async () => {
    const { dbName } = database('close');
    const store = await open(dbName, { repair: { intervalMs: 10 } });
    await until(async () => store.repairStats.passes >= 3);
    await store.close();
    const passes = store.repairStats.passes;
    await sleep(100);
    expect(store.repairStats.passes).toBe(passes);

    const script = `
      const { createMongoStore } = await import('./src/store/mongo.ts');
      const same = (s, e) => ({ count: (s?.count ?? 0) + 1 });
      const reducers = { instance: same, org: same, user: same, idp: same, project: same };
      const store = await createMongoStore({ url: ${JSON.stringify(mongoUrl)}, dbName: ${JSON.stringify(dbName)}, reducers, repair: { intervalMs: 10 } });
      while (store.repairStats.passes < 3) await new Promise((r) => setTimeout(r, 10));
      await store.close();
      const passes = store.repairStats.passes;
      setTimeout(() => console.log(JSON.stringify({ passes, after: store.repairStats.passes, resources: process.getActiveResourcesInfo() })), 100);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    const code = await new Promise<number | string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the process did not exit within 15 s: ${out} ${err}`));
      }, 15_000);
      child.once('exit', (c, signal) => {
        clearTimeout(timer);
        resolve(c ?? signal ?? -1);
      });
    });
    expect(code, err).toBe(0);
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as { passes: number; after: number; resources: string[] };
    expect(report.after).toBe(report.passes);
    expect(report.passes).toBeGreaterThanOrEqual(3);
    // Nothing of the store is left (the setTimeout that prints this is the only timer). A one-shot
    // file request may still be in flight on a loaded machine (tsx writing its transform cache,
    // seen under CI beside a CPU-heavy job): it ends by itself and is not the store's; a socket
    // or a timer of the store would still show.
    const oneShot = new Set(['TTYWrap', 'PipeWrap', 'FSReqCallback', 'FSReqPromise']);
    expect(report.resources.filter((r) => !oneShot.has(r))).toEqual(['Timeout']);
  });
});
