// tools/mongo-bulk.ts: a user written by the bulk loader is what the store's append
// writes for its user.added event. The same user is appended through the store into one
// database and bulk loaded into another; the documents, and everything the store answers
// about them, must be the same apart from the times and generated ids.
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reducers } from '../src/model/reducers.ts';
import { userEvent, userSearchFields, type User, type UserAdded } from '../src/model/users.ts';
import { bulkLoadUsers, type BulkUser } from '../tools/mongo-bulk.ts';
import { humanUserClaims } from '../src/model/users.ts';
import { createMongoStore, type MongoEventStore } from '../src/store/mongo.ts';
import { ConcurrencyError, ConstraintError } from '../src/store/port.ts';
import { describeWith } from './support/servers.ts';

const ORG = 'org-bulk';

function added(i: number, o: Partial<UserAdded> = {}): UserAdded {
  return {
    username: `Bulk.User.${i}`,
    profile: {
      firstName: 'Émile',
      lastName: `Noether${i}`,
      nickName: null,
      displayName: i % 2 ? null : 'Dr. Ｅmile',
      preferredLanguage: 'de',
      gender: 'GENDER_DIVERSE',
    },
    email: { email: `Bulk${i}@Example.ORG`, isVerified: i % 2 === 0 },
    phone: i % 3 === 0 ? { phone: '+41791234567', isVerified: false } : null,
    passwordHash: i % 2 === 0 ? '$2y$04$Cxq5Gf.Ih4FQcZ.xMxZrNOP.f01Bc4pgdp0MRnz.VBz3bEhF08eCm' : null,
    passwordChangeRequired: false,
    metadata: [{ key: 'k', value: `v${i}` }],
    idpLinks: i % 2 === 0 ? [{ idpId: 'idp-1', userId: `ext-${i}`, userName: `ext${i}` }] : [],
    u2fTokens: [],
    ...o,
  };
}

