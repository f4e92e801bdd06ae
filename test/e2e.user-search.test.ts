// Query.users end to end over HTTP, on the embedded stores and on MongoDB-wire + Redis:
// every filter, order, paging direction, cursor check and permission, each answer compared
// with what the test works out itself from what it seeded. One suite body; only the seeding
// and the number of users differ:
//   embedded      10,000 users in two organizations (9,300 in A, 700 in B), through the
//                 store port, one append per user (64 at a time), as addHumanUser writes them;
//   MongoDB-wire  1,000 users (900 in A, 100 in B) through tools/mongo-bulk.ts: the
//                 documents append writes, 1,000 users per insertMany (test/tools.mongo-bulk.test.ts
//                 holds it to append's). One append at a time is no option on FerretDB v1: its
//                 upsert scans the users collection.
//
// Why fewer users on MongoDB-wire: FerretDB v1.24 (the MongoDB-wire server here; no real
// MongoDB on this machine) serves no find from an index, so every search reads and decodes
// every user document, about 0.3 ms a user on one free core (2.1 to 3.7 s a search at
// 10,000 users on an Intel Xeon; 15 to 27 s each on a loaded AMD EPYC, past the gateway's
// 10 s MONGODB_READ_TIMEOUT_MS, which failed 28 tests there). The search is the same code
// on both stores; what only scale shows (the query plans, the round trips) is held by
// test/store.user-search.test.ts and test/store.round-trips.test.ts, and the embedded suite
// keeps 10,000. At 1,000 a search costs FerretDB a tenth of that, and the test sets the
// read deadline it needs (test/support/test-defaults.ts gives every test gateway 120 s), so
// the outcome does not depend on the machine's speed.
//
// The walks through organization B page by `walkPage` so that each direction takes 8
// pages, enough for the forward walk's three rounds of additions (one every third page).
// The checks that leave B alone run concurrently with the walks (the only writes, to B), so
// that FerretDB can use both cores when they are free. The MongoDB-wire gateway runs
// without its repair loop (each pass reads the whole events collection on FerretDB v1;
// there is nothing to repair).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  UpdateHumanProfileDocument,
  UsersDocument,
  type UsersQuery,
  type UsersQueryVariables,
} from './generated/graphql.ts';
import {
  embeddedOnly,
  expectRestStatus,
  onlyError,
  startGateway,
  upstreamMode,
  upstreamOnly,
  type Response,
  type TestGateway,
} from './support/gateway.ts';
import { facts, SEEDED_PASSWORD_HASH, type Fact, type HumanOptions } from './support/given.ts';
import { describeWith } from './support/servers.ts';
import { metric } from './support/slow-peers.ts';
import { expected, lower, modelOf, ordered, type Model } from './support/user-search-contract.ts';
import type { User, UserAdded } from '../src/model/users.ts';
import { bulkLoadUsers } from '../tools/mongo-bulk.ts';
import type { Snapshot } from '../src/store/port.ts';
import type { UserFilter, UserSortField } from '../src/store/read-models.ts';

/**
 * In upstream mode, the filter fields and order ZITADEL's ListUsers cannot express are refused
 * (src/upstream/user-search.ts): INVALID_ARGUMENT naming the field.
 */
const refusedUpstream = (field: string) => ({ refusedUpstream: field });

/**
 * How many users are seeded (the first `inB` in organization B, the rest in A), and the
 * page size of the walks through organization B (8 pages each way on both).
 */
