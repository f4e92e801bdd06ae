// ListUsers on the wire (zitadel.user.v2.UserService and zitadel.management.v1.ManagementService,
// src/wire/list-users.ts) over gRPC and Connect with ZITADEL's own clients and over REST with
// fetch: queries, order and offset/limit paging against an expectation computed here from the
// users seeded through the store port; permissions; unsupported queries refused with the field
// named. On the embedded stores and on MongoDB-wire + Redis: every query over every API version
// and protocol on the embedded stores; on MongoDB-wire each query over both versions, one
// protocol each (the protocols are the same code on both stores, the search is not; FerretDB
// scans for every call, and the whole matrix there was the suite's slowest file).
import { fromJson, toJson, type JsonObject, type MessageShape } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type Interceptor, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { createManagementServiceClient } from '@zitadel/client/v1';
import { createOrganizationServiceClient, createUserServiceClient } from '@zitadel/client/v2';
import { ListUsersRequestSchema as V1Request, ListUsersResponseSchema as V1Response } from '@zitadel/proto/zitadel/management_pb.js';
import { UserSchema as UserV1 } from '@zitadel/proto/zitadel/user_pb.js';
import { UserSchema as UserV2 } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import {
  ListUsersRequestSchema as V2Request,
  ListUsersResponseSchema as V2Response,
} from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_VALUES, MAX_PAGE } from '../src/commands/user-search-inputs.ts';
import type { User } from '../src/model/users.ts';
import type { EventStore } from '../src/store/port.ts';
import { MAX_OFFSET } from '../src/wire/list-users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { facts, SEEDED_PASSWORD_HASH } from './support/given.ts';
import { describeWith } from './support/servers.ts';
import { bearer, violationsOf } from './support/wire-clients.ts';

let seq = 0;

/** Users seeded in the organization under test: more than one of the command's largest pages, so an offset walks several. */
const SEEDED = 130;

type Kind = 'grpc' | 'connect' | 'rest';
const KINDS: Kind[] = ['grpc', 'connect', 'rest'];
type Version = 'v1' | 'v2';

/** A seeded user as the test knows it (text folded as the search folds it). */
interface Model {
  id: string;
  username: string;
  email: string;
  first: string;
  last: string;
  display: string;
  state: 'USER_STATE_ACTIVE' | 'USER_STATE_INITIAL';
  created: number;
}

const fold = (s: string) => s.normalize('NFKC').toLowerCase();
const codePoints = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function seedOptions(i: number) {
  const base = ['Ada', 'ada.l', 'Grace', 'GRACE-h', 'zed'][i % 5]!;
  return {
    // Ids that do not follow the usernames' or the creation order, so the tie-breaker shows.
    id: `lu${String((i * 37) % 131).padStart(3, '0')}`,
    username: `${base}${i}`,
    email: `${base.toLowerCase().replace(/[^a-z]/g, '')}${i}@${i % 3 === 0 ? 'Example.ORG' : 'example.com'}`,
    passwordHash: i % 3 === 1 ? null : SEEDED_PASSWORD_HASH,
    profile: {
      firstName: ['Ada', 'grace', 'GRETA', 'Émile'][i % 4]!,
      lastName: ['Lovelace', 'hopper', 'LOVE'][i % 3]!,
      displayName: i % 4 === 0 ? null : ['Dr. Who', 'dr. no', 'Doctor'][i % 3]!,
    },
  };
}

/** Users appended through the store port as addHumanUser writes them, ten at a time (creation dates tie). */
async function seed(store: EventStore, orgId: string, n: number): Promise<Model[]> {
  const models: Model[] = [];
  for (let i = 0; i < n; i += 10) {
    const wave = Array.from({ length: Math.min(10, n - i) }, async (_, j) => {
      const { id, ...options } = seedOptions(i + j);
      const fact = facts.human(id, orgId, options);
      const { snapshot } = await store.append<User>(
        {
          aggregateType: 'user',
          aggregateId: id,
          sequence: 1,
          type: fact.type,
          payload: fact.payload,
          creator: 'seed',
          resourceOwner: orgId,
        },
        { claims: fact.claims, base: null },
      );
      return {
        id,
        username: fold(options.username),
        email: fold(options.email),
        first: fold(options.profile.firstName),
        last: fold(options.profile.lastName),
        display: fold(options.profile.displayName ?? ''),
        state: options.passwordHash ? 'USER_STATE_ACTIVE' : 'USER_STATE_INITIAL',
        created: snapshot.creationDate.getTime(),
      } satisfies Model;
    });
    models.push(...(await Promise.all(wave)));
  }
  return models;
}

