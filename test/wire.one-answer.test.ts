// One question, one answer, on every face: the same request sent to GraphQL, REST, gRPC,
// gRPC-web, Connect JSON and Connect binary gets the same code, for a table of callers, targets
// and headers (DESIGN.md section 6, "Refusals that reveal nothing, in this order, on every
// face"). Three questions: a user by id (GraphQL `user`, management GetUserByID), a user by id
// as v2 asks it (UserService GetUserByID: wherever the caller may read it, unless a header
// narrows it), and a user's changes (GraphQL `user { history }`, ListUserChanges). On a real
// gateway with the clients of test/support/wire-clients.ts, fetch for REST and GraphQL.
import { ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { WIRE_KINDS, wireTransport, zitadelClients, type WireKind } from './support/wire-clients.ts';

type Face = 'graphql' | 'rest' | WireKind;
const FACES: Face[] = ['graphql', 'rest', ...WIRE_KINDS];

type Answer = 'OK' | 'INVALID_ARGUMENT' | 'UNAUTHENTICATED' | 'PERMISSION_DENIED' | 'NOT_FOUND';
const CODE_NAMES: Record<number, Answer> = { 3: 'INVALID_ARGUMENT', 5: 'NOT_FOUND', 7: 'PERMISSION_DENIED', 16: 'UNAUTHENTICATED' };
// grpc-gateway's status per code (FAILED_PRECONDITION aside), written out independently of src/wire.
const REST_STATUS: Record<Answer, number> = {
  OK: 200,
  INVALID_ARGUMENT: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
};

type Question = 'user' | 'user v2' | 'changes';

interface Request {
  token: string | null;
  userId: string;
  headers: Record<string, string>;
  /** The changes' page size (ListUserChanges query.limit, history's first). */
  limit?: number;
}

let gw: TestGateway;
let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

/** What `face` answers to `question` asked with `r`: OK, or the error's code. */
async function ask(face: Face, question: Question, r: Request): Promise<Answer> {
  if (face === 'graphql') return askGraphQL(question, r);
  if (face === 'rest') return askRest(question, r);
  const c = zitadelClients(wireTransport(face, gw.baseUrl, r.token));
  const options = { headers: r.headers };
  try {
    if (question === 'user') await c.mgmt.getUserByID({ id: r.userId }, options);
    else if (question === 'user v2') await c.users.getUserByID({ userId: r.userId }, options);
    else await c.mgmt.listUserChanges({ userId: r.userId, query: { limit: r.limit ?? 0 } }, options);
    return 'OK';
  } catch (err) {
    const code = ConnectError.from(err).code;
    return CODE_NAMES[code] ?? (`code ${code}` as Answer);
  }
}

async function askRest(question: Question, r: Request): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...r.headers };
  if (r.token) headers.authorization = `Bearer ${r.token}`;
  const id = encodeURIComponent(r.userId);
  const res =
    question === 'changes'
      ? await fetch(`${gw.baseUrl}/management/v1/users/${id}/changes/_search`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query: { limit: r.limit ?? 0 } }),
        })
      : await fetch(`${gw.baseUrl}${question === 'user' ? '/management/v1/users/' : '/v2/users/'}${id}`, { headers });
  const body = (await res.json()) as { code?: number };
  const answer = res.ok ? 'OK' : (CODE_NAMES[body.code ?? -1] ?? (`code ${body.code}` as Answer));
  // grpc-gateway's status goes with the code.
  expect(res.status, `REST ${question}: ${JSON.stringify(body)}`).toBe(REST_STATUS[answer] ?? -1);
  return answer;
}

const USER = 'query User($id: ID!) { user(id: $id) { id } }';
const HISTORY = 'query History($id: ID!, $first: Int) { user(id: $id) { id history(first: $first) { totalCount } } }';

/** GraphQL: an error's code; a user that is null (the `user` query's "not there") is NOT_FOUND. */
async function askGraphQL(question: Question, r: Request): Promise<Answer> {
  const headers: Record<string, string> = { ...r.headers };
  if (r.token) headers.authorization = `Bearer ${r.token}`;
  const query = question === 'changes' ? HISTORY : USER;
  const variables = question === 'changes' ? { id: r.userId, first: r.limit ?? null } : { id: r.userId };
  const res = await gw.raw({ query, variables }, { authorization: '', ...headers });
  const code = res.errors?.[0]?.extensions?.code;
  if (code) return code as Answer;
  if (res.data?.user === null) return 'NOT_FOUND';
  expect(res.data?.user?.id, res.text).toBe(r.userId);
  return 'OK';
}

