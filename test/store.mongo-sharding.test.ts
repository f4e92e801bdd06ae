// The MongoDB sharding plan (issue 14; docs/sharding.md, src/store/mongo-shard-keys.ts),
// checked on FerretDB, which has no sharding: what can be checked without a mongos is
// what the store sends. Through the driver's command monitoring (the store's inspect
// option and inspectCommands), for the store's calls and for GraphQL operations through
// the real gateway:
//   - every find, update, delete, aggregate and insert of the hot path names its
//     collection's whole shard key (a value, or an $in of values: loadMany), so a mongos
//     sends it to one shard (or to the shards of the listed ids);
//   - the only commands that name none are the documented scatter queries: user search
//     and count (admin), the repair sweep and the search backfill (background);
//   - every write carries majority write concern, journaled, and every read read concern
//     "local", though the URL the store is given asks for w=1 and majority reads;
//   - the plan's indexes exist once the store has built them (the hashed shard key ones
//     everywhere but on FerretDB, which has no hashed indexes), and every unique index
//     has its collection's shard key as its prefix;
//   - docs/sharding.md shows the same shard keys, indexes and scatter list as the code.
// Not checkable here: how a real mongos routes (explain on a sharded cluster), chunk
// distribution, and the shardCollection commands themselves.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MongoClient, ObjectId, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStore, type InspectedCommand, type MongoEventStore, type MongoStoreOptions } from '../src/store/mongo.ts';
import { mongoConcerns, scatterQueries, shardPlan, type ScatterQuery, type ShardKey } from '../src/store/mongo-shard-keys.ts';
import { ConcurrencyError, ConstraintError, type AggregateType, type NewEvent, type Reducer, type Reducers } from '../src/store/port.ts';
import type { UserSearchFields } from '../src/store/read-models.ts';
import {
  AddHumanUserDocument,
  AddOIDCIdentityProviderDocument,
  AddOrganizationDocument,
  AddOrgMemberDocument,
  AddProjectDocument,
  AddSAMLAppDocument,
  IdentityProviderDocument,
  MeDocument,
  ProjectDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanPhoneDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UpdateOIDCIdentityProviderDocument,
  UserDocument,
  UsersDocument,
  VerifyEmailDocument,
} from './generated/graphql.ts';
import { startGateway, type Response, type TestGateway } from './support/gateway.ts';
import { samlMetadata } from './support/given.ts';
import { describeWith } from './support/servers.ts';

// ---------------------------------------------------------------------------
// Which shards a command goes to, from its filter (or inserted document) and the key.

type Targeting = 'one' | 'some' | 'all';

const isValue = (v: unknown) =>
  v === null ||
  typeof v !== 'object' ||
  v instanceof Date ||
  v instanceof ObjectId ||
  Array.isArray(v) ||
  !Object.keys(v).some((k) => k.startsWith('$'));

/** How a filter pins one field: to a value, to the values of an $in, or not at all (a range, a regex, absent). */
function pin(filter: Document, field: string): 'one' | 'some' | undefined {
  const v: unknown = filter[field];
  if (v !== undefined) {
    if (isValue(v)) return 'one';
    const ops = v as Document;
    if ('$eq' in ops && isValue(ops.$eq)) return 'one';
    if (Array.isArray(ops.$in) && ops.$in.every(isValue)) return 'some';
  }
  for (const part of Array.isArray(filter.$and) ? (filter.$and as Document[]) : []) {
    const found = pin(part, field);
    if (found) return found;
  }
  return undefined;
}

/** One shard (every field of the key pinned to a value), some (an $in among them), or all (a field left open). */
export function targeting(filter: Document, key: ShardKey): Targeting {
  const pins = Object.keys(key).map((f) => pin(filter, f));
  if (pins.includes(undefined)) return 'all';
  return pins.every((p) => p === 'one') ? 'one' : 'some';
}

interface Routed {
  command: string;
  collection: string;
  targeting: Targeting;
  background: boolean;
  /** The filter or document, for failure messages. */
  what: string;
}