type Sort = 'USER_FIELD_NAME_USER_NAME' | 'USER_FIELD_NAME_CREATION_DATE';

/** The order the wire promises: by the column (creation date when none), then by id, both ascending or both descending. */
function ordered(models: Model[], sort: Sort | undefined, asc: boolean): string[] {
  const key = (m: Model) => (sort === 'USER_FIELD_NAME_USER_NAME' ? m.username : m.created);
  return [...models]
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      const byKey = typeof ka === 'number' ? ka - (kb as number) : codePoints(ka, kb as string);
      return (asc ? 1 : -1) * (byKey || codePoints(a.id, b.id));
    })
    .map((m) => m.id);
}

/** A ListUsers answer as both versions and every transport give it. */
interface Listed {
  ids: string[];
  total: bigint;
  timestamp: Date | undefined;
  sortingColumn: number;
}

/** A refusal as every transport gives it: the gRPC code, the fields of its BadRequest, and REST's HTTP status. */
interface Refused {
  code: Code;
  fields: string[];
  status?: number;
}

function listedV2(res: MessageShape<typeof V2Response>): Listed {
  return {
    ids: res.result.map((u) => u.userId),
    total: res.details!.totalResult,
    timestamp: res.details?.timestamp && timestampDate(res.details.timestamp),
    sortingColumn: res.sortingColumn,
  };
}

function listedV1(res: MessageShape<typeof V1Response>): Listed {
  return {
    ids: res.result.map((u) => u.id),
    total: res.details!.totalResult,
    timestamp: res.details?.viewTimestamp && timestampDate(res.details.viewTimestamp),
    sortingColumn: res.sortingColumn,
  };
}

/** Every API version over every protocol. */
const EVERY_WAY = (['v1', 'v2'] as Version[]).flatMap((v) => KINDS.map((k) => [v, k] as [Version, Kind]));

