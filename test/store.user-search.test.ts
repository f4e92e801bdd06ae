// User search (src/store/read-models.ts) on the MongoDB store (the SQLite store runs the shared
// contract in test/store.sqlite.test.ts): the contract, then what only MongoDB has: its indexes
// and query plans, the `search` sub-document kept by catch-up and the backfill, and no extra
// command on a write.
import { MongoClient, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reducers } from '../src/model/reducers.ts';
import { userEvents, userSearchFields, type User } from '../src/model/users.ts';
import { userSearchIndexes } from '../src/store/mongo-user-search.ts';
import { createMongoStore, type MongoCommandEvent, type MongoEventStore } from '../src/store/mongo.ts';
import type { UserSearch } from '../src/store/read-models.ts';
import { facts } from './support/given.ts';
import { describeWith } from './support/servers.ts';
import { userSearchContract } from './support/user-search-contract.ts';

let dbs = 0;
const dbName = () => `user_search_${process.pid}_${Date.now()}_${dbs++}`;
const openMongo = (url: string, name = dbName()) =>
  createMongoStore({ url, dbName: name, reducers, userFields: userSearchFields, repair: false });

describeWith('mongo', 'MongoDB store', (url) => {
  describe('contract', () => userSearchContract(() => openMongo(url)));

  describe('on the server', () => {
    let client: MongoClient;
    let db: Db;
    let store: MongoEventStore;
    let name: string;
    let ferret: boolean;

    const addUser = (id: string, org: string, username: string) => {
      const fact = facts.human(id, org, { username });
      return store.append<User>(
        {
          aggregateType: 'user',
          aggregateId: id,
          sequence: 1,
          type: fact.type,
          payload: fact.payload,
          creator: 'seed',
          resourceOwner: org,
        },
        { claims: fact.claims, base: null },
      );
    };

    beforeAll(async () => {
      name = dbName();
      store = await openMongo(url, name);
      client = await new MongoClient(url).connect();
      db = client.db(name);
      ferret = typeof (await db.command({ buildInfo: 1 })).ferretdbVersion === 'string';
      for (let i = 0; i < 60; i++) await addUser(`u${String(i).padStart(2, '0')}`, i % 2 ? 'org-a' : 'org-b', `name${(i * 7) % 60}`);
    });
    afterAll(async () => {
      await store?.close();
      await client?.close();
    });

    it('creates one index per order, organization first, and the instance-wide ones', async () => {
      await store.searchUsers({ filter: {}, sort: 'USERNAME', descending: false, limit: 1 }); // waits for them
      const indexes = await db.collection('users').listIndexes().toArray();
      const keys = (n: string) => indexes.find((i) => i.name === n)?.key;
      expect(keys('search_org_username')).toEqual({ resourceOwner: 1, 'search.username': 1, _id: 1 });
      expect(keys('search_org_created')).toEqual({ resourceOwner: 1, creationDate: 1, _id: 1 });
      expect(keys('search_org_changed')).toEqual({ resourceOwner: 1, changeDate: 1, _id: 1 });
      expect(keys('search_org_email')).toEqual({ resourceOwner: 1, 'search.email': 1, _id: 1 });
      expect(keys('search_username')).toEqual({ 'search.username': 1, _id: 1 });
      expect(keys('search_created')).toEqual({ creationDate: 1, _id: 1 });
      expect(keys('search_changed')).toEqual({ changeDate: 1, _id: 1 });
      expect(userSearchIndexes).toHaveLength(7);
    });

    // The queries searchUsers sends, and the index each must be served from (key patterns as above).
    const INDEX_KEYS: Record<string, string[]> = {
      search_org_username: ['resourceOwner', 'search.username', '_id'],
      search_org_created: ['resourceOwner', 'creationDate', '_id'],
      search_changed: ['changeDate', '_id'],
      search_username: ['search.username', '_id'],
    };
    const cases: [string, UserSearch, string][] = [
      [
        'organization, username, after a key',
        { filter: { orgId: 'org-a' }, sort: 'USERNAME', descending: false, after: { value: 'name2', id: 'u02' }, limit: 5 },
        'search_org_username',
      ],
      [
        'organization, username prefix',
        { filter: { orgId: 'org-a', username: { op: 'PREFIX', value: 'name1' } }, sort: 'USERNAME', descending: false, limit: 5 },
        'search_org_username',
      ],
      [
        'organization, creation date DESC, after a key',
        { filter: { orgId: 'org-b' }, sort: 'CREATION_DATE', descending: true, after: { value: Date.now(), id: 'zz' }, limit: 5 },
        'search_org_created',
      ],
      [
        'every organization, change date',
        { filter: {}, sort: 'CHANGE_DATE', descending: false, after: { value: 0, id: '' }, limit: 5 },
        'search_changed',
      ],
      ['every organization, username DESC', { filter: {}, sort: 'USERNAME', descending: true, limit: 5 }, 'search_username'],
    ];

    for (const [label, search, index] of cases) {
      it(`the query sent is one an index serves: ${label}`, async () => {
        const sent: Document[] = [];
        const stop = store.inspectCommands(
          (c) => void (!c.background && c.command === 'find' && c.collection === 'users' && sent.push(c.body)),
        );
        await store.searchUsers(search);
        stop();
        expect(sent).toHaveLength(1);
        const { filter, sort, limit } = sent[0]!;
        const order: [string, unknown][] = sort instanceof Map ? [...sort] : Object.entries(sort); // the driver sends a Map
        // Without a planner to ask (FerretDB), the rule MongoDB's planner follows: equalities on
        // a prefix of the index keys, the sort on the rest of them in order, one direction, and
        // no field the index does not hold.
        const keys = INDEX_KEYS[index]!;
        const equal = equalityFields(filter);
        expect(keys.slice(0, equal.length)).toEqual(equal);
        expect(order.map(([k]) => k)).toEqual(keys.slice(equal.length));
        expect(new Set(order.map(([, direction]) => direction)).size).toBe(1);
        expect(fieldsOf(filter).filter((f) => !keys.includes(f))).toEqual([]);
        expect(limit).toBe(search.limit);
        if (ferret) return; // FerretDB v1 serves no find from an index (its issues #4646, #4209): no plan to check.
        // MongoDB: one index range in the order asked for, no in-memory sort, and no more
        // rows read than the page (plus the keys at the edges of the range).
        const plan: Document = await db.collection('users').find(filter).sort(sort).limit(limit).explain('executionStats');
        const stages = stagesOf(plan.queryPlanner.winningPlan);
        expect(stages.map((s) => s.stage)).not.toContain('COLLSCAN');
        expect(stages.map((s) => s.stage)).not.toContain('SORT');
        expect(stages.filter((s) => s.stage === 'IXSCAN').map((s) => s.indexName)).toContain(index);
        expect(plan.executionStats.totalDocsExamined).toBeLessThanOrEqual(search.limit);
        expect(plan.executionStats.totalKeysExamined).toBeLessThanOrEqual(search.limit + 3);
      });
    }

    it('an id list (ListUsers in_user_ids_query) is one find on the _id index, whatever the order and organization', async () => {
      const ids = ['u03', 'u10', 'u11', 'u42', 'no-such-id'];
      for (const search of [
        { filter: { orgId: 'org-a', ids }, sort: 'USERNAME', descending: false, limit: 101 },
        {
          filter: { ids, username: { op: 'PREFIX', value: 'name' } },
          sort: 'CREATION_DATE',
          descending: true,
          after: { value: Date.now(), id: 'zz' },
          limit: 101,
        },
      ] satisfies UserSearch[]) {
        const sent: Document[] = [];
        const stop = store.inspectCommands((c) => void (!c.background && c.collection === 'users' && sent.push(c.body)));
        const found = await store.searchUsers(search);
        stop();
        expect(sent).toHaveLength(1);
        const clauses: Document[] = Array.isArray(sent[0]!.filter.$and) ? sent[0]!.filter.$and : [sent[0]!.filter];
        expect(clauses).toContainEqual({ _id: { $in: ids } });
        expect(sent[0]!.hint).toEqual({ _id: 1 });
        const want = ids.filter((id) => id !== 'no-such-id' && (search.filter.orgId === undefined || Number(id.slice(1)) % 2 === 1));
        expect(found.map((u) => u.id).sort()).toEqual(want.sort());
        if (ferret) continue; // no planner to ask (see above)
        const plan: Document = await db
          .collection('users')
          .find(sent[0]!.filter)
          .sort(sent[0]!.sort)
          .hint(sent[0]!.hint)
          .limit(search.limit)
          .explain('executionStats');
        const stages = stagesOf(plan.queryPlanner.winningPlan);
        expect(stages.map((s) => s.stage)).not.toContain('COLLSCAN');
        expect(stages.filter((s) => s.stage === 'IXSCAN').map((s) => s.indexName)).toContain('_id_');
        expect(plan.executionStats.totalDocsExamined).toBeLessThanOrEqual(ids.length);
      }
    });

    it('an append of a user sends no command more than before: the search fields ride in the state update', async () => {
      const seen: MongoCommandEvent[] = [];
      const stop = store.onCommand((e) => void (e.phase === 'started' && seen.push(e)));
      const { snapshot } = await addUser('extra-1', 'org-a', 'Extra.One');
      stop();
      expect(seen.map((e) => `${e.command} ${e.collection}`).sort()).toEqual(['insert constraints', 'insert events', 'update users']);
      const doc = await db.collection('users').findOne({ _id: snapshot.id as never });
      expect(doc?.search).toEqual(userSearchFields(snapshot.state));
    });

    it('a state document caught up from its events (after a crash between the two writes) gets its search fields', async () => {
      const { snapshot } = await addUser('crash-1', 'org-a', 'before.crash');
      const profile = { ...snapshot.state.profile, firstName: 'Phoenix' };
      await db.collection('events').insertOne({
        aggregateType: 'user',
        aggregateId: 'crash-1',
        sequence: 2,
        type: userEvents.profileChanged,
        payload: { profile },
        creator: 'seed',
        resourceOwner: 'org-a',
        createdAt: new Date(),
        claims: [],
      });
      const find = () => store.searchUsers({ filter: { firstNamePrefix: 'phoenix' }, sort: 'USERNAME', descending: false, limit: 5 });
      expect(await find()).toEqual([]);
      await store.catchUp('user', 'crash-1', snapshot);
      expect((await find()).map((s) => s.id)).toEqual(['crash-1']);
    });

    it('documents written before search existed get it from the backfill, before the first search answers', async () => {
      await db.collection('users').updateMany({ resourceOwner: 'org-b' }, { $unset: { search: '' } });
      const reopened = await openMongo(url, name);
      try {
        const count = await reopened.countUsers({ orgId: 'org-b' });
        expect(count).toBe(await db.collection('users').countDocuments({ resourceOwner: 'org-b' }));
        expect(await db.collection('users').countDocuments({ search: { $exists: false } })).toBe(0);
      } finally {
        await reopened.close();
      }
    });
  });
});