describe('one question, one answer, on all six faces', () => {
  const ids = { orgA: '', orgB: '', plain: '', viewerA: '', viewerAB: '', targetA: '', targetB: '' };
  const tokens = { plain: '', viewerA: '', viewerAB: '' };

  beforeAll(async () => {
    gw = await startGateway();
    const admin = zitadelClients(wireTransport('grpc', gw.baseUrl, gw.adminToken));
    ids.orgA = (await admin.orgs.addOrganization({ name: unique('Parity A ') })).organizationId;
    ids.orgB = (await admin.orgs.addOrganization({ name: unique('Parity B ') })).organizationId;
    const addUser = async (orgId: string) =>
      (
        await admin.users.addHumanUser({
          username: unique('parity'),
          organization: { org: { case: 'orgId', value: orgId } },
          profile: { givenName: 'Ada', familyName: 'Lovelace' },
          email: { email: `${unique('p')}@example.com`, verification: { case: 'isVerified', value: true } },
        })
      ).userId;
    const grant = (orgId: string, userId: string) =>
      admin.mgmt.addOrgMember({ userId, roles: ['ORG_USER_VIEWER'] }, { headers: { 'x-zitadel-orgid': orgId } });
    for (const name of ['plain', 'viewerA', 'viewerAB', 'targetA'] as const) ids[name] = await addUser(ids.orgA);
    ids.targetB = await addUser(ids.orgB);
    await grant(ids.orgA, ids.viewerA);
    await grant(ids.orgA, ids.viewerAB);
    await grant(ids.orgB, ids.viewerAB);
    for (const name of ['plain', 'viewerA', 'viewerAB'] as const) tokens[name] = await gw.tokenFor(ids[name]);
  });
  afterAll(async () => {
    await gw?.close();
  });

  interface Case {
    name: string;
    request: () => Request;
    /** The answer to every question, or per question. */
    then: Answer | Record<Question, Answer>;
    /** Only these questions (default: all three). */
    questions?: Question[];
  }
  const as =
    (token: keyof typeof tokens | null, userId: () => string, headers: Record<string, string> = {}) =>
    () => ({
      token: token ? tokens[token] : null,
      userId: userId(),
      headers,
    });

  const cases: Case[] = [
    { name: 'no token', request: as(null, () => ids.targetA), then: 'UNAUTHENTICATED' },
    { name: 'a forged token', request: () => ({ token: 'not.a.token', userId: ids.targetA, headers: {} }), then: 'UNAUTHENTICATED' },
    { name: 'a caller with no permission anywhere, a colleague', request: as('plain', () => ids.targetA), then: 'PERMISSION_DENIED' },
    { name: 'a caller with no permission anywhere, a missing user', request: as('plain', () => 'no-such-user'), then: 'PERMISSION_DENIED' },
    {
      name: 'a caller with no permission anywhere, a user of another organization',
      request: as('plain', () => ids.targetB),
      then: 'PERMISSION_DENIED',
    },
    {
      name: 'a header naming a foreign organization (x-zitadel-orgid)',
      request: () => as('viewerA', () => ids.targetB, { 'x-zitadel-orgid': ids.orgB })(),
      then: 'PERMISSION_DENIED',
    },
    {
      name: 'a header naming a foreign organization (x-service-orgid)',
      request: () => as('viewerA', () => ids.targetB, { 'x-service-orgid': ids.orgB })(),
      then: 'PERMISSION_DENIED',
    },
    {
      name: 'a header naming an organization that does not exist',
      request: as('viewerA', () => ids.targetA, { 'x-zitadel-orgid': 'no-such-org' }),
      then: 'PERMISSION_DENIED',
    },
    { name: 'a target in another organization the caller may not read', request: as('viewerA', () => ids.targetB), then: 'NOT_FOUND' },
    {
      name: 'a target in another organization the caller may read, the header naming it',
      request: () => as('viewerAB', () => ids.targetB, { 'x-zitadel-orgid': ids.orgB })(),
      then: 'OK',
    },
    {
      // The one place the questions differ by design: v2 finds a user wherever the caller may read
      // it; GraphQL's `user` and management's methods look in the acting organization only.
      name: 'a target in another organization the caller may read, no header',
      request: as('viewerAB', () => ids.targetB),
      then: { user: 'NOT_FOUND', 'user v2': 'OK', changes: 'NOT_FOUND' },
    },
    { name: 'a missing target, for a caller that reads users', request: as('viewerA', () => 'no-such-user'), then: 'NOT_FOUND' },
    { name: 'a readable target', request: as('viewerA', () => ids.targetA), then: 'OK' },
    { name: 'the caller itself, without any role', request: as('plain', () => ids.plain), then: 'OK' },
    {
      name: 'two organization headers naming different organizations',
      request: () => as('viewerA', () => ids.targetA, { 'x-service-orgid': ids.orgA, 'x-zitadel-orgid': ids.orgB })(),
      then: 'INVALID_ARGUMENT',
    },
    {
      name: 'two organization headers naming different organizations, without a token',
      request: () => as(null, () => ids.targetA, { 'x-service-orgid': ids.orgA, 'x-zitadel-orgid': ids.orgB })(),
      then: 'INVALID_ARGUMENT',
    },
    {
      name: 'two organization headers naming the same organization',
      request: () => as('viewerA', () => ids.targetA, { 'x-service-orgid': ids.orgA, 'x-zitadel-orgid': ids.orgA })(),
      then: 'OK',
    },
    {
      name: 'invalid input (a page of 101 changes)',
      request: () => ({ ...as('viewerA', () => ids.targetA)(), limit: 101 }),
      then: 'INVALID_ARGUMENT',
      questions: ['changes'],
    },
  ];

  const QUESTIONS: Question[] = ['user', 'user v2', 'changes'];
  for (const c of cases) {
    it(c.name, async () => {
      for (const question of c.questions ?? QUESTIONS) {
        const expected = typeof c.then === 'string' ? c.then : c.then[question];
        // GraphQL asks v2's question only where it is GraphQL's too (a header narrows v2 to one organization).
        const faces = question === 'user v2' && typeof c.then !== 'string' ? FACES.filter((f) => f !== 'graphql') : FACES;
        const answers = Object.fromEntries(
          await Promise.all(faces.map(async (face) => [face, await ask(face, question, c.request())] as const)),
        );
        expect({ question, answers }).toEqual({ question, answers: Object.fromEntries(faces.map((face) => [face, expected])) });
      }
    });
  }
});
