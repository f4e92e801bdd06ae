// One contract for both EventStore adapters (DESIGN.md section 3), plus what
// only one of them has: stale claims (MongoDB).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMongoStore } from '../src/store/mongo.ts';
import {
  ConcurrencyError,
  ConstraintError,
  type EventStore,
  type NewEvent,
  type Reducer,
  type Reducers,
  type StoredEvent,
} from '../src/store/port.ts';
import { UnavailableError } from '../src/errors.ts';
import { faultyProxy, freePort } from './support/net.ts';
import { increment } from './support/increment.ts';
import { describeWith } from './support/servers.ts';

interface Counter {
  count: number;
  fields: Record<string, unknown>;
}
const counter: Reducer<Counter> = (state, event) => ({
  count: (state?.count ?? 0) + ((event.payload.add as number | undefined) ?? 0),
  fields: { ...state?.fields, ...(event.payload.set as Record<string, unknown> | undefined) },
});
const reducers: Reducers = { instance: counter, org: counter, user: counter, idp: counter, project: counter };

const uid = (prefix = 'u') => `${prefix}-${randomUUID().slice(0, 8)}`;

function ev(aggregateId: string, sequence: number, payload: Record<string, unknown> = { add: 1 }): NewEvent {
  return {
    aggregateType: 'user',
    aggregateId,
    sequence,
    type: 'user.counted',
    payload,
    creator: 'tester',
    resourceOwner: 'org-1',
  };
}

interface Harness {
  store: EventStore;
  /** Close and open the store on the same data. */
  reopen(): Promise<EventStore>;
  /**
   * Write an event but not its state document, as a crash between the two writes
   * leaves it; returns the store to read with afterwards.
   */
  writeEventOnly(event: StoredEvent): Promise<EventStore>;
}