/** Every stage of a plan, however nested (classic inputStage(s), SBE queryPlan). */
function stagesOf(plan: Document): { stage: string; indexName?: string }[] {
  if (!plan || typeof plan !== 'object') return [];
  const own = typeof plan.stage === 'string' ? [{ stage: plan.stage as string, indexName: plan.indexName as string | undefined }] : [];
  return [
    ...own,
    ...Object.values(plan).flatMap((v) => (Array.isArray(v) ? v.flatMap(stagesOf) : typeof v === 'object' ? stagesOf(v) : [])),
  ];
}

/** The fields a filter holds to one value, in order: `{ f: v }` at the top or in its top-level `$and`. */
function equalityFields(filter: Document): string[] {
  const clauses: Document[] = Array.isArray(filter.$and) ? filter.$and : [filter];
  return clauses.flatMap((c) =>
    Object.entries(c)
      .filter(([k, v]) => !k.startsWith('$') && (typeof v !== 'object' || v === null || v instanceof Date))
      .map(([k]) => k),
  );
}

/** Every field a filter names, however nested in $and/$or and operators. */
function fieldsOf(filter: unknown): string[] {
  if (Array.isArray(filter)) return filter.flatMap(fieldsOf);
  if (!filter || typeof filter !== 'object' || filter instanceof Date) return [];
  return Object.entries(filter).flatMap(([k, v]) => (k.startsWith('$') ? fieldsOf(v) : [k]));
}