/** The whole suite against one gateway started with `env()`, the queries asked each of the `ways`. */
function listUsersSuite(name: string, env: () => Record<string, string>, ways: [Version, Kind][] = EVERY_WAY) {
  describe(name, () => {
    let gw: TestGateway;
    let orgId: string;
    let models: Model[];
    let viewerToken: string;
    let plainToken: string;
    const transports = new Map<string, Transport>();

    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      const admin = createGrpcTransport({ baseUrl: gw.baseUrl, interceptors: [bearer(gw.adminToken)] });
      orgId = (await createOrganizationServiceClient(admin).addOrganization({ name: `List users ${Date.now().toString(36)}${seq++}` }))
        .organizationId;
      models = await seed(gw.gateway.deps.store, orgId, SEEDED);
      // models[0]: a user viewer of the organization (user.read); models[1]: no role at all.
      await createManagementServiceClient(admin).addOrgMember(
        { userId: models[0]!.id, roles: ['ORG_USER_VIEWER'] },
        { headers: { 'x-zitadel-orgid': orgId } },
      );
      viewerToken = await gw.tokenFor(models[0]!.id);
      plainToken = await gw.tokenFor(models[1]!.id);
    });
    afterAll(async () => {
      await gw?.close();
    });

    const orgHeader =
      (org: string | undefined): Interceptor =>
      (next) =>
      async (req) => {
        if (org) req.header.set('x-zitadel-orgid', org);
        return next(req);
      };

    function transport(kind: 'grpc' | 'connect', token: string | null, org: string | undefined): Transport {
      const key = `${kind} ${token} ${org}`;
      let t = transports.get(key);
      if (!t) {
        const interceptors = [bearer(token), orgHeader(org)];
        t =
          kind === 'grpc'
            ? createGrpcTransport({ baseUrl: gw.baseUrl, interceptors })
            : createConnectTransport({ baseUrl: gw.baseUrl, httpVersion: '1.1', useBinaryFormat: true, interceptors });
        transports.set(key, t);
      }
      return t;
    }

    interface CallOptions {
      /** Default: the administrator's; null: none. */
      token?: string | null;
      /** x-zitadel-orgid. */
      org?: string;
    }

    /**
     * ListUsers of `version` with a request given as proto3 JSON (the same JSON for v1 and v2:
     * their queries, methods, states and columns share names), over `kind`.
     */
    async function list(version: Version, kind: Kind, body: JsonObject, options: CallOptions = {}): Promise<Listed | Refused> {
      const token = options.token === undefined ? gw.adminToken : options.token;
      if (kind === 'rest') {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (token) headers.authorization = `Bearer ${token}`;
        if (options.org) headers['x-zitadel-orgid'] = options.org;
        const path = version === 'v2' ? '/v2/users' : '/management/v1/users/_search';
        const res = await fetch(`${gw.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        const json = (await res.json()) as JsonObject;
        if (res.status === 200) return version === 'v2' ? listedV2(fromJson(V2Response, json)) : listedV1(fromJson(V1Response, json));
        const details = (json.details ?? []) as { '@type': string; fieldViolations?: { field: string }[] }[];
        const fields = details
          .filter((d) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest')
          .flatMap((d) => d.fieldViolations!.map((v) => v.field));
        return { code: json.code as Code, fields: fields.sort(), status: res.status };
      }
      const t = transport(kind, token, options.org);
      try {
        if (version === 'v2') return listedV2(await createUserServiceClient(t).listUsers(fromJson(V2Request, body)));
        return listedV1(await createManagementServiceClient(t).listUsers(fromJson(V1Request, body)));
      } catch (err) {
        const e = ConnectError.from(err);
        return {
          code: e.code,
          fields: violationsOf(e)
            .map((v) => v.field)
            .sort(),
        };
      }
    }

    /** A successful answer (a refusal fails the test with what it was). */
    const ok = (r: Listed | Refused): Listed => {
      if ('code' in r) throw new Error(`expected users, got ${Code[r.code]} ${JSON.stringify(r.fields)}`);
      return r;
    };
    const refused = (r: Listed | Refused): Refused => {
      if (!('code' in r)) throw new Error(`expected a refusal, got ${r.ids.length} users`);
      return r;
    };

    /** The request for the organization under test: v2 names it in a query, v1 in the header. */
    const inOrg = (version: Version, body: JsonObject): [JsonObject, CallOptions] => {
      if (version === 'v1') return [body, { org: orgId }];
      const queries = [...((body.queries as JsonObject[] | undefined) ?? []), { organizationIdQuery: { organizationId: orgId } }];
      return [{ ...body, queries }, {}];
    };

    // Queries (proto3 JSON) and which seeded users they select.
    const QUERIES: [string, JsonObject[], (m: Model) => boolean][] = [
      ['no query: every user of the organization', [], () => true],
      [
        'user name STARTS_WITH_IGNORE_CASE',
        [{ userNameQuery: { userName: 'ADA', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }],
        (m) => m.username.startsWith('ada'),
      ],
      [
        'user name EQUALS (the default method), compared ignoring case',
        [{ userNameQuery: { userName: 'ADA5' } }],
        (m) => m.username === 'ada5',
      ],
      [
        'user name CONTAINS',
        [{ userNameQuery: { userName: '-h1', method: 'TEXT_QUERY_METHOD_CONTAINS' } }],
        (m) => m.username.includes('-h1'),
      ],
      [
        'login name EQUALS_IGNORE_CASE (the username here)',
        [{ loginNameQuery: { loginName: 'Grace-H3', method: 'TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE' } }],
        (m) => m.username === 'grace-h3',
      ],
      [
        'email CONTAINS_IGNORE_CASE',
        [{ emailQuery: { emailAddress: '@EXAMPLE.org', method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }],
        (m) => m.email.includes('@example.org'),
      ],
      [
        'email STARTS_WITH',
        [{ emailQuery: { emailAddress: 'adal1', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
        (m) => m.email.startsWith('adal1'),
      ],
      [
        'first name STARTS_WITH, ignoring case',
        [{ firstNameQuery: { firstName: 'Gr', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
        (m) => m.first.startsWith('gr'),
      ],
      [
        'last name and display name in an and_query, with a state beside it',
        [
          {
            andQuery: {
              queries: [
                { lastNameQuery: { lastName: 'love', method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } },
                { displayNameQuery: { displayName: 'DR.', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } },
              ],
            },
          },
          { stateQuery: { state: 'USER_STATE_ACTIVE' } },
        ],
        (m) => m.last.startsWith('love') && m.display.startsWith('dr.') && m.state === 'USER_STATE_ACTIVE',
      ],
      ['state INITIAL', [{ stateQuery: { state: 'USER_STATE_INITIAL' } }], (m) => m.state === 'USER_STATE_INITIAL'],
      [
        'type HUMAN: every user',
        [{ typeQuery: { type: 'TYPE_HUMAN' } }, { userNameQuery: { userName: 'zed', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
        (m) => m.username.startsWith('zed'),
      ],
      [
        'user name ENDS_WITH',
        [{ userNameQuery: { userName: '7', method: 'TEXT_QUERY_METHOD_ENDS_WITH' } }],
        (m) => m.username.endsWith('7'),
      ],
      [
        'email ENDS_WITH_IGNORE_CASE',
        [{ emailQuery: { emailAddress: '.ORG', method: 'TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE' } }],
        (m) => m.email.endsWith('.org'),
      ],
      [
        'first name EQUALS and last name CONTAINS (every method on names)',
        [
          { firstNameQuery: { firstName: 'Greta' } },
          { lastNameQuery: { lastName: 'OV', method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } },
        ],
        (m) => m.first === 'greta' && m.last.includes('ov'),
      ],
      [
        'in_user_ids_query: the listed users, an unknown id and a repeated one ignored',
        [{ inUserIdsQuery: { userIds: ['lu005', 'lu042', 'lu042', 'lu100', 'no-such-user'] } }],
        (m) => ['lu005', 'lu042', 'lu100'].includes(m.id),
      ],
      [
        'in_user_emails_query: exact, ignoring case',
        [{ inUserEmailsQuery: { userEmails: ['ADA0@example.ORG', 'zed4@example.com', 'zed4@example'] } }],
        (m) => ['ada0@example.org', 'zed4@example.com'].includes(m.email),
      ],
      [
        'or_query of two user names',
        [
          {
            orQuery: {
              queries: [
                { userNameQuery: { userName: 'ada1', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } },
                { userNameQuery: { userName: 'zed', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } },
              ],
            },
          },
        ],
        (m) => m.username.startsWith('ada1') || m.username.startsWith('zed'),
      ],
      [
        'not_query of a state',
        [{ notQuery: { query: { stateQuery: { state: 'USER_STATE_ACTIVE' } } } }],
        (m) => m.state !== 'USER_STATE_ACTIVE',
      ],
      [
        'the same field twice (user name and login name), and an or_query holding an and_query and a not_query',
        [
          { userNameQuery: { userName: 'g', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } },
          { loginNameQuery: { loginName: '-h', method: 'TEXT_QUERY_METHOD_CONTAINS' } },
          {
            orQuery: {
              queries: [
                {
                  andQuery: {
                    queries: [
                      { stateQuery: { state: 'USER_STATE_ACTIVE' } },
                      { emailQuery: { emailAddress: '.org', method: 'TEXT_QUERY_METHOD_ENDS_WITH' } },
                    ],
                  },
                },
                { notQuery: { query: { inUserIdsQuery: { userIds: [] } } } },
              ],
            },
          },
        ],
        (m) => m.username.startsWith('g') && m.username.includes('-h'),
      ],
      ['an empty or_query: nobody (as in ZITADEL)', [{ orQuery: { queries: [] } }], () => false],
      ['type MACHINE: nobody (every user here is human)', [{ typeQuery: { type: 'TYPE_MACHINE' } }], () => false],
    ];

    it('seeds what the cases need: both states, a page of the command walked more than once, creation dates that tie', () => {
      expect(models).toHaveLength(SEEDED);
      expect(SEEDED).toBeGreaterThan(MAX_PAGE);
      expect(new Set(models.map((m) => m.state))).toEqual(new Set(['USER_STATE_ACTIVE', 'USER_STATE_INITIAL']));
      expect(new Set(models.map((m) => m.created)).size).toBeLessThan(models.length);
      for (const [name, , selects] of QUERIES.slice(1))
        if (!name.includes('nobody')) expect(models.filter(selects).length, name).toBeGreaterThan(0);
    });

    describe.each(ways)('%s over %s', (version, kind) => {
      it.each(QUERIES)('%s, by user name ascending', async (_name, queries, selects) => {
        const [body, options] = inOrg(version, {
          query: { limit: MAX_PAGE, asc: true },
          sortingColumn: 'USER_FIELD_NAME_USER_NAME',
          queries,
        });
        const res = ok(await list(version, kind, body, options));
        const want = ordered(models.filter(selects), 'USER_FIELD_NAME_USER_NAME', true);
        expect(res.ids).toEqual(want.slice(0, MAX_PAGE));
        expect(res.total).toBe(BigInt(want.length));
        expect(res.sortingColumn).toBe(1);
        expect(Math.abs(res.timestamp!.getTime() - Date.now())).toBeLessThan(60_000);
      });

      it('offset and limit page through every user in order, ascending and descending, past the command page size; the total on every page', async () => {
        for (const asc of [true, false]) {
          const ids: string[] = [];
          for (let offset = 0; offset < SEEDED; offset += 45) {
            const [body, options] = inOrg(version, {
              query: { offset: String(offset), limit: 45, asc },
              sortingColumn: 'USER_FIELD_NAME_USER_NAME',
            });
            const res = ok(await list(version, kind, body, options));
            expect(res.total).toBe(BigInt(SEEDED));
            ids.push(...res.ids);
          }
          expect(ids).toEqual(ordered(models, 'USER_FIELD_NAME_USER_NAME', asc));
        }
      });

      it('refuses the unsupported queries, order and offset with every field named, before reading anything', async () => {
        const [body, options] = inOrg(version, {
          query: { offset: String(MAX_OFFSET + 1), limit: MAX_PAGE + 1 },
          sortingColumn: 'USER_FIELD_NAME_EMAIL',
          queries: [
            { orQuery: { queries: [{ userNameQuery: { userName: 'a' } }, { nickNameQuery: { nickName: 'a' } }] } },
            { userNameQuery: { userName: 'x'.repeat(201), method: 'TEXT_QUERY_METHOD_STARTS_WITH' } },
            {
              andQuery: {
                queries: [{ notQuery: { query: { nickNameQuery: { nickName: 'a' } } } }, { emailQuery: { emailAddress: 'a', method: 99 } }],
              },
            },
            { firstNameQuery: { firstName: 'Ada\u0000', method: 'TEXT_QUERY_METHOD_EQUALS' } },
            { notQuery: {} },
            { nickNameQuery: { nickName: 'a' } },
            { inUserIdsQuery: { userIds: ['1', 'x'.repeat(201)] } },
            { stateQuery: { state: 'USER_STATE_DELETED' } },
          ],
        });
        const res = refused(await list(version, kind, body, options));
        expect(res.code).toBe(Code.InvalidArgument);
        if (kind === 'rest') expect(res.status).toBe(400);
        expect(res.fields).toEqual(
          [
            'query.limit',
            'query.offset',
            'sorting_column',
            'queries[0].or_query.queries[1].nick_name_query',
            'queries[1].user_name_query.user_name',
            'queries[2].and_query.queries[0].not_query.query.nick_name_query',
            'queries[2].and_query.queries[1].email_query.method',
            'queries[3].first_name_query.first_name',
            'queries[4].not_query.query',
            'queries[5].nick_name_query',
            'queries[6].in_user_ids_query.user_ids[1]',
            'queries[7].state_query.state',
          ].sort(),
        );
      });

      it('a caller with user.read there lists; one without is PERMISSION_DENIED, no token UNAUTHENTICATED', async () => {
        const [body, options] = inOrg(version, { query: { limit: 5, asc: true }, sortingColumn: 'USER_FIELD_NAME_CREATION_DATE' });
        const viewer = ok(await list(version, kind, body, { ...options, token: viewerToken }));
        expect(viewer.ids).toEqual(ordered(models, 'USER_FIELD_NAME_CREATION_DATE', true).slice(0, 5));
        const denied = refused(await list(version, kind, body, { ...options, token: plainToken }));
        expect(denied.code).toBe(Code.PermissionDenied);
        if (kind === 'rest') expect(denied.status).toBe(403);
        const anonymous = refused(await list(version, kind, body, { ...options, token: null }));
        expect(anonymous.code).toBe(Code.Unauthenticated);
        if (kind === 'rest') expect(anonymous.status).toBe(401);
      });
    });

    describe('offset and limit', () => {
      it.each([true, false])(
        'every order (asc %s): pages of 7 from offsets that straddle the command pages match the expectation',
        async (asc) => {
          for (const sort of ['USER_FIELD_NAME_USER_NAME', 'USER_FIELD_NAME_CREATION_DATE'] as const) {
            const want = ordered(models, sort, asc);
            for (const offset of [0, 5, 99, 100, 101, 123, SEEDED - 3]) {
              const [body, options] = inOrg('v2', { query: { offset: String(offset), limit: 7, asc }, sortingColumn: sort });
              const res = ok(await list('v2', 'grpc', body, options));
              expect(res.ids, `${sort} offset ${offset}`).toEqual(want.slice(offset, offset + 7));
              expect(res.total).toBe(BigInt(SEEDED));
            }
          }
        },
      );

      it('no ListQuery: by creation date (no column given), descending (asc false), the command default page size', async () => {
        for (const version of ['v1', 'v2'] as const) {
          const [body, options] = inOrg(version, {});
          const res = ok(await list(version, 'grpc', body, options));
          expect(res.ids).toEqual(ordered(models, 'USER_FIELD_NAME_CREATION_DATE', false).slice(0, 20));
          expect(res.total).toBe(BigInt(SEEDED));
          expect(res.sortingColumn).toBe(0);
        }
      });

      it('an offset at or past the end is an empty page with the total; up to MAX_OFFSET is served, past it INVALID_ARGUMENT', async () => {
        for (const offset of [SEEDED, SEEDED + 1, MAX_OFFSET]) {
          const [body, options] = inOrg('v1', { query: { offset: String(offset), limit: 10 } });
          const res = ok(await list('v1', 'rest', body, options));
          expect(res.ids).toEqual([]);
          expect(res.total).toBe(BigInt(SEEDED));
        }
        const [body, options] = inOrg('v1', { query: { offset: String(MAX_OFFSET + 1) } });
        expect(refused(await list('v1', 'rest', body, options))).toEqual({
          code: Code.InvalidArgument,
          fields: ['query.offset'],
          status: 400,
        });
        const filtered = inOrg('v2', {
          query: { offset: '2', limit: 10, asc: true },
          sortingColumn: 'USER_FIELD_NAME_USER_NAME',
          queries: [{ userNameQuery: { userName: 'zed1', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
        });
        const want = ordered(
          models.filter((m) => m.username.startsWith('zed1')),
          'USER_FIELD_NAME_USER_NAME',
          true,
        );
        const res = ok(await list('v2', 'connect', ...filtered));
        expect(res.ids).toEqual(want.slice(2, 12));
        expect(res.total).toBe(BigInt(want.length));
      });
    });

    describe('limits: nesting, conditions and list values, refused before anything is read', () => {
      const userName = { userNameQuery: { userName: 'ada', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } };
      /** `levels` or_query / not_query nested in each other around a user name query. */
      const nested = (levels: number): JsonObject => {
        let query: JsonObject = userName;
        for (let i = 0; i < levels; i++) query = i % 2 ? { notQuery: { query } } : { orQuery: { queries: [query] } };
        return query;
      };
      const pathOf = (levels: number) =>
        Array.from({ length: levels }, (_, i) => ((levels - 1 - i) % 2 ? 'not_query.query' : 'or_query.queries[0]')).join('.');

      it.each(KINDS)(
        `or/not nested ${MAX_FILTER_DEPTH} deep are served, one more is refused naming the query past the limit (%s)`,
        async (kind) => {
          const deep = ok(
            await list(
              'v2',
              kind,
              ...inOrg('v2', {
                query: { limit: MAX_PAGE, asc: true },
                sortingColumn: 'USER_FIELD_NAME_USER_NAME',
                queries: [nested(MAX_FILTER_DEPTH)],
              }),
            ),
          );
          // An even number of not_query around the user name: the users it names.
          const selects =
            MAX_FILTER_DEPTH % 4 < 2 ? (m: Model) => m.username.startsWith('ada') : (m: Model) => !m.username.startsWith('ada');
          expect(deep.ids).toEqual(ordered(models.filter(selects), 'USER_FIELD_NAME_USER_NAME', true).slice(0, MAX_PAGE));
          const tooDeep = refused(await list('v2', kind, ...inOrg('v2', { queries: [nested(MAX_FILTER_DEPTH + 1)] })));
          expect(tooDeep).toMatchObject({ code: Code.InvalidArgument, fields: [`queries[0].${pathOf(MAX_FILTER_DEPTH + 1)}`] });
        },
      );

      it(`${MAX_FILTER_CONDITIONS} conditions are served, more are refused; a list of hundreds costs no more than the limit`, async () => {
        // Each state query beyond the first is a condition of its own (the same field, ANDed).
        const states = (n: number) => Array.from({ length: n }, () => ({ stateQuery: { state: 'USER_STATE_ACTIVE' } }));
        const fits = ok(await list('v1', 'grpc', { query: { limit: 1 }, queries: states(MAX_FILTER_CONDITIONS) }, { org: orgId }));
        expect(fits.total).toBe(BigInt(models.filter((m) => m.state === 'USER_STATE_ACTIVE').length));
        expect(refused(await list('v1', 'grpc', { queries: states(MAX_FILTER_CONDITIONS + 1) }, { org: orgId }))).toEqual({
          code: Code.InvalidArgument,
          fields: ['queries'],
        });
        const wide = refused(await list('v2', 'connect', { queries: [{ orQuery: { queries: states(900) } }] }, { org: orgId }));
        expect(wide).toEqual({ code: Code.InvalidArgument, fields: ['queries[0].or_query'] });
      });

      it(`in_user_ids_query of ${MAX_FILTER_VALUES} ids lists the users among them; more values in all lists are refused`, async () => {
        const seeded = models.filter((_, i) => i % 9 === 0).map((m) => m.id);
        const ids = [...seeded, ...Array.from({ length: MAX_FILTER_VALUES - seeded.length }, (_, i) => `unknown-${i}`)];
        for (const kind of KINDS) {
          const res = ok(
            await list(
              'v2',
              kind,
              ...inOrg('v2', {
                query: { limit: MAX_PAGE, asc: true },
                sortingColumn: 'USER_FIELD_NAME_CREATION_DATE',
                queries: [{ inUserIdsQuery: { userIds: ids } }],
              }),
            ),
          );
          expect(res.ids).toEqual(
            ordered(
              models.filter((m) => seeded.includes(m.id)),
              'USER_FIELD_NAME_CREATION_DATE',
              true,
            ),
          );
          expect(res.total).toBe(BigInt(seeded.length));
        }
        const over: JsonObject[] = [{ inUserIdsQuery: { userIds: ids } }, { inUserEmailsQuery: { userEmails: ['ada0@example.org'] } }];
        expect(refused(await list('v1', 'rest', { queries: over }, { org: orgId }))).toEqual({
          code: Code.InvalidArgument,
          fields: ['queries[1].in_user_emails_query.user_emails'],
          status: 400,
        });
      });
    });

    describe('the organization', () => {
      it('v2 without an organization query: the header when sent, else the caller’s own organization', async () => {
        const own = ok(await list('v2', 'grpc', { query: { limit: MAX_PAGE } }));
        expect(own.ids).toEqual([gw.adminId]);
        const header = ok(await list('v2', 'rest', { query: { limit: 1 } }, { org: orgId }));
        expect(header.total).toBe(BigInt(SEEDED));
        const ownV1 = ok(await list('v1', 'connect', { query: { limit: MAX_PAGE } }));
        expect(ownV1.ids).toEqual([gw.adminId]);
      });

      it('an organization that does not exist, by query or header, is PERMISSION_DENIED; two organization queries, an empty one, one inside or/not, or an empty query are refused', async () => {
        const unknown = { queries: [{ organizationIdQuery: { organizationId: 'no-such-org' } }] };
        expect(refused(await list('v2', 'grpc', unknown)).code).toBe(Code.PermissionDenied);
        expect(refused(await list('v1', 'grpc', {}, { org: 'no-such-org' })).code).toBe(Code.PermissionDenied);
        const twice: JsonObject = {
          queries: [
            { organizationIdQuery: { organizationId: orgId } },
            { organizationIdQuery: { organizationId: orgId } },
            { organizationIdQuery: { organizationId: '' } },
            {},
            { orQuery: { queries: [{ organizationIdQuery: { organizationId: orgId } }] } },
            { notQuery: { query: { organizationIdQuery: { organizationId: orgId } } } },
          ],
        };
        expect(refused(await list('v2', 'rest', twice))).toEqual({
          code: Code.InvalidArgument,
          fields: [
            'queries[1].organization_id_query',
            'queries[2].organization_id_query.organization_id',
            'queries[3]',
            'queries[4].or_query.queries[0].organization_id_query',
            'queries[5].not_query.query.organization_id_query',
          ],
          status: 400,
        });
      });

      it('the users come as GetUserByID maps them, in v2 and in v1', async () => {
        const target = models.find((m) => m.username === 'ada.l1')!.id;
        const admin = (org?: string) => transport('grpc', gw.adminToken, org);
        const v2 = await createUserServiceClient(admin()).listUsers({
          queries: [
            { query: { case: 'organizationIdQuery', value: { organizationId: orgId } } },
            { query: { case: 'userNameQuery', value: { userName: 'ada.l1' } } },
          ],
        });
        expect(v2.result).toHaveLength(1);
        const byId = (await createUserServiceClient(admin()).getUserByID({ userId: target })).user!;
        expect(toJson(UserV2, v2.result[0]!)).toEqual(toJson(UserV2, byId));
        const mgmt = createManagementServiceClient(admin(orgId));
        const v1 = await mgmt.listUsers({ queries: [{ query: { case: 'userNameQuery', value: { userName: 'ada.l1' } } }] });
        expect(v1.result).toHaveLength(1);
        expect(toJson(UserV1, v1.result[0]!)).toEqual(toJson(UserV1, (await mgmt.getUserByID({ id: target })).user!));
      });
    });
  });
}

listUsersSuite('ListUsers on the embedded stores', () => ({}));
describeWith('mongo', 'ListUsers on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    listUsersSuite(
      'the same suite',
      () => ({
        MONGODB_URL: mongoUrl,
        MONGODB_DB: `list_users_${Date.now()}_${seq++}`,
        REDIS_URL: redisUrl,
        CODE_HMAC_KEY: 'test-key',
      }),
      [
        ['v1', 'grpc'],
        ['v2', 'rest'],
      ],
    );
  });
});