function contract(open: () => Promise<Harness>) {
  let h: Harness;
  beforeAll(async () => {
    h = await open();
  });
  afterAll(async () => {
    await h?.store.close();
  });

  it('numbers events 1, 2, 3 per aggregate, independently', async () => {
    const [a, b] = [uid(), uid()];
    const first = await h.store.append<Counter>(ev(a, 1, { add: 1, set: { name: 'A' } }), {});
    await h.store.append(ev(a, 2));
    const third = await h.store.append<Counter>(ev(a, 3, { add: 5 }));
    const other = await h.store.append<Counter>(ev(b, 1, { add: 7 }));

    expect(third.snapshot).toMatchObject({
      id: a,
      sequence: 3,
      resourceOwner: 'org-1',
      state: { count: 7, fields: { name: 'A' } },
    });
    expect(third.snapshot.creationDate).toEqual(first.event.createdAt);
    expect(third.snapshot.changeDate).toEqual(third.event.createdAt);
    expect(other.snapshot).toMatchObject({ id: b, sequence: 1, state: { count: 7 } });
    expect(await h.store.load('user', a)).toEqual(third.snapshot);
    const events = await h.store.events('user', a);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(events[0]).toMatchObject({
      type: 'user.counted',
      creator: 'tester',
      claims: [],
      payload: { add: 1, set: { name: 'A' } },
    });
    expect(events[0]!.createdAt).toBeInstanceOf(Date);
  });

  it('loads nothing for an unknown aggregate, and only the known ones in loadMany', async () => {
    const [a, b] = [uid(), uid()];
    await h.store.append(ev(a, 1));
    await h.store.append(ev(b, 1, { add: 2 }));
    expect(await h.store.load('user', uid())).toBeNull();
    expect(await h.store.load('org', a)).toBeNull();
    const many = await h.store.loadMany<Counter>('user', [a, uid(), b]);
    expect([...many.keys()].sort()).toEqual([a, b].sort());
    expect(many.get(b)?.state.count).toBe(2);
    expect((await h.store.loadMany('user', [])).size).toBe(0);
  });

  it('loses no update: 50 concurrent increments with retries all count', async () => {
    const id = uid();
    const attempts = await Promise.all(Array.from({ length: 50 }, () => increment(h.store, id, ev)));
    const snapshot = await h.store.load<Counter>('user', id);
    expect(snapshot).toMatchObject({ sequence: 50, state: { count: 50 } });
    expect(attempts.some((n) => n > 1)).toBe(true); // they really did collide
    expect((await h.store.events('user', id)).map((e) => e.sequence)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('lets exactly one of two writers of the same sequence win', async () => {
    const id = uid();
    await h.store.append(ev(id, 1));
    const results = await Promise.allSettled([h.store.append(ev(id, 2, { add: 10 })), h.store.append(ev(id, 2, { add: 100 }))]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ConcurrencyError);
    expect((await h.store.load<Counter>('user', id))?.state.count).toBeOneOf([11, 101]);
    await expect(h.store.append(ev(id, 1))).rejects.toBeInstanceOf(ConcurrencyError);
  });

  it('shows the winner to a loser that catches up right after its ConcurrencyError (embedded: before the winner is on disk)', async () => {
    const id = uid();
    // Each loser catches up the moment its error arrives, while the winner may still wait for its disk sync.
    const tries = Array.from({ length: 5 }, (_, i) =>
      h.store.append<Counter>(ev(id, 1, { add: i + 1 }), { base: null }).then(
        (won) => ({ won: true, snapshot: won.snapshot }),
        async (e: unknown) => {
          if (!(e instanceof ConcurrencyError)) throw e;
          return { won: false, snapshot: await h.store.catchUp<Counter>('user', id, null) };
        },
      ),
    );
    const outcomes = await Promise.all(tries);
    const winner = outcomes.filter((o) => o.won);
    expect(winner).toHaveLength(1);
    for (const o of outcomes) expect(o.snapshot).toEqual(winner[0]!.snapshot);
  });

  it('refuses a claimed key to another aggregate and names the holder', async () => {
    const [a, b, key] = [uid(), uid(), `username:${uid()}`];
    await h.store.append(ev(a, 1), { claims: [key] });
    const refused = h.store.append(ev(b, 1), { claims: [key] });
    await expect(refused).rejects.toBeInstanceOf(ConstraintError);
    await expect(refused).rejects.toMatchObject({ key });
    expect(await h.store.lookup(key)).toEqual({ aggregateType: 'user', aggregateId: a });
    expect(await h.store.load('user', b)).toBeNull();
    // The holder may claim its own key again.
    const again = await h.store.append(ev(a, 2), { claims: [key] });
    expect(again.event.claims).toEqual([key]);
    expect(await h.store.lookup(key)).toEqual({ aggregateType: 'user', aggregateId: a });
    expect(await h.store.lookup(`username:${uid()}`)).toBeNull();
  });

  it('releases the claims of a failed append', async () => {
    const [a, b, taken, free1, free2] = [uid(), uid(), `k:${uid()}`, `k:${uid()}`, `k:${uid()}`];
    await h.store.append(ev(a, 1), { claims: [taken] });
    await expect(h.store.append(ev(a, 1), { claims: [free1] })).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(h.store.append(ev(b, 1), { claims: [free2, taken] })).rejects.toBeInstanceOf(ConstraintError);
    expect(await h.store.lookup(free1)).toBeNull();
    expect(await h.store.lookup(free2)).toBeNull();
    await h.store.append(ev(b, 1), { claims: [free1, free2] });
    expect(await h.store.lookup(free1)).toEqual({ aggregateType: 'user', aggregateId: b });
  });

  it('appends on the base given, and refuses a base the sequence does not follow', async () => {
    const a = uid();
    const first = await h.store.append<Counter>(ev(a, 1, { add: 2 }), { base: null });
    const second = await h.store.append<Counter>(ev(a, 2, { add: 3 }), { base: first.snapshot });
    expect(second.snapshot).toMatchObject({ sequence: 2, state: { count: 5 } });
    expect(await h.store.load('user', a)).toEqual(second.snapshot);
    await expect(h.store.append(ev(a, 2), { base: second.snapshot })).rejects.toThrow(/does not follow/);
    // A base left behind by another writer: the unique sequence decides.
    await expect(h.store.append(ev(a, 2), { base: first.snapshot })).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(h.store.append(ev(uid(), 1, {}), { base: null })).resolves.toBeTruthy();
    expect((await h.store.events('user', a)).map((e) => e.sequence)).toEqual([1, 2]);
  });

  it('catches a known snapshot up from the events after it', async () => {
    const a = uid();
    const first = await h.store.append<Counter>(ev(a, 1, { add: 1 }), { base: null });
    const second = await h.store.append<Counter>(ev(a, 2, { add: 2 }), { base: first.snapshot });
    expect(await h.store.catchUp('user', a, first.snapshot)).toEqual(second.snapshot);
    expect(await h.store.catchUp('user', a, null)).toEqual(second.snapshot);
    expect(await h.store.catchUp('user', a, second.snapshot)).toEqual(second.snapshot);
    expect(await h.store.catchUp('user', uid(), null)).toBeNull();
  });

  it('catches a state document behind its events up before the next write, losing nothing', async () => {
    const [a, b] = [uid(), uid()];
    const first = await h.store.append<Counter>(ev(a, 1, { add: 1 }));
    await h.store.append(ev(b, 1, { add: 1 }));
    const lost: StoredEvent = { ...ev(a, 2, { add: 41, set: { late: true } }), createdAt: new Date(), claims: [] };
    h.store = await h.writeEventOnly(lost);

    // A read serves the state document as it is (MongoDB: behind; embedded: replayed).
    const seen = await h.store.load<Counter>('user', a);
    expect(seen?.sequence).toBeOneOf([1, 2]);
    expect((await h.store.loadMany<Counter>('user', [a, b])).get(a)).toEqual(seen);
    // A write on it: the unique sequence refuses it, the catch-up folds the event in.
    if (seen!.sequence === 1) await expect(h.store.append(ev(a, 2), { base: seen })).rejects.toBeInstanceOf(ConcurrencyError);
    const caught = await h.store.catchUp<Counter>('user', a, seen);
    expect(caught).toMatchObject({ sequence: 2, state: { count: 42, fields: { late: true } } });
    expect(caught?.creationDate).toEqual(first.event.createdAt);
    expect(caught?.changeDate).toEqual(lost.createdAt);
    expect(await h.store.load('user', a)).toEqual(caught); // written back
    await h.store.append(ev(a, 3), { base: caught });
    expect((await h.store.load<Counter>('user', a))?.state.count).toBe(43);
    // An append given no base reads the aggregate caught up itself.
    const c = uid();
    await h.store.append(ev(c, 1));
    h.store = await h.writeEventOnly({ ...ev(c, 2, { add: 5 }), createdAt: new Date(), claims: [] });
    await h.store.append(ev(c, 3));
    expect(await h.store.load<Counter>('user', c)).toMatchObject({ sequence: 3, state: { count: 7 } });
  });

  it('keeps state, events and claims across a restart', async () => {
    const [a, key] = [uid(), `k:${uid()}`];
    await h.store.append(ev(a, 1, { add: 2, set: { when: new Date('2024-01-02T03:04:05.678Z'), bin: Buffer.from('hi') } }), {
      claims: [key],
    });
    await h.store.append(ev(a, 2));
    const before = { snapshot: await h.store.load('user', a), events: await h.store.events('user', a) };
    h.store = await h.reopen();
    expect(await h.store.load('user', a)).toEqual(before.snapshot);
    expect(await h.store.events('user', a)).toEqual(before.events);
    expect(await h.store.lookup(key)).toEqual({ aggregateType: 'user', aggregateId: a });
    const fields = (await h.store.load<Counter>('user', a))!.state.fields;
    expect(fields.when).toEqual(new Date('2024-01-02T03:04:05.678Z'));
    expect(Buffer.from(fields.bin as Uint8Array).toString()).toBe('hi');
    await expect(h.store.append(ev(a, 2))).rejects.toBeInstanceOf(ConcurrencyError);
  });

  it('takes 100 concurrent appends on distinct aggregates, all kept after a restart', async () => {
    const ids = Array.from({ length: 100 }, () => uid('g'));
    const results = await Promise.all(ids.map((id, i) => h.store.append<Counter>(ev(id, 1, { add: i }))));
    expect(results.map((r) => r.snapshot.state.count)).toEqual(ids.map((_, i) => i));
    h.store = await h.reopen();
    const many = await h.store.loadMany<Counter>('user', ids);
    expect(many.size).toBe(100);
    ids.forEach((id, i) => expect(many.get(id)).toMatchObject({ sequence: 1, state: { count: i } }));
  });

  it("reads a range of one aggregate's events, bounds included, in sequence order (eventRange)", async () => {
    const [a, b] = [uid(), uid()];
    for (let sequence = 1; sequence <= 5; sequence++) await h.store.append(ev(a, sequence, { add: sequence }));
    await h.store.append(ev(b, 1));
    const range = await h.store.eventRange('user', a, 2, 4);
    expect(range.map((e) => e.sequence)).toEqual([2, 3, 4]);
    expect(range[0]).toMatchObject({ aggregateType: 'user', aggregateId: a, type: 'user.counted', creator: 'tester', payload: { add: 2 } });
    expect(range[0]!.createdAt).toBeInstanceOf(Date);
    expect(range).toEqual((await h.store.events('user', a)).slice(1, 4));
    expect((await h.store.eventRange('user', a, 5, 9)).map((e) => e.sequence)).toEqual([5]);
    expect(await h.store.eventRange('user', a, 3, 2)).toEqual([]);
    expect(await h.store.eventRange('user', a, 6, 10)).toEqual([]);
    expect(await h.store.eventRange('org', a, 1, 5)).toEqual([]);
    expect(await h.store.eventRange('user', uid(), 1, 5)).toEqual([]);
  });

  it('answers ping', async () => {
    await expect(h.store.ping()).resolves.toBeUndefined();
  });
}

// ---------------------------------------------------------------- MongoDB

describeWith('mongo', 'mongo event store', (url) => {
  const dbName = `contract_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const client = new MongoClient(url);
  const db = client.db(dbName);
  const openMongo = (claimGraceMs?: number) => createMongoStore({ url, dbName, reducers, claimGraceMs });

  afterAll(async () => {
    await db.dropDatabase().catch(() => {});
    await client.close();
  });

  describe('contract', () => {
    contract(async () => {
      const h: Harness = {
        store: await openMongo(),
        async reopen() {
          await h.store.close();
          return openMongo();
        },
        async writeEventOnly(event) {
          await db.collection('events').insertOne({ ...event });
          return h.store;
        },
      };
      return h;
    });
  });

  it('writes the caught-up state document back', async () => {
    // No repair loop: it would catch the document up itself once the event is 2 s old.
    const store = await createMongoStore({ url, dbName, reducers, repair: false });
    try {
      const id = uid();
      const first = await store.append<Counter>(ev(id, 1));
      await db.collection('events').insertOne({ ...ev(id, 2, { add: 9 }), createdAt: new Date(), claims: [] });
      expect(await db.collection('users').findOne({ _id: id as never })).toMatchObject({ sequence: 1 });
      expect((await store.load<Counter>('user', id))?.sequence).toBe(1); // as stored
      expect((await store.catchUp<Counter>('user', id, first.snapshot))?.state.count).toBe(10);
      expect(await db.collection('users').findOne({ _id: id as never })).toMatchObject({
        sequence: 2,
        state: { count: 10 },
      });
    } finally {
      await store.close();
    }
  });

  it('reads with one command, appends on a base with two, and catches up only after a conflict', async () => {
    const store = await openMongo();
    const sent: string[] = [];
    const stop = store.onCommand((e) => {
      if (e.phase === 'started') sent.push(`${e.command} ${e.collection ?? ''}`.trim());
    });
    try {
      const id = uid();
      const first = await store.append<Counter>(ev(id, 1), { base: null });
      expect(sent.splice(0)).toEqual(['insert events', 'update users']);
      expect(await store.load('user', id)).toEqual(first.snapshot);
      expect(sent.splice(0)).toEqual(['find users']);
      await store.loadMany('user', [id, uid()]);
      expect(sent.splice(0)).toEqual(['find users']);
      const second = await store.append<Counter>(ev(id, 2), { base: first.snapshot });
      expect(sent.splice(0)).toEqual(['insert events', 'update users']);
      await expect(store.append(ev(id, 2), { base: first.snapshot })).rejects.toBeInstanceOf(ConcurrencyError);
      expect(sent.splice(0)).toEqual(['insert events']);
      expect(await store.catchUp('user', id, first.snapshot)).toEqual(second.snapshot);
      expect(sent.splice(0)[0]).toBe('find events');
    } finally {
      stop();
      await store.close();
    }
  });

  it('repairs a state document whose write failed after its event, without waiting for the next write', async () => {
    const store = await openMongo();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const users = db.collection('users');
    const id = uid();
    try {
      const first = await store.append<Counter>(ev(id, 1), { base: null });
      // The next state write fails once (as a network blip would), the event stands.
      const update = vi.spyOn(Object.getPrototypeOf(users), 'updateOne');
      update.mockRejectedValueOnce(new Error('blip'));
      const failedAt = Date.now();
      const second = await store.append<Counter>(ev(id, 2, { add: 4 }), { base: first.snapshot });
      update.mockRestore();
      expect(second.snapshot).toMatchObject({ sequence: 2, state: { count: 5 } });
      // Behind at first (the repair is due 500 ms after the failure; a slower read may come after it).
      const early = await users.findOne({ _id: id as never });
      if (Date.now() - failedAt < 400) expect(early).toMatchObject({ sequence: 1 });
      await vi.waitFor(async () => expect(await users.findOne({ _id: id as never })).toMatchObject({ sequence: 2, state: { count: 5 } }), {
        timeout: 30_000,
        interval: 100,
      });
    } finally {
      warn.mockRestore();
      await store.close();
    }
  });

  it('takes over a claim left by a crash after the grace period, never a confirmed or fresh one', async () => {
    const store = await openMongo(50);
    const patient = await openMongo(60_000);
    try {
      const constraints = db.collection<{ _id: string; [k: string]: unknown }>('constraints');
      const [ghost, fresh, confirmed] = [`k:${uid()}`, `k:${uid()}`, `k:${uid()}`];
      const backdated = new Date(Date.now() - 1000);
      await constraints.insertOne({
        _id: ghost,
        aggregateType: 'user',
        aggregateId: 'crashed',
        sequence: 1,
        claimedAt: backdated,
      });
      await constraints.insertOne({
        _id: fresh,
        aggregateType: 'user',
        aggregateId: 'in-flight',
        sequence: 1,
        claimedAt: new Date(),
      });

      expect(await store.lookup(ghost)).toBeNull();
      const heir = uid();
      await store.append(ev(heir, 1), { claims: [ghost] });
      expect(await store.lookup(ghost)).toEqual({ aggregateType: 'user', aggregateId: heir });

      await expect(patient.append(ev(uid(), 1), { claims: [fresh] })).rejects.toBeInstanceOf(ConstraintError);
      expect(await patient.lookup(fresh)).toEqual({ aggregateType: 'user', aggregateId: 'in-flight' });

      const owner = uid();
      await store.append(ev(owner, 1), { claims: [confirmed] });
      await constraints.updateOne({ _id: confirmed }, { $set: { claimedAt: backdated } });
      await expect(store.append(ev(uid(), 1), { claims: [confirmed] })).rejects.toBeInstanceOf(ConstraintError);
      expect(await store.lookup(confirmed)).toEqual({ aggregateType: 'user', aggregateId: owner });

      // An aggregate takes back its own unconfirmed claim at once (a crashed earlier attempt).
      const own = `k:${uid()}`;
      const self = uid();
      await constraints.insertOne({
        _id: own,
        aggregateType: 'user',
        aggregateId: self,
        sequence: 1,
        claimedAt: new Date(),
      });
      await patient.append(ev(self, 1), { claims: [own] });
      expect(await constraints.findOne({ _id: own })).toMatchObject({ aggregateId: self, sequence: 1 });
    } finally {
      await store.close();
      await patient.close();
    }
  });
});

describeWith('mongo', 'mongo event store when the server comes and goes', (url) => {
  it('answers UnavailableError while it is away and works again when it is back', async () => {
    const proxy = await faultyProxy(url);
    const dbName = `faults_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const store = await createMongoStore({ url: proxy.url, dbName, reducers, serverSelectionTimeoutMS: 300 });
    warn.mockRestore();
    const eventually = async <T>(work: () => Promise<T>) => {
      for (let tries = 0; ; tries++) {
        try {
          return await work();
        } catch (e) {
          if (!(e instanceof UnavailableError) || tries > 50) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    try {
      await expect(store.load('user', 'a')).rejects.toBeInstanceOf(UnavailableError); // down at start
      await proxy.up();
      await eventually(() => store.append(ev('a', 1)));
      await proxy.down();
      await expect(store.append(ev('a', 2))).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.load('user', 'a')).rejects.toBeInstanceOf(UnavailableError);
      await proxy.up();
      await eventually(() => store.append(ev('a', 2)));
      expect((await store.load<Counter>('user', 'a'))?.state.count).toBe(2);
    } finally {
      await store.close();
      await proxy.down();
      const admin = new MongoClient(url);
      await admin
        .db(dbName)
        .dropDatabase()
        .catch(() => {});
      await admin.close();
    }
  });
});

describe('mongo event store without a server', () => {
  it('answers UnavailableError quickly', async () => {
    const port = await freePort();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const store = await createMongoStore({
      url: `mongodb://127.0.0.1:${port}/`,
      dbName: 'nowhere',
      reducers,
      serverSelectionTimeoutMS: 300,
    }).finally(() => warn.mockRestore());
    try {
      const started = Date.now();
      await expect(store.load('user', 'a')).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.append(ev('a', 1))).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.lookup('k')).rejects.toBeInstanceOf(UnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(UnavailableError);
      expect(Date.now() - started, 'four calls bounded by the 300 ms server selection').toBeLessThan(15_000);
    } finally {
      await store.close();
    }
  });
});

// ---------------------------------------------------------------- SQLite

import { DatabaseSync } from 'node:sqlite';
import { createSqliteStore } from '../src/store/sqlite.ts';
import { eventRow } from '../src/store/sqlite-rows.ts';
import { DB_FILE, prepareWrites } from '../src/store/sqlite-schema.ts';

describe('sqlite event store', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  const openSqlite = (dataDir: string) => createSqliteStore({ dataDir, reducers, cacheEntries: 50 });

  describe('contract', () =>
    contract(async () => {
      const dir = await mkdtemp(join(tmpdir(), 'store-contract-sqlite-'));
      dirs.push(dir);
      const h: Harness = {
        store: await openSqlite(dir),
        async reopen() {
          await h.store.close();
          return openSqlite(dir);
        },
        // The event row alone, written while the store is closed (it holds the file locked).
        async writeEventOnly(event) {
          await h.store.close();
          const db = new DatabaseSync(join(dir, DB_FILE));
          prepareWrites(db).insertEvent(eventRow(event));
          db.close();
          return openSqlite(dir);
        },
      };
      return h;
    }));
});