/** The filters (or documents) of a command on a collection of the plan, each with where a mongos would send it. */
function routes(c: InspectedCommand): Routed[] {
  const plan = c.collection === undefined ? undefined : shardPlan[c.collection];
  if (!plan) return [];
  const b = c.body as Document;
  const of = (filters: Document[]): Routed[] =>
    filters.map((f) => ({
      command: c.command,
      collection: c.collection!,
      targeting: targeting(f ?? {}, plan.shardKey),
      background: c.background,
      what: JSON.stringify(f),
    }));
  switch (c.command) {
    case 'find':
      return of([b.filter ?? {}]);
    case 'count':
    case 'distinct':
    case 'findAndModify':
      return of([b.query ?? {}]);
    case 'update':
      return of((b.updates as Document[]).map((u) => u.q as Document));
    case 'delete':
      return of((b.deletes as Document[]).map((d) => d.q as Document));
    case 'aggregate':
      return of([((b.pipeline as Document[])[0]?.$match as Document | undefined) ?? {}]);
    case 'insert':
      return of(b.documents as Document[]);
    default:
      return []; // getMore (its cursor's shards), createIndexes, listIndexes, …
  }
}

const label = (r: Routed) => `${r.command} ${r.collection}`;

/** The documented scatter query a scattering command is, if any (same collection, command and path). */
const documented = (r: Routed, sources: readonly ScatterQuery['source'][]) =>
  scatterQueries.find(
    (q) =>
      q.collection === r.collection &&
      q.command === r.command &&
      q.path === (r.background ? 'background' : 'admin') &&
      sources.includes(q.source),
  );

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'createIndexes']);
const READS = new Set(['find', 'aggregate', 'count', 'distinct']);

/** Writes without majority write concern (journaled), reads without read concern "local". */
function concernProblems(commands: readonly InspectedCommand[]): string[] {
  const problems: string[] = [];
  for (const c of commands) {
    const b = c.body as Document;
    if (WRITES.has(c.command) && JSON.stringify(b.writeConcern) !== JSON.stringify({ w: 'majority', j: true }))
      problems.push(`${c.command} ${c.collection}: writeConcern ${JSON.stringify(b.writeConcern)}`);
    if (READS.has(c.command) && JSON.stringify(b.readConcern) !== JSON.stringify({ level: 'local' }))
      problems.push(`${c.command} ${c.collection}: readConcern ${JSON.stringify(b.readConcern)}`);
  }
  return problems;
}

it('tells one shard, some shards and all shards apart', () => {
  const events: ShardKey = { aggregateType: 1, aggregateId: 'hashed' };
  const byId: ShardKey = { _id: 'hashed' };
  expect(targeting({ aggregateType: 'user', aggregateId: 'a', sequence: { $gt: 3 } }, events)).toBe('one');
  expect(targeting({ aggregateType: { $eq: 'user' }, aggregateId: 'a' }, events)).toBe('one');
  expect(targeting({ aggregateType: 'user', aggregateId: { $in: ['a', 'b'] } }, events)).toBe('some');
  expect(targeting({ aggregateId: 'a' }, events)).toBe('all');
  expect(targeting({ aggregateType: 'user', aggregateId: { $gt: 'a' } }, events)).toBe('all');
  expect(targeting({ createdAt: { $gte: new Date() } }, events)).toBe('all');
  expect(targeting({ $and: [{ _id: 'k' }, { token: 't' }] }, byId)).toBe('one');
  expect(targeting({ _id: { $in: ['a'] } }, byId)).toBe('some');
  expect(targeting({ _id: { $gt: 'a' }, search: { $exists: false } }, byId)).toBe('all');
  expect(targeting({ resourceOwner: 'o' }, byId)).toBe('all');
});

it("gives every unique index its collection's shard key as prefix (else a sharded cluster cannot enforce it)", () => {
  for (const [name, plan] of Object.entries(shardPlan)) {
    for (const index of plan.indexes.filter((i) => i.unique)) {
      const fields = Object.keys(index.key as Document);
      expect(fields.slice(0, Object.keys(plan.shardKey).length), `${name}.${index.name}`).toEqual(Object.keys(plan.shardKey));
    }
  }
});

// ---------------------------------------------------------------------------
// docs/sharding.md against the plan.

const formatKey = (key: Readonly<Document>) =>
  `{ ${Object.entries(key)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? `"${v}"` : String(v)}`)
    .join(', ')} }`;

/** The table rows (cells, backticks kept) of the doc's section under `heading` (up to the next heading). */
function tableOf(doc: string, heading: string): string[][] {
  const start = new RegExp(`^#{2,4} ${heading}$`, 'm').exec(doc);
  expect(start, `docs/sharding.md has a section "${heading}"`).not.toBeNull();
  const from = start!.index + start![0].length;
  const end = doc.indexOf('\n#', from);
  const section = doc.slice(from, end === -1 ? undefined : end);
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) =>
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
}
const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