const SCALE = { users: 10_000, inB: 700, walkPage: 100 };
/** On MongoDB-wire (FerretDB v1 scans every user for every search): see the header. */
const FERRET_SCALE = { users: 1_000, inB: 100, walkPage: 13 };
type Scale = typeof SCALE;
const FIRST = ['Ada', 'Grace', 'Alan', 'Édith', 'Linus', 'Barbara', 'Ken', 'Margaret', 'Dennis', 'Frances', 'Zoë', 'ﬁona'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Piaf', 'Torvalds', 'Liskov', 'Thompson', 'Hamilton', 'Ritchie', 'Allen', 'Noether'];
const DOMAINS = ['example.com', 'Example.ORG', 'corp.test'];

const ascii = (s: string) => s.normalize('NFKD').replace(/[^\x20-\x7e]/g, '');

function seedOptions(i: number): HumanOptions {
  const first = FIRST[i % FIRST.length]!;
  const last = LAST[(i * 7) % LAST.length]!;
  return {
    username: `${i % 3 === 0 ? first.toUpperCase() : first}.${last}.${i}`,
    email: `${ascii(first).toLowerCase()}.${last.toLowerCase()}${i % 50}@${DOMAINS[i % 3]}`,
    emailVerified: i % 4 !== 0,
    passwordHash: i % 5 === 0 ? null : SEEDED_PASSWORD_HASH,
    profile: { firstName: first, lastName: last, displayName: i % 6 === 0 ? null : `${first} ${last.charAt(0)}.` },
  };
}

type Filter = NonNullable<UsersQueryVariables['filter']>;

/** The search a GraphQL filter asks for, as this test reads the API's description. */
function modelFilter(f: Filter, orgId?: string): UserFilter {
  const text = (m: Filter['username']) => (m ? { op: m.op ?? 'EXACT', value: lower(m.value) } : undefined);
  const prefix = (v: string | null | undefined) => (v == null ? undefined : lower(v));
  return {
    orgId,
    username: text(f.username),
    email: text(f.email),
    displayNamePrefix: prefix(f.displayNamePrefix),
    firstNamePrefix: prefix(f.firstNamePrefix),
    lastNamePrefix: prefix(f.lastNamePrefix),
    state: f.state ?? undefined,
    emailVerified: f.emailVerified ?? undefined,
    createdFrom: f.createdAfter ? new Date(f.createdAfter) : undefined,
    createdTo: f.createdBefore ? new Date(f.createdBefore) : undefined,
  };
}

/** Runs `work` on `items` with at most `width` in flight. */
async function pool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}

/** Writes the seeded users' user.added events (addHumanUser's, as facts) and answers their snapshots as the store holds them. */
type Seeder = (gw: TestGateway, users: Fact[]) => Promise<Snapshot<User>[]>;

/** Through the store port, 64 appends at a time: one append per user, as addHumanUser writes it. */
const throughPort: Seeder = (gw, users) =>
  pool(users, 64, async (fact) => {
    const { snapshot } = await gw.gateway.deps.store.append<User>(
      {
        aggregateType: 'user',
        aggregateId: fact.aggregateId,
        sequence: 1,
        type: fact.type,
        payload: fact.payload,
        creator: gw.adminId,
        resourceOwner: fact.resourceOwner!,
      },
      { claims: fact.claims, base: null },
    );
    return snapshot;
  });

/**
 * Straight into the gateway's MongoDB database, with the documents the store's append
 * writes (tools/mongo-bulk.ts; test/tools.mongo-bulk.test.ts holds it to that), 1,000
 * users per insertMany. Creation times a millisecond apart for every 4 users, so that
 * dates tie as they do for appends running together.
 */
const intoMongo: Seeder = async (gw, users) => {
  const t0 = Date.now() - users.length;
  const { snapshots } = await bulkLoadUsers({
    url: gw.config.mongodbUrl!,
    dbName: gw.config.mongodbDb,
    users: users.map((fact, i) => ({
      id: fact.aggregateId,
      orgId: fact.resourceOwner!,
      user: fact.payload as unknown as UserAdded,
      claims: fact.claims,
      creator: gw.adminId,
      createdAt: new Date(t0 + Math.floor(i / 4)),
    })),
  });
  return snapshots;
};