describeWith('mongo', 'MongoDB bulk loader', (url) => {
  let client: MongoClient;
  const names: string[] = [];
  const newDb = () => {
    const name = `bulk_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    names.push(name);
    return name;
  };
  const stores: MongoEventStore[] = [];
  const open = async (dbName: string, claimGraceMs?: number) => {
    const store = await createMongoStore({ url, dbName, reducers, userFields: userSearchFields, repair: false, claimGraceMs });
    stores.push(store);
    return store;
  };
  /** The documents of one user in a database, without what differs between two writes of it (times, generated ids, claim tokens). */
  const documents = async (db: Db, id: string) => {
    const constraints = await db
      .collection<{ _id: string; token?: string }>('constraints')
      .find({ aggregateId: id })
      .sort({ _id: 1 })
      .toArray();
    const events = await db.collection('events').find({ aggregateId: id }).toArray();
    const states = await db.collection<{ _id: string }>('users').find({ _id: id }).toArray();
    const without = (d: Document, dates: string[], others: string[] = []) => {
      for (const k of dates) expect(d[k], k).toBeInstanceOf(Date);
      return Object.fromEntries(Object.entries(d).filter(([k]) => !dates.includes(k) && !others.includes(k)));
    };
    for (const c of constraints) expect(c.token).toMatch(/^[0-9a-f-]{36}$/);
    for (const e of events) expect(e._id?.constructor?.name).toBe('ObjectId');
    return {
      constraints: constraints.map((c) => without(c, ['claimedAt'], ['token'])),
      events: events.map((e) => without(e, ['createdAt'], ['_id'])),
      states: states.map((s) => {
        // A time like the other dates: the event's own (the one that set the password).
        const doc = s as Document;
        const state = doc.state as Document;
        if (state.passwordChanged !== undefined)
          expect(state.passwordChanged, 'passwordChanged').toBe((doc.creationDate as Date).toISOString());
        return without({ ...s, state: { ...state, passwordChanged: undefined } }, ['creationDate', 'changeDate']);
      }),
      /** The state document's fields in their stored order. */
      stateKeys: states.map((s) => Object.keys(s)),
    };
  };

  beforeAll(async () => {
    client = await new MongoClient(url).connect();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    for (const name of names)
      await client
        .db(name)
        .dropDatabase()
        .catch(() => {});
    await client.close();
  });

  it('writes a user as append writes it: the same documents, load, events, claims and search', async () => {
    const [viaAppend, viaBulk] = [newDb(), newDb()];
    const appendStore = await open(viaAppend);
    const bulkStore = await open(viaBulk);
    for (const i of [0, 1, 3]) {
      const id = `user-${i}`;
      const user = added(i);
      await appendStore.append<User>(
        { aggregateType: 'user', aggregateId: id, sequence: 1, ...userEvent.added(user), creator: 'tester', resourceOwner: ORG },
        { claims: humanUserClaims(user), base: null },
      );
      const createdAt = new Date('2024-05-06T07:08:09.010Z');
      const { snapshots } = await bulkLoadUsers({ url, dbName: viaBulk, users: [{ id, orgId: ORG, user, creator: 'tester', createdAt }] });

      // The documents themselves, field for field.
      const [a, b] = [await documents(client.db(viaAppend), id), await documents(client.db(viaBulk), id)];
      expect(b.constraints.length).toBe(i % 2 === 0 ? 2 : 1);
      expect(b.events).toHaveLength(1);
      expect(b.states).toHaveLength(1);
      expect(b.states[0]!.search).toEqual(userSearchFields(snapshots[0]!.state));
      expect(b).toEqual(a);

      // What the store answers.
      const loadedA = (await appendStore.load<User>('user', id))!;
      const loadedB = (await bulkStore.load<User>('user', id))!;
      // The same, at the bulk load's time (the password's time too, where one was set).
      const at = (l: typeof loadedA) => ({
        ...l,
        creationDate: createdAt,
        changeDate: createdAt,
        state: { ...l.state, ...(l.state.passwordChanged && { passwordChanged: createdAt.toISOString() }) },
      });
      expect(loadedB).toEqual(at(loadedA));
      expect(snapshots[0]).toEqual(loadedB);
      const [eventsA, eventsB] = [await appendStore.events('user', id), await bulkStore.events('user', id)];
      expect(eventsB).toEqual(eventsA.map((e) => ({ ...e, createdAt })));
      for (const key of humanUserClaims(user)) expect(await bulkStore.lookup(key)).toEqual({ aggregateType: 'user', aggregateId: id });
      const found = await bulkStore.searchUsers<User>({
        filter: { orgId: ORG, username: { op: 'EXACT', value: `bulk.user.${i}` } },
        sort: 'USERNAME',
        descending: false,
        limit: 5,
      });
      expect(found).toEqual([loadedB]);
    }
    expect(await bulkStore.countUsers({ orgId: ORG })).toBe(3);
    expect(await bulkStore.countUsers({ orgId: ORG, emailVerified: true })).toBe(
      await appendStore.countUsers({ orgId: ORG, emailVerified: true }),
    );
  });

  it('its claims are confirmed: held past the grace period, refused to others, and the next append builds on the state', async () => {
    const dbName = newDb();
    const user = added(3);
    await bulkLoadUsers({ url, dbName, users: [{ id: 'u-3', orgId: ORG, user, createdAt: new Date(Date.now() - 60_000) }] });
    const store = await open(dbName, 0); // every claim is stale at once: only a confirmed one holds
    expect(await store.lookup('username:bulk.user.3')).toEqual({ aggregateType: 'user', aggregateId: 'u-3' });
    expect(await store.searchUsers({ filter: { emailVerified: true }, sort: 'USERNAME', descending: false, limit: 5 })).toEqual([]);
    const other = added(3);
    await expect(
      store.append(
        { aggregateType: 'user', aggregateId: 'u-other', sequence: 1, ...userEvent.added(other), creator: 'tester', resourceOwner: ORG },
        { claims: humanUserClaims(other), base: null },
      ),
    ).rejects.toBeInstanceOf(ConstraintError);
    const base = (await store.load<User>('user', 'u-3'))!;
    await expect(
      store.append(
        { aggregateType: 'user', aggregateId: 'u-3', sequence: 1, ...userEvent.added(user), creator: 'tester', resourceOwner: ORG },
        { claims: humanUserClaims(user), base: null },
      ),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    const { snapshot } = await store.append<User>(
      { aggregateType: 'user', aggregateId: 'u-3', sequence: 2, ...userEvent.emailVerified(), creator: 'tester', resourceOwner: ORG },
      { base },
    );
    expect(snapshot).toMatchObject({ sequence: 2, state: { email: { isVerified: true }, username: 'Bulk.User.3' } });
    expect(await store.load('user', 'u-3')).toEqual(snapshot);
    expect(
      (await store.searchUsers({ filter: { emailVerified: true }, sort: 'USERNAME', descending: false, limit: 5 })).map((s) => s.id),
    ).toEqual(['u-3']);
  });

  it('in batches, into an open database: each user once, its progress told', async () => {
    const dbName = newDb();
    const db = client.db(dbName);
    const users: BulkUser[] = Array.from({ length: 1_250 }, (_, i) => ({
      id: `id-${String(i).padStart(4, '0')}`,
      orgId: i % 5 === 0 ? 'org-b' : ORG,
      user: added(i),
    }));
    const progress: number[] = [];
    const started = performance.now();
    const { snapshots } = await bulkLoadUsers({ db, users, batch: 500, onProgress: (n) => progress.push(n) });
    console.log(`[tools.mongo-bulk] 1,250 users in ${Math.round(performance.now() - started)} ms`);
    expect(progress).toEqual([500, 1000, 1250]);
    expect(snapshots.map((s) => s.id)).toEqual(users.map((u) => u.id));
    expect(await db.collection('users').countDocuments()).toBe(1_250);
    expect(await db.collection('events').countDocuments()).toBe(1_250);
    expect(await db.collection('constraints').countDocuments()).toBe(1_250 + 625);
    const store = await open(dbName);
    expect(await store.countUsers({ orgId: 'org-b' })).toBe(250);
    const page = await store.searchUsers<User>({ filter: { orgId: 'org-b' }, sort: 'USERNAME', descending: true, limit: 3 });
    const want = snapshots
      .filter((s) => s.resourceOwner === 'org-b')
      .sort((a, b) => (a.state.username.toLowerCase() < b.state.username.toLowerCase() ? 1 : -1));
    expect(page).toEqual(want.slice(0, 3));
  });

  it('refuses a batch with a claim held elsewhere or a user that exists, as append would, and leaves none of it behind', async () => {
    const dbName = newDb();
    const db = client.db(dbName);
    const store = await open(dbName);
    const taken = added(7, { username: 'Taken' });
    await store.append(
      { aggregateType: 'user', aggregateId: 'holder', sequence: 1, ...userEvent.added(taken), creator: 'tester', resourceOwner: ORG },
      { claims: humanUserClaims(taken), base: null },
    );
    const first: BulkUser[] = [1, 3, 5].map((i) => ({ id: `ok-${i}`, orgId: ORG, user: added(i) }));
    const clash = [
      { id: 'new-1', orgId: ORG, user: added(11) },
      { id: 'new-2', orgId: ORG, user: added(13, { username: 'TAKEN' }) },
      { id: 'new-3', orgId: ORG, user: added(15) },
    ];
    const error = await bulkLoadUsers({ db, users: [...first, ...clash], batch: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConstraintError);
    expect((error as ConstraintError).key).toBe('username:taken');
    // The first batch stays; nothing of the second one.
    expect((await db.collection('users').find().sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['holder', 'ok-1', 'ok-3', 'ok-5']);
    expect(await db.collection('events').countDocuments({ aggregateId: /^new-/ })).toBe(0);
    expect(await db.collection('constraints').countDocuments({ aggregateId: /^new-/ })).toBe(0);
    expect(await store.lookup('username:taken')).toEqual({ aggregateType: 'user', aggregateId: 'holder' });

    const again = await bulkLoadUsers({
      db,
      users: [
        { id: 'new-4', orgId: ORG, user: added(17) },
        { id: 'ok-1', orgId: ORG, user: added(19) },
      ],
    }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ConcurrencyError);
    expect(again).toMatchObject({ aggregateType: 'user', aggregateId: 'ok-1', sequence: 1 });
    expect(
      await db
        .collection<{ _id: string }>('constraints')
        .countDocuments({ _id: { $in: ['username:bulk.user.17', 'username:bulk.user.19'] } }),
    ).toBe(0);
    expect(await db.collection('events').countDocuments({ aggregateId: { $in: ['new-4', 'ok-1'] } })).toBe(1);
    expect((await store.load<User>('user', 'ok-1'))!.state.username).toBe('Bulk.User.1');
    expect(await store.load('user', 'new-4')).toBeNull();
  });
});