describe('docs/sharding.md', () => {
  const doc = readFileSync(new URL('../docs/sharding.md', import.meta.url), 'utf8');

  it('shows the shard key, whether to shard, and the indexes of every collection, as the code has them', () => {
    const rows = tableOf(doc, 'Shard keys');
    const shown = rows.map(([collection, key, shard, indexes]) => ({
      collection: unquote(collection!),
      key: unquote(key!),
      shard: shard === 'yes',
      indexes: [...indexes!.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort(),
    }));
    const planned = Object.entries(shardPlan).map(([collection, plan]) => ({
      collection,
      key: formatKey(plan.shardKey),
      shard: plan.shard,
      indexes: plan.indexes.map((i) => i.name!).sort(),
    }));
    expect(shown).toEqual(planned);
  });

  it('gives the sh.shardCollection command of every collection to shard, and none for the others', () => {
    for (const [name, plan] of Object.entries(shardPlan)) {
      const command = `sh.shardCollection("identity.${name}", ${formatKey(plan.shardKey)})`;
      expect(doc.includes(command), command).toBe(plan.shard);
    }
  });

  it('lists the queries that scatter as the code does', () => {
    const rows = tableOf(doc, 'Queries that scatter').map(([collection, command, source, path]) => [
      unquote(collection!),
      unquote(command!),
      unquote(source!),
      path,
    ]);
    expect(rows).toEqual(scatterQueries.map((q) => [q.collection, q.command, q.source, q.path]));
  });

  it('names the write concern, read preference and read concern the code sets', () => {
    expect(doc).toContain(`w: "${mongoConcerns.writeConcern.w}", journal: ${mongoConcerns.writeConcern.journal}`);
    expect(doc).toContain(`readPreference: "${mongoConcerns.readPreference}"`);
    expect(doc).toContain(`readConcern: { level: "${mongoConcerns.readConcern.level}" }`);
  });
});

// ---------------------------------------------------------------------------
// What the store sends.

interface Counter {
  count: number;
}
const counter: Reducer<Counter> = (state) => ({ count: (state?.count ?? 0) + 1 });
const reducers: Reducers = { instance: counter, org: counter, user: counter, idp: counter, project: counter };
const userFields = (state: Counter): UserSearchFields => ({
  username: `user${state.count}`,
  email: '',
  displayName: '',
  firstName: '',
  lastName: '',
  state: 'ACTIVE',
  emailVerified: false,
});

const uid = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ev = (aggregateType: AggregateType, aggregateId: string, sequence: number): NewEvent => ({
  aggregateType,
  aggregateId,
  sequence,
  type: `${aggregateType}.counted`,
  payload: {},
  creator: 'tester',
  resourceOwner: 'org-1',
});

/** The URL with query parameters added (a database path or parameters it may have kept). */
function withParams(url: string, params: string): string {
  if (url.includes('?')) return `${url}&${params}`;
  return /^mongodb(\+srv)?:\/\/[^/]+\/.*/.test(url) ? `${url}?${params}` : `${url}/?${params}`;
}

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(25);
  }
}