function searchSuite(name: string, env: () => Record<string, string>, seed: Seeder, scale: Scale = SCALE) {
  describe(name, () => {
    let gw: TestGateway;
    let orgA: string;
    let orgB: string;
    const models: Model[] = [];
    const tokens: Record<'viewerA' | 'ownerA' | 'viewerB', string> = { viewerA: '', ownerA: '', viewerB: '' };
    let seq = 0;

    const search = (variables: UsersQueryVariables, opts: { token?: string | null; orgId?: string } = { orgId: orgA }) =>
      gw.send(UsersDocument, variables, opts);
    const page = (res: Response<UsersQuery>) => {
      if (!res.data)
        throw new Error(
          res.text +
            gw.logs
              .filter((l) => /rror/.test(l))
              .slice(-2)
              .join('\n'),
        );
      return res.data.users;
    };
    const ids = (res: Response<UsersQuery>) => page(res).edges.map((e) => e.node.id);
    const code = (res: Response<unknown>) => onlyError(res).extensions?.code;
    const remember = async (id: string) => {
      const snap = (await gw.gateway.deps.store.load<User>('user', id))!;
      const i = models.findIndex((m) => m.id === id);
      if (i >= 0) models[i] = modelOf(snap);
      else models.push(modelOf(snap));
    };
    const addUser = async (org: string, username: string) => {
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          username,
          organisation: { orgId: org },
          profile: { firstName: 'Api', lastName: 'Added' },
          email: { email: `added${seq++}@api.test`, isVerified: true },
        },
      });
      if (!res.data) throw new Error(res.text);
      await remember(res.data.addHumanUser.userId);
      return res.data.addHumanUser.userId;
    };
    const withRole = async (org: string, role: string) => {
      const id = await addUser(org, `${role.toLowerCase()}-${seq++}`);
      const granted = await gw.send(AddOrgMemberDocument, { input: { userId: id, roles: [role] } }, { orgId: org });
      if (!granted.data) throw new Error(granted.text);
      await remember(id); // the grant is noted on the user: a later changeDate
      return gw.tokenFor(id);
    };

    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      const org = async (n: string) =>
        (await gw.send(AddOrganizationDocument, { input: { name: `${n} ${Date.now()}` } })).data!.addOrganization.orgId;
      [orgA, orgB] = [await org('Search A'), await org('Search B')];

      await remember(gw.adminId);
      // Before the seed: on FerretDB v1 each of these writes scans the users collection.
      tokens.viewerA = await withRole(orgA, 'ORG_USER_VIEWER');
      tokens.ownerA = await withRole(orgA, 'ORG_OWNER');
      tokens.viewerB = await withRole(orgB, 'ORG_USER_VIEWER');

      const started = performance.now();
      const users = [...Array(scale.users).keys()].map((i) =>
        facts.human(`seed-${String(i).padStart(5, '0')}`, i < scale.inB ? orgB : orgA, seedOptions(i)),
      );
      const seeded = (await seed(gw, users)).map(modelOf);
      const seedMs = performance.now() - started;
      models.push(...seeded);

      const t0 = performance.now();
      page(await search({ first: 100 })); // the first search after start also waits for the store's search indexes
      const pageMs = performance.now() - t0;
      console.log(
        `[e2e.user-search] ${name}: ${scale.users} users (${scale.inB} in B) seeded in ${Math.round(seedMs)} ms; the first page of 100 in ${Math.round(pageMs)} ms`,
      );
    }, 180_000);
    afterAll(async () => gw?.close());

    const inOrg = (org: string) => models.filter((m) => m.org === org);

    // Values taken from users seeded in organization A, sent in another case.
    const probe = (pick: (m: Model) => boolean = () => true) => {
      const a = inOrg(orgA);
      return a.slice(Math.floor(a.length / 3)).find(pick)!;
    };
    const upper = (s: string) => s.toUpperCase();
    const filters: [string, () => Filter, { refusedUpstream?: string }?][] = [
      ['username EXACT, another case', () => ({ username: { op: 'EXACT', value: upper(probe().username) } })],
      ['username PREFIX', () => ({ username: { op: 'PREFIX', value: upper(probe().username.slice(0, 7)) } })],
      ['username CONTAINS', () => ({ username: { op: 'CONTAINS', value: upper(probe().username.slice(4, 9)) } })],
      ['username PREFIX, NFKC (the ligature ﬁ sent, fi stored too)', () => ({ username: { op: 'PREFIX', value: 'ﬁona' } })],
      ['email EXACT, another case (shared by a few)', () => ({ email: { op: 'EXACT', value: upper(probe().email) } })],
      ['email PREFIX', () => ({ email: { op: 'PREFIX', value: 'edith' } })],
      ['email CONTAINS', () => ({ email: { op: 'CONTAINS', value: '@corp.TEST' } })],
      ['displayName prefix', () => ({ displayNamePrefix: upper(probe((m) => m.displayName !== '').displayName.slice(0, 6)) })],
      ['firstName prefix', () => ({ firstNamePrefix: 'MAR' })],
      ['lastName prefix', () => ({ lastNamePrefix: 'li' })],
      ['state', () => ({ state: 'USER_STATE_INITIAL' })],
      ['emailVerified', () => ({ emailVerified: false }), refusedUpstream('filter.emailVerified')],
      [
        'created after and before',
        () => {
          const dates = [...new Set(inOrg(orgA).map((m) => m.created))].sort((a, b) => a - b);
          return {
            createdAfter: new Date(dates[Math.floor(dates.length / 4)]!).toISOString(),
            createdBefore: new Date(dates[Math.floor(dates.length / 2)]!).toISOString(),
          };
        },
        refusedUpstream('filter.createdAfter'),
      ],
      [
        'several at once',
        () => ({
          username: { op: 'CONTAINS', value: 'lovelace' },
          emailVerified: true,
          state: 'USER_STATE_ACTIVE',
          lastNamePrefix: 'Love',
        }),
        refusedUpstream('filter.emailVerified'),
      ],
    ];

    // Everything that leaves organization B alone runs together with the walks through B
    // (the only writes: users added to B), up to vitest's maxConcurrency (5) at a time: on
    // FerretDB a search is CPU in the server, and this keeps both cores busy.
    describe.concurrent('beside the walks through organization B', { timeout: 300_000 }, () => {
      describe('organization B, paged through whole', () => {
        it.sequential(
          'forward through a whole organization while users are added: each user once, those added ahead too',
          embeddedOnly("ZITADEL's ListUsers pages by offset: a user added before the walk's position shifts the next page"),
          async () => {
            const before = new Set(inOrg(orgB).map((m) => m.id));
            const ahead: string[] = [];
            const behind: string[] = [];
            const seen: string[] = [];
            let after: string | null | undefined;
            for (let n = 0; ; n++) {
              const res = page(await search({ first: scale.walkPage, after }, { orgId: orgB }));
              seen.push(...res.edges.map((e) => e.node.id));
              expect(res.pageInfo.hasPreviousPage).toBe(n > 0);
              if (!res.pageInfo.hasNextPage) break;
              after = res.pageInfo.endCursor;
              if (n % 3 === 0) {
                // "aaa…" sorts before every seeded username (behind the walk), "ωmega…" after all of them.
                behind.push(await addUser(orgB, `aaa-added-${seq++}`));
                ahead.push(await addUser(orgB, `Ωmega-added-${seq++}`));
              }
            }
            expect(new Set(seen).size).toBe(seen.length);
            expect(ahead.length).toBeGreaterThan(2);
            const want = ordered(
              inOrg(orgB).filter((m) => before.has(m.id) || ahead.includes(m.id)),
              'USERNAME',
              false,
            ).map((m) => m.id);
            expect(seen).toEqual(want);
            expect(seen.filter((id) => behind.includes(id))).toEqual([]);
          },
        );

        it.sequential('backward through a whole organization: each user once, in order', async () => {
          const pages: string[][] = [];
          let before: string | null | undefined;
          for (let n = 0; ; n++) {
            const res = page(
              await search({ last: scale.walkPage, before, orderBy: { field: 'CREATION_DATE', direction: 'DESC' } }, { orgId: orgB }),
            );
            pages.unshift(res.edges.map((e) => e.node.id));
            expect(res.pageInfo.hasNextPage).toBe(n > 0);
            if (!res.pageInfo.hasPreviousPage) break;
            before = res.pageInfo.startCursor;
          }
          const seen = pages.flat();
          expect(new Set(seen).size).toBe(seen.length);
          expect(seen).toEqual(ordered(inOrg(orgB), 'CREATION_DATE', true).map((m) => m.id));
        });
      });

      for (const [label, filterOf, { refusedUpstream: refused } = {}] of filters) {
        it(`filter: ${label}`, async () => {
          const filter = filterOf();
          if (upstreamMode && refused) {
            const res = await search({ filter, first: 100 });
            expect(code(res)).toBe('INVALID_ARGUMENT');
            expect(onlyError(res).extensions?.details?.[0]?.fieldViolations?.map((v: { field: string }) => v.field)).toContain(refused);
            return;
          }
          const want = ordered(expected(models, modelFilter(filter, orgA)), 'USERNAME', false).map((m) => m.id);
          expect(want.length, 'the filter matches someone').toBeGreaterThan(0);
          expect(want.length, 'and not everyone').toBeLessThan(inOrg(orgA).length);
          const res = await search({ filter, first: 100, withCount: true });
          expect(ids(res)).toEqual(want.slice(0, 100));
          expect(page(res).totalCount).toBe(want.length);
          expect(page(res).pageInfo.hasNextPage).toBe(want.length > 100);
        });
      }

      for (const field of ['USERNAME', 'CREATION_DATE', 'CHANGE_DATE'] as const) {
        for (const direction of ['ASC', 'DESC'] as const) {
          it(`order ${field} ${direction}: the first two pages and the last one`, async () => {
            const want = ordered(inOrg(orgA), field as UserSortField, direction === 'DESC').map((m) => m.id);
            const orderBy = { field, direction };
            if (upstreamMode && field === 'CHANGE_DATE') {
              // ZITADEL's ListUsers has no change-date column.
              const refused = await search({ orderBy, first: 100 });
              expect(code(refused)).toBe('INVALID_ARGUMENT');
              expect(onlyError(refused).extensions?.details?.[0]?.fieldViolations?.[0]?.field).toBe('orderBy.field');
              return;
            }
            const first = await search({ orderBy, first: 100 });
            expect(ids(first)).toEqual(want.slice(0, 100));
            expect(page(first).pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
            const second = await search({ orderBy, first: 100, after: page(first).pageInfo.endCursor });
            expect(ids(second)).toEqual(want.slice(100, 200));
            expect(page(second).pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
            const last = await search({ orderBy, last: 100 });
            expect(ids(last)).toEqual(want.slice(-100));
            expect(page(last).pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
          });
        }
      }

      it('20 users a page by default; first: 0 gives none, and tells whether there are some', async () => {
        expect(ids(await search({}))).toEqual(
          ordered(inOrg(orgA), 'USERNAME', false)
            .slice(0, 20)
            .map((m) => m.id),
        );
        const none = await search({ first: 0 });
        expect(page(none).edges).toEqual([]);
        expect(page(none).pageInfo.hasNextPage).toBe(true);
      });

      it('a cursor pages only its own query: another filter, order or organization, or garbage, is INVALID_ARGUMENT', async () => {
        const filter: Filter = { username: { op: 'PREFIX', value: 'ada' } };
        const cursor = page(await search({ filter, first: 5 })).pageInfo.endCursor!;
        expect(ids(await search({ filter, first: 5, after: cursor }))).toHaveLength(5);
        expect(ids(await search({ filter, last: 5, before: cursor }))).toHaveLength(4);
        expect(code(await search({ filter: { username: { op: 'PREFIX', value: 'ad' } }, first: 5, after: cursor }))).toBe(
          'INVALID_ARGUMENT',
        );
        expect(code(await search({ filter, orderBy: { direction: 'DESC' }, first: 5, after: cursor }))).toBe('INVALID_ARGUMENT');
        expect(code(await search({ filter, first: 5, after: cursor }, { orgId: orgB }))).toBe('INVALID_ARGUMENT');
        expect(code(await search({ filter, first: 5, after: cursor, allOrganizations: true }))).toBe('INVALID_ARGUMENT');
        for (const garbage of ['abc', '', Buffer.from('{"v":1,"k":[1,"x"],"s":"y"}').toString('base64url'), 'x'.repeat(2000)]) {
          const res = await search({ filter, first: 5, after: garbage });
          expect(code(res), garbage.slice(0, 20)).toBe('INVALID_ARGUMENT');
        }
      });

      it('page sizes: first: 101, a negative one, or first with last are INVALID_ARGUMENT, naming the argument', async () => {
        for (const variables of [{ first: 101 }, { last: 101 }, { first: -1 }, { first: 5, last: 5 }]) {
          const res = await search(variables);
          expect(code(res), JSON.stringify(variables)).toBe('INVALID_ARGUMENT');
          expectRestStatus(res, 400, JSON.stringify(variables));
        }
        expect(onlyError(await search({ first: 101 })).extensions?.details?.[0]?.fieldViolations?.[0]?.field).toBe('first');
        expect(ids(await search({ first: 100 }))).toHaveLength(100);
      });

      it('an ORG_USER_VIEWER reads its organization and cannot write there', async () => {
        const res = await search({ first: 10, withCount: true }, { token: tokens.viewerA });
        expect(ids(res)).toEqual(
          ordered(inOrg(orgA), 'USERNAME', false)
            .slice(0, 10)
            .map((m) => m.id),
        );
        expect(page(res).totalCount).toBe(inOrg(orgA).length);
        const target = inOrg(orgA)[0]!;
        const write = await gw.send(
          UpdateHumanProfileDocument,
          { input: { userId: target.id, firstName: 'Not', lastName: 'Allowed' } },
          { token: tokens.viewerA },
        );
        expect(code(write)).toBe('PERMISSION_DENIED');
      });
    });

    // These read organization B, or every user: after the walks, which add to B.
    it('a user of another organization is PERMISSION_DENIED; without a token UNAUTHENTICATED', async () => {
      expect(code(await search({ first: 5 }, { token: tokens.viewerB, orgId: orgA }))).toBe('PERMISSION_DENIED');
      expect(ids(await search({ first: 5 }, { token: tokens.viewerB }))).toEqual(
        ordered(inOrg(orgB), 'USERNAME', false)
          .slice(0, 5)
          .map((m) => m.id),
      );
      expect(code(await search({ first: 5 }, { token: null }))).toBe('UNAUTHENTICATED');
    });

    it(
      'allOrganizations: every organization for IAM_OWNER; PERMISSION_DENIED for an ORG_OWNER',
      embeddedOnly(
        "the upstream is this gateway's wire face, whose v2 ListUsers without organization_id_query searches the caller's organization, " +
          'not the instance as ZITADEL does; and ZITADEL filters by permission where the embedded mode refuses an ORG_OWNER',
      ),
      async () => {
        const filter: Filter = { username: { op: 'PREFIX', value: 'ken.' } };
        const want = ordered(expected(models, modelFilter(filter)), 'USERNAME', false);
        expect(new Set(want.map((m) => m.org))).toEqual(new Set([orgA, orgB]));
        const res = await search({ filter, first: 100, allOrganizations: true, withCount: true }, {});
        expect(ids(res)).toEqual(want.slice(0, 100).map((m) => m.id));
        expect(page(res).totalCount).toBe(want.length);
        const all = await search({ first: 1, allOrganizations: true, withCount: true }, {});
        expect(page(all).totalCount).toBe(models.length);
        expect(code(await search({ first: 5, allOrganizations: true }, { token: tokens.ownerA }))).toBe('PERMISSION_DENIED');
        expect(ids(await search({ first: 5 }, { token: tokens.ownerA }))).toHaveLength(5);
      },
    );

    it(
      'upstream mode: a page and its count are one ListUsers call',
      upstreamOnly('a page and its count are one ListUsers call'),
      async () => {
        const calls = async () => metric(`${gw.baseUrl}/metrics`, 'gateway_upstream_duration_seconds_count', { method: 'ListUsers' });
        const before = await calls();
        const res = await search({ filter: { username: { op: 'PREFIX', value: 'ada' } }, first: 10, withCount: true });
        expect(ids(res)).toHaveLength(10);
        expect(page(res).totalCount).toBeGreaterThan(10);
        expect((await calls()) - before).toBe(1);
      },
    );
  });
}

searchSuite('users query on the embedded stores', () => ({}), throughPort);
describeWith('mongo', 'users query on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    // No repair loop: on FerretDB v1 each of its passes reads the whole events collection
    // (10,000 events here, none to repair), CPU the searches need.
    const env = () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `e2e_search_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
      STORE_REPAIR_INTERVAL_MS: '0',
      // In upstream mode, the front waits for the upstream's search as long as that waits for
      // FerretDB (TEST_DEFAULTS' MONGODB_READ_TIMEOUT_MS); an embedded gateway ignores it.
      ZITADEL_TIMEOUT_MS: '120000',
    });
    searchSuite('the same suite', env, intoMongo, FERRET_SCALE);
  });
});