describeWith('mongo', 'MongoDB sharding plan: what the store sends', (url) => {
  const dbName = `sharding_${Date.now()}`;
  // The store's concerns win over the URL's (mongo-shard-keys.ts).
  const weakUrl = withParams(url, 'w=1&journal=false&readConcernLevel=majority&readPreference=secondaryPreferred');
  let client: MongoClient;
  let db: Db;
  const stores: MongoEventStore[] = [];
  /** Every command of every store of this suite, for the concern checks. */
  const all: InspectedCommand[] = [];

  async function open(extra: Partial<MongoStoreOptions> = {}, into: InspectedCommand[] = []) {
    const store = await createMongoStore({
      url: weakUrl,
      dbName,
      reducers,
      repair: false,
      userFields,
      inspect: (c) => void (all.push(c), into.push(c)),
      ...extra,
    });
    stores.push(store);
    return store;
  }

  beforeAll(async () => {
    client = await new MongoClient(url).connect();
    db = client.db(dbName);
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await db?.dropDatabase().catch(() => {});
    await client?.close();
  });

  /** The commands the store's calls (not its background work) send while `work` runs. */
  async function during(store: MongoEventStore, work: () => Promise<unknown>): Promise<Routed[]> {
    const sent: InspectedCommand[] = [];
    const stop = store.inspectCommands((c) => void (c.background || sent.push(c)));
    try {
      await work();
    } finally {
      stop();
    }
    return sent.flatMap(routes);
  }

  it("builds the plan's indexes: the hashed shard key ones everywhere but where the server has none (FerretDB)", async () => {
    const store = await open();
    const report = await store.indexes();
    const ferret = typeof (await db.command({ buildInfo: 1 })).ferretdbVersion === 'string';
    const entries = (key: unknown) => Object.entries(key as Document);
    for (const [name, plan] of Object.entries(shardPlan)) {
      const existing = await db
        .collection(name)
        .listIndexes()
        .toArray()
        .catch((e: unknown) => {
          if ((e as { code?: unknown }).code === 26) return []; // no such collection (FerretDB: nothing built in it)
          throw e;
        });
      for (const index of plan.indexes) {
        const found = existing.find((i) => i.name === index.name);
        if (ferret && Object.values(index.key as Document).includes('hashed')) {
          expect(report.unsupported).toContain(`${name}.${index.name}`);
          expect(found).toBeUndefined();
          continue;
        }
        expect(found, `${name}.${index.name}`).toBeDefined();
        expect(entries(found!.key), `${name}.${index.name}`).toEqual(entries(index.key));
        expect(Boolean(found!.unique), `${name}.${index.name} unique`).toBe(Boolean(index.unique));
      }
    }
    const hashed = Object.values(shardPlan).filter((p) => p.indexes.some((i) => Object.values(i.key as Document).includes('hashed')));
    expect(report.unsupported).toHaveLength(ferret ? hashed.length : 0);
  });

  it('names the whole shard key in every command of the hot path, conflicts and takeovers included', async () => {
    const store = await open();
    await store.indexes(); // the background work of connect, out of the way
    const [a, b] = [uid('user'), uid('user')];
    const routed = await during(store, async () => {
      const first = await store.append(ev('user', a, 1), { base: null, claims: [`username:${a}`] });
      await store.load('user', a);
      await store.loadMany('user', [a]);
      await store.loadMany('user', [a, b]);
      await store.append(ev('user', a, 2), { base: first.snapshot });
      // A stale base: the event is a duplicate, the claim it took is released.
      await expect(store.append(ev('user', a, 2), { base: first.snapshot, claims: [`email:${a}`] })).rejects.toBeInstanceOf(
        ConcurrencyError,
      );
      await store.catchUp('user', a, first.snapshot);
      // A key held (confirmed) by another aggregate.
      await expect(store.append(ev('user', b, 1), { base: null, claims: [`username:${a}`] })).rejects.toBeInstanceOf(ConstraintError);
      // A claim left unconfirmed long ago by another aggregate (a crashed append): not held, taken over.
      await db.collection<Document>('constraints').insertOne({
        _id: `username:${b}` as never,
        aggregateType: 'user',
        aggregateId: 'crashed',
        sequence: 1,
        claimedAt: new Date(0),
        token: 'old',
      });
      expect(await store.lookup(`username:${b}`)).toBeNull();
      await store.append(ev('user', b, 1), { base: null, claims: [`username:${b}`] });
      // No base: the store reads the aggregate caught up itself.
      await store.append(ev('user', b, 2));
      expect(await store.lookup(`username:${a}`)).toEqual({ aggregateType: 'user', aggregateId: a });
      expect(await store.events('user', a)).toHaveLength(2);
      expect(await store.eventRange('user', a, 1, 2)).toHaveLength(2);
      for (const type of ['instance', 'org', 'idp', 'project'] as const) {
        const id = uid(type);
        const added = await store.append(ev(type, id, 1), { base: null });
        await store.load(type, id);
        await store.append(ev(type, id, 2), { base: added.snapshot });
      }
    });
    const labels = new Set(routed.map(label));
    for (const expected of [
      'insert events',
      'find events',
      'insert constraints',
      'find constraints',
      'update constraints',
      'delete constraints',
      'find users',
      'update users',
    ])
      expect(labels, expected).toContain(expected);
    for (const type of ['instances', 'orgs', 'idps', 'projects']) {
      expect(labels).toContain(`find ${type}`);
      expect(labels).toContain(`update ${type}`);
    }
    const scattered = routed.filter((r) => r.targeting === 'all');
    expect(scattered.map((r) => `${label(r)} ${r.what}`)).toEqual([]);
    // Some shards, never all: only loadMany's $in of ids.
    expect(new Set(routed.filter((r) => r.targeting === 'some').map(label))).toEqual(new Set(['find users']));
  });

  it('scatters, on the request path, only in the documented admin queries: user search and count', async () => {
    const store = await open();
    await store.indexes();
    const routed = [
      ...(await during(store, () => store.searchUsers({ filter: { orgId: 'org-1' }, sort: 'USERNAME', descending: false, limit: 10 }))),
      ...(await during(store, () => store.searchUsers({ filter: {}, sort: 'CREATION_DATE', descending: true, limit: 10 }))),
      ...(await during(store, () => store.countUsers({ orgId: 'org-1' }))),
    ];
    expect(routed.map((r) => [label(r), r.targeting])).toEqual([
      ['find users', 'all'],
      ['find users', 'all'],
      ['aggregate users', 'all'],
    ]);
    for (const r of routed) expect(documented(r, ['searchUsers', 'countUsers']), label(r)).toBeDefined();
  });

  it('scatters, in the background, only in the documented repair sweep and search backfill', async () => {
    // A user state document written before search fields existed, and an event whose state write never came.
    const [old, crashed] = [uid('old'), uid('crashed')];
    const now = new Date();
    await db
      .collection<Document>('users')
      .insertOne({ _id: old as never, state: { count: 1 }, sequence: 1, resourceOwner: 'org-1', creationDate: now, changeDate: now });
    const store0 = await open();
    await store0.append(ev('user', crashed, 1), { base: null });
    await db.collection('events').insertOne({ ...ev('user', crashed, 2), createdAt: new Date(), claims: [] });

    const sent: InspectedCommand[] = [];
    const store = await open({ repair: { intervalMs: 20, graceMs: 0 } }, sent);
    await until(
      async () => store.repairStats.repaired >= 1 && (await db.collection('users').findOne({ _id: old as never }))?.search !== undefined,
    );
    await store.indexes();
    const routed = sent.filter((c) => c.background).flatMap(routes);
    const scattered = routed.filter((r) => r.targeting === 'all');
    for (const r of scattered) expect(documented(r, ['repair sweep', 'search backfill']), `${label(r)} ${r.what}`).toBeDefined();
    expect(new Set(scattered.map((r) => documented(r, ['repair sweep', 'search backfill'])!.source))).toEqual(
      new Set(['repair sweep', 'search backfill']),
    );
    // The rest of the repair (state documents by $in, the catch-up, the write-back) and of the backfill (its writes): targeted.
    const labels = new Set(routed.filter((r) => r.targeting !== 'all').map(label));
    for (const expected of ['find users', 'find events', 'update users']) expect(labels, expected).toContain(expected);
  });

  it('writes with majority write concern, journaled, and reads at read concern "local", though the URL asks otherwise', async () => {
    expect(weakUrl).toContain('w=1');
    const store = await open();
    const id = uid('user');
    await store.append(ev('user', id, 1), { base: null, claims: [`username:${id}`] });
    await store.load('user', id);
    await store.searchUsers({ filter: {}, sort: 'USERNAME', descending: false, limit: 1 });
    await store.indexes();
    const commands = new Set(all.map((c) => c.command));
    for (const name of ['insert', 'update', 'delete', 'find', 'aggregate', 'createIndexes']) expect(commands, name).toContain(name);
    expect(concernProblems(all)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// The same through the gateway: GraphQL operations end to end.

const USER_HISTORY = `query UserHistory($id: ID!) { user(id: $id) { id history { totalCount edges { node { type sequence } } } } }`;

describeWith('mongo', 'MongoDB sharding plan: GraphQL operations through the gateway', (url) => {
  let gw: TestGateway;
  const sent: { operation: string; command: InspectedCommand }[] = [];
  let operation = '';
  let seq = 0;
  const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

  beforeAll(async () => {
    gw = await startGateway({
      env: { MONGODB_URL: withParams(url, 'w=1&readConcernLevel=majority'), MONGODB_DB: `sharding_gw_${Date.now()}`, RUN_WORKER: 'false' },
    });
    (gw.gateway.stores.store as MongoEventStore).inspectCommands((command) => void sent.push({ operation, command }));
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function as<T>(name: string, send: () => Promise<Response<T>>, expectError = false): Promise<T> {
    operation = name;
    try {
      const res = await send();
      if (expectError) expect(res.errors, name).toBeDefined();
      else expect(res.errors, `${name}: ${res.text}`).toBeUndefined();
      return res.data as T;
    } finally {
      operation = '';
    }
  }

  it('names the whole shard key in every command of every operation but the user search, which scatters as documented', async () => {
    const username = unique('shard');
    const added = await as('addHumanUser', () =>
      gw.send(AddHumanUserDocument, {
        input: {
          username,
          profile: { firstName: 'Ada', lastName: 'Shard' },
          email: { email: `${username}@example.com`, returnCode: true },
        },
      }),
    );
    const userId = added.addHumanUser.userId;
    await as(
      'addHumanUser (username taken)',
      () =>
        gw.send(AddHumanUserDocument, {
          input: { username, profile: { firstName: 'Bob', lastName: 'Shard' }, email: { email: `${username}-2@example.com` } },
        }),
      true,
    );
    await as('me', () => gw.send(MeDocument, {}));
    await as('user', () => gw.send(UserDocument, { id: userId }));
    await as('updateMyProfile', () =>
      gw.send(UpdateMyProfileDocument, { input: { firstName: 'Ada', lastName: 'Admin', displayName: 'A' } }),
    );
    await as('updateHumanProfile', () => gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'Ada', lastName: 'King' } }));
    await as('verifyEmail', () => gw.send(VerifyEmailDocument, { input: { userId, verificationCode: added.addHumanUser.emailCode! } }));
    await as('setEmail', () => gw.send(SetEmailDocument, { input: { userId, email: `${unique('n')}@example.com` } }));
    await as('updateHumanPhone', () => gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: '+41791234567' } }));
    await as('setHumanPassword', () => gw.send(SetHumanPasswordDocument, { input: { userId, password: 'Secr3t!pass' } }));
    const orgId = (await as('addOrganization', () => gw.send(AddOrganizationDocument, { input: { name: unique('Org ') } }))).addOrganization
      .orgId;
    await as('addOrgMember', () => gw.send(AddOrgMemberDocument, { input: { userId, roles: ['ORG_OWNER'] } }, { orgId }));
    const projectId = (await as('addProject', () => gw.send(AddProjectDocument, { input: { name: unique('Project ') } }))).addProject
      .projectId;
    const metadataXml = Buffer.from(samlMetadata(`https://${unique('sp')}.example.com`)).toString('base64');
    await as('addSAMLApp', () => gw.send(AddSAMLAppDocument, { input: { projectId, name: unique('App '), metadataXml } }));
    await as('project', () => gw.send(ProjectDocument, { id: projectId }));
    const oidc = { issuer: 'https://issuer.example.com', clientId: 'client-a', scopes: ['openid'] };
    const idpId = (
      await as('addOIDCIdentityProvider', () =>
        gw.send(AddOIDCIdentityProviderDocument, { input: { name: unique('idp'), ...oidc, clientSecret: 'secret-a' } }),
      )
    ).addOIDCIdentityProvider.idpId;
    await as('updateOIDCIdentityProvider', () =>
      gw.send(UpdateOIDCIdentityProviderDocument, { input: { idpId, ...oidc, clientId: 'client-b' } }),
    );
    await as('identityProvider', () => gw.send(IdentityProviderDocument, { id: idpId }));
    await as('user history', () => gw.raw({ query: USER_HISTORY, variables: { id: userId } }));
    // The admin query: organization-scoped and instance-wide searches, with their count.
    await as('users', () => gw.send(UsersDocument, { first: 5, withCount: true }));
    await as('users (all organizations)', () => gw.send(UsersDocument, { first: 5, allOrganizations: true, withCount: true }));

    const byRequest = sent.filter((s) => s.operation !== '' && !s.command.background);
    const routed = byRequest.flatMap((s) => routes(s.command).map((r) => ({ ...r, operation: s.operation })));
    const search = (r: { operation: string }) => r.operation.startsWith('users');
    const hot = routed.filter((r) => !search(r));
    expect(new Set(hot.map((r) => r.operation)).size).toBeGreaterThanOrEqual(18); // every operation above sent commands
    expect(hot.filter((r) => r.targeting === 'all').map((r) => `${r.operation}: ${label(r)} ${r.what}`)).toEqual([]);
    const scattered = routed.filter((r) => search(r) && r.targeting === 'all');
    expect(scattered.length).toBeGreaterThanOrEqual(4); // a find and a count aggregate per search
    for (const r of scattered) expect(documented(r, ['searchUsers', 'countUsers']), `${r.operation}: ${label(r)}`).toBeDefined();
    expect(concernProblems(sent.map((s) => s.command))).toEqual([]);
  });
});
