// `history` on User, Organization, Project and IdentityProvider end to end over HTTP
// (src/commands/history.ts, src/model/history.ts), on the embedded stores and on
// MongoDB-wire + Redis: order, editors, Relay paging, cursors, redaction, permissions.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOIDCIdentityProviderDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  AddProjectDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UpdateOIDCIdentityProviderDocument,
} from './generated/graphql.ts';
import { embeddedOnly, onlyError, startGateway, upstreamMode, upstreamOnly, type Response, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { metric } from './support/slow-peers.ts';
import type { IdentityProvider } from '../src/model/idps.ts';
import type { User } from '../src/model/users.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Ada', lastName: 'Lovelace' };

const CONNECTION = `totalCount
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  edges { cursor node { type sequence createdAt editorId editor { id username } changes { field value } } }`;
const PAGE_VARS = '$first: Int, $after: String, $last: Int, $before: String';
const PAGE_ARGS = 'first: $first, after: $after, last: $last, before: $before';
const USER_HISTORY = `query UserHistory($id: ID!, ${PAGE_VARS}) { user(id: $id) { id history(${PAGE_ARGS}) { ${CONNECTION} } } }`;
const MY_HISTORY = `query MyHistory { me { history { ${CONNECTION} } } }`;
const ORG_HISTORY = `query OrgHistory($id: ID!, ${PAGE_VARS}) { organization(id: $id) { history(${PAGE_ARGS}) { ${CONNECTION} } } }`;
const PROJECT_HISTORY = `query ProjectHistory($id: ID!) { project(id: $id) { history { ${CONNECTION} } } }`;
const IDP_HISTORY = `query IdpHistory($id: ID!) { identityProvider(id: $id) { history { ${CONNECTION} } } }`;

interface Edge {
  cursor: string;
  node: {
    type: string;
    sequence: string;
    createdAt: string;
    editorId: string;
    editor: { id: string; username: string } | null;
    changes: { field: string; value: string | null }[];
  };
}
interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: Edge[];
}
type Page = { first?: number; after?: string; last?: number; before?: string };

const changes = (edge: Edge) => Object.fromEntries(edge.node.changes.map((c) => [c.field, c.value]));

function historySuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    /** Every history response text, and every secret this suite sent or the store holds: none may come back. */
    const seen: string[] = [];
    const secrets = new Set<string>();

    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const ok = <T>(res: Response<T>): T => {
      expect(res.errors, res.text).toBeUndefined();
      return res.data!;
    };
    const errorCode = (res: Response<unknown>) => onlyError(res).extensions?.code;
    const store = () => gw.gateway.deps.store;
    const ask = async (query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await gw.raw({ query, variables }, headers);
      seen.push(res.text);
      return res;
    };
    const as = async (userId: string) => ({ authorization: `Bearer ${await gw.tokenFor(userId)}` });
    const userHistory = async (id: string, page: Page = {}, headers: Record<string, string> = {}): Promise<Connection> =>
      ok(await ask(USER_HISTORY, { id, ...page }, headers)).user.history;

    const addUser = async (extra: Record<string, unknown> = {}, opts = {}) => {
      const res = await gw.send(
        AddHumanUserDocument,
        { input: { profile, email: { email: `${unique('h')}@example.com`, returnCode: true }, ...extra } as any },
        opts,
      );
      const added = ok(res).addHumanUser;
      if (added.emailCode) secrets.add(added.emailCode);
      return added.userId;
    };
    const usernameOf = async (id: string) => (await store().load<User>('user', id))!.state.username;
    const grant = async (userId: string, roles: string[], orgId = gw.defaultOrgId) =>
      ok(await gw.send(AddOrgMemberDocument, { input: { userId, roles } }, { orgId }));

    /** A user with four events: created by the admin, its profile changed by itself, email and password set by the admin. */
    async function userWithFourEvents() {
      const password = 'Secr3t!pass-history';
      const metadataValue = Buffer.from('metadata-value-not-for-history').toString('base64');
      secrets.add(password).add(metadataValue);
      const userId = await addUser({ metadata: [{ key: 'team', value: metadataValue }] });
      ok(
        await gw.send(
          UpdateMyProfileDocument,
          { input: { firstName: 'Augusta', lastName: 'King', displayName: 'Ada K.' } },
          { token: await gw.tokenFor(userId) },
        ),
      );
      const email = ok(await gw.send(SetEmailDocument, { input: { userId, email: `${unique('new')}@example.com`, returnCode: true } }));
      secrets.add(email.setEmail.verificationCode!);
      ok(await gw.send(SetHumanPasswordDocument, { input: { userId, password } }));
      secrets.add((await store().load<User>('user', userId))!.state.passwordHash!);
      return userId;
    }

    it("lists a user's four events newest first, with who made each change", async () => {
      const userId = await userWithFourEvents();
      const history = await userHistory(userId);
      expect(history.totalCount).toBe(4);
      expect(history.edges.map((e) => [e.node.type, e.node.sequence])).toEqual([
        ['user.password.changed', '4'],
        ['user.email.changed', '3'],
        ['user.profile.changed', '2'],
        ['user.added', '1'],
      ]);
      const admin = { id: gw.adminId, username: await usernameOf(gw.adminId) };
      const self = { id: userId, username: await usernameOf(userId) };
      expect(history.edges.map((e) => [e.node.editorId, e.node.editor])).toEqual([
        [admin.id, admin],
        [admin.id, admin],
        [self.id, self],
        [admin.id, admin],
      ]);
      if (upstreamMode) {
        // ZITADEL's Change carries no payload: the fields these events set are not known (src/upstream/history.ts).
        expect(history.edges.map(changes)).toEqual([{}, {}, {}, {}]);
      } else {
        const [password, email, changedProfile, added] = history.edges.map(changes);
        expect(password).toEqual({ password: null, passwordChangeRequired: 'true' });
        expect(email).toMatchObject({ 'email.isVerified': 'false' });
        expect(changedProfile).toMatchObject({ 'profile.firstName': 'Augusta', 'profile.displayName': 'Ada K.', 'profile.nickName': null });
        expect(added).toMatchObject({ 'profile.firstName': 'Ada', metadata: '["team"]', username: self.username });
      }
      expect(history.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      for (const edge of history.edges) expect(new Date(edge.node.createdAt).getTime()).toBeGreaterThan(Date.now() - 120_000);

      // The user itself reads it too.
      const mine = ok(await ask(MY_HISTORY, {}, await as(userId))).me.history;
      expect(mine.edges.map((e: Edge) => e.node.sequence)).toEqual(['4', '3', '2', '1']);
    });

    it(
      'reads a page with one read of the snapshot and one range read',
      embeddedOnly("it counts the reads of the upstream's store, where the front's GetUserByID and ListUserChanges each read the user"),
      async () => {
        const userId = await addUser();
        const deps = gw.gateway.deps;
        const real = deps.store;
        const calls: { method: string; args: unknown[] }[] = [];
        deps.store = new Proxy(real, {
          get(target, method) {
            const value = Reflect.get(target, method);
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => (calls.push({ method: String(method), args }), value.apply(target, args));
          },
        });
        try {
          expect((await userHistory(userId, { first: 1 })).edges).toHaveLength(1);
        } finally {
          deps.store = real;
        }
        const touching = calls.filter(({ args }) => args[0] === 'user' && [args[1]].flat().includes(userId));
        expect(touching.map((c) => c.method).sort()).toEqual(['eventRange', expect.stringMatching(/^load(Many)?$/)]);
        expect(calls.filter((c) => c.method === 'eventRange' || c.method === 'events')).toHaveLength(1);
      },
    );

    it('pages with first/after and last/before through a longer history, each event once', async () => {
      const userId = await addUser();
      for (let i = 1; i <= 11; i++)
        ok(await gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: `Ada${i}`, lastName: 'Lovelace' } }));
      const all = Array.from({ length: 12 }, (_, i) => String(12 - i));

      const forward: string[] = [];
      let page = await userHistory(userId, { first: 5 });
      for (;;) {
        expect(page.totalCount).toBe(12);
        forward.push(...page.edges.map((e) => e.node.sequence));
        expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null);
        expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
        if (!page.pageInfo.hasNextPage) break;
        page = await userHistory(userId, { first: 5, after: page.pageInfo.endCursor! });
        expect(page.pageInfo.hasPreviousPage).toBe(true);
      }
      expect(forward).toEqual(all);

      const backward: string[][] = [];
      page = await userHistory(userId, { last: 5 });
      expect(page.edges.map((e) => e.node.sequence)).toEqual(['5', '4', '3', '2', '1']);
      for (;;) {
        backward.unshift(page.edges.map((e) => e.node.sequence));
        if (!page.pageInfo.hasPreviousPage) break;
        page = await userHistory(userId, { last: 5, before: page.pageInfo.startCursor! });
        expect(page.pageInfo.hasNextPage).toBe(true);
      }
      expect(backward.flat()).toEqual(all);

      // Both cursors: the events between them; no arguments: the 20 newest.
      const [eleventh, oldest] = [(await userHistory(userId, { first: 2 })).edges[1]!, (await userHistory(userId, { last: 1 })).edges[0]!];
      const between = await userHistory(userId, { after: eleventh.cursor, before: oldest.cursor });
      expect(between.edges.map((e) => e.node.sequence)).toEqual(['10', '9', '8', '7', '6', '5', '4', '3', '2']);
      // Paging forward inside a window bounded by `before`: a next page only while the window has more.
      expect(between.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
      const tenth = (await userHistory(userId, { first: 3 })).edges[2]!;
      const newestTwo = await userHistory(userId, { first: 2, before: tenth.cursor });
      expect(newestTwo.edges.map((e) => e.node.sequence)).toEqual(['12', '11']);
      expect(newestTwo.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
      const newestOne = await userHistory(userId, { first: 1, before: tenth.cursor });
      expect(newestOne.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
      expect((await userHistory(userId)).edges).toHaveLength(12);
      expect((await userHistory(userId, { first: 0 })).edges).toEqual([]);
    });

    it('refuses a cursor of another user, of another type, or garbage, first or last over 100, and both: INVALID_ARGUMENT', async () => {
      const [a, b] = [await addUser(), await addUser()];
      const cursorOfB = (await userHistory(b)).edges[0]!.cursor;
      const orgCursor = ok(await ask(ORG_HISTORY, { id: gw.defaultOrgId, first: 1 })).organization.history.edges[0].cursor;
      const refused: [Page, string][] = [
        [{ after: cursorOfB }, 'after'],
        [{ before: cursorOfB }, 'before'],
        [{ after: orgCursor }, 'after'],
        [{ after: 'not-a-cursor' }, 'after'],
        [{ after: Buffer.from(JSON.stringify(['user', a, 99])).toString('base64url') }, 'after'],
        [{ first: 101 }, 'first'],
        [{ last: 101 }, 'last'],
        [{ first: -1 }, 'first'],
        [{ first: 1, last: 1 }, 'last'],
      ];
      for (const [page, field] of refused) {
        const res = await ask(USER_HISTORY, { id: a, ...page });
        const error = onlyError(res);
        expect(error.extensions?.code, JSON.stringify(page)).toBe('INVALID_ARGUMENT');
        expect(error.path).toEqual(['user', 'history']);
        expect(JSON.stringify(error.extensions?.details)).toContain(`"field":"${field}"`);
        expect(res.data?.user).toEqual({ id: a, history: null });
      }
      expect((await userHistory(a, { first: 100 })).edges).toHaveLength(1);
    });

    it('permissions: the user itself, user.read in its organization (ORG_USER_VIEWER, instance roles); others are refused', async () => {
      const target = await userWithFourEvents();

      const viewer = await addUser();
      await grant(viewer, ['ORG_USER_VIEWER']);
      expect((await userHistory(target, {}, await as(viewer))).totalCount).toBe(4);

      // A role in the organization without user.read reads neither the user nor its history.
      const creator = await addUser();
      await grant(creator, ['ORG_PROJECT_CREATOR']);
      const denied = await ask(USER_HISTORY, { id: target }, await as(creator));
      expect(errorCode(denied)).toBe('PERMISSION_DENIED');
      expect(denied.data?.user).toBeNull();

      // A user of another organization without a role: PERMISSION_DENIED in its own organization
      // (it may read no other user there, so it learns nothing of the id) and in the target's.
      const otherOrg = ok(await gw.send(AddOrganizationDocument, { input: { name: unique('Other ') } })).addOrganization.orgId;
      const outsider = await addUser({ organisation: { orgId: otherOrg } });
      const own = await ask(USER_HISTORY, { id: target }, await as(outsider));
      expect(errorCode(own)).toBe('PERMISSION_DENIED');
      const named = await ask(USER_HISTORY, { id: target }, { ...(await as(outsider)), 'x-service-orgid': gw.defaultOrgId });
      expect(errorCode(named)).toBe('PERMISSION_DENIED');
      // An ORG_OWNER elsewhere holds user.read only there.
      await grant(outsider, ['ORG_OWNER'], otherOrg);
      expect(errorCode(await ask(USER_HISTORY, { id: target }, { ...(await as(outsider)), 'x-service-orgid': gw.defaultOrgId }))).toBe(
        'PERMISSION_DENIED',
      );

      // The editor of an event is null for a reader who may not see that user (the admin, for a
      // user of another organization reading its own history); its id stays.
      const mine = ok(await ask(MY_HISTORY, {}, await as(outsider))).me.history;
      expect(mine.edges.at(-1)).toMatchObject({ node: { type: 'user.added', editorId: gw.adminId, editor: null } });

      const anonymous = await ask(USER_HISTORY, { id: target }, { authorization: '' });
      expect(errorCode(anonymous)).toBe('UNAUTHENTICATED');
    });

    it('lists the events of an organization, a project and an identity provider', async () => {
      const defaultOrg = ok(await ask(ORG_HISTORY, { id: gw.defaultOrgId, last: 1 })).organization.history;
      expect(defaultOrg.edges[0].node).toMatchObject({ type: 'org.added', sequence: '1', editorId: 'system', editor: null });

      const orgId = ok(await gw.send(AddOrganizationDocument, { input: { name: unique('Hist ') } })).addOrganization.orgId;
      const member = await addUser({ organisation: { orgId } });
      await grant(member, ['ORG_OWNER'], orgId);
      const org: Connection = ok(await ask(ORG_HISTORY, { id: orgId })).organization.history;
      expect(org.totalCount).toBe(2);
      expect(org.edges.map((e) => [e.node.type, e.node.editorId])).toEqual([
        ['org.member.added', gw.adminId],
        ['org.added', gw.adminId],
      ]);
      // Upstream, ZITADEL's Change carries no payload: what the event set is not known.
      expect(changes(org.edges[0]!)).toEqual(upstreamMode ? {} : { 'member.userId': member, 'member.roles': '["ORG_OWNER"]' });
      // Whoever reads the organization reads its history: its member here.
      expect(ok(await ask(ORG_HISTORY, { id: orgId }, await as(member))).organization.history.totalCount).toBe(2);

      const projectName = unique('proj');
      const projectId = ok(await gw.send(AddProjectDocument, { input: { name: projectName } })).addProject.projectId;
      const project: Connection = ok(await ask(PROJECT_HISTORY, { id: projectId })).project.history;
      expect(project.edges.map((e) => [e.node.type, changes(e)])).toEqual([['project.added', upstreamMode ? {} : { name: projectName }]]);

      const [first, second] = ['oidc-secret-first-value', 'oidc-secret-second-value'];
      secrets.add(first).add(second);
      const oidc = { issuer: 'https://issuer.example.com', clientId: 'client-a', scopes: ['openid'] };
      const idpId = ok(await gw.send(AddOIDCIdentityProviderDocument, { input: { name: unique('idp'), ...oidc, clientSecret: first } }))
        .addOIDCIdentityProvider.idpId;
      ok(await gw.send(UpdateOIDCIdentityProviderDocument, { input: { idpId, ...oidc, clientId: 'client-b', clientSecret: second } }));
      secrets.add((await store().load<IdentityProvider>('idp', idpId))!.state.clientSecret!);
      if (upstreamMode) {
        // ZITADEL has no change list of an organization's identity providers.
        const refused = await ask(IDP_HISTORY, { id: idpId });
        expect(errorCode(refused)).toBe('FAILED_PRECONDITION');
        expect(onlyError(refused).path).toEqual(['identityProvider', 'history']);
        return;
      }
      const idp: Connection = ok(await ask(IDP_HISTORY, { id: idpId })).identityProvider.history;
      expect(idp.edges.map((e) => e.node.type)).toEqual(['idp.oidc.changed', 'idp.oidc.added']);
      expect(changes(idp.edges[0]!)).toMatchObject({ clientId: 'client-b', clientSecret: null });
      expect(changes(idp.edges[1]!)).toMatchObject({ clientId: 'client-a', clientSecret: null, scopes: '["openid"]' });
    });

    it(
      'upstream mode: a page of a user is one ListUserChanges call, beside the reads of its parent',
      upstreamOnly('a page of a user is one ListUserChanges call'),
      async () => {
        const userId = await addUser();
        const calls = () =>
          Promise.all(
            ['ListUserChanges', 'GetUserByID', 'GetMyUser'].map((method) =>
              metric(`${gw.baseUrl}/metrics`, 'gateway_upstream_duration_seconds_count', { method, code: 'OK' }),
            ),
          );
        const delta = async (work: () => Promise<unknown>) => {
          const before = await calls();
          await work();
          return (await calls()).map((n, i) => n - before[i]!);
        };
        const parentOnly = await delta(async () => ok(await ask('query ($id: ID!) { user(id: $id) { id } }', { id: userId })));
        const withHistory = await delta(async () => expect((await userHistory(userId, { first: 1 })).edges).toHaveLength(1));
        expect(withHistory).toEqual([1, parentOnly[1], parentOnly[2]]);
        expect(parentOnly[0]).toBe(0);
      },
    );

    it('shows no secret in any answer: passwords, their hashes, codes, metadata values, client secrets', () => {
      expect(secrets.size).toBeGreaterThanOrEqual(10);
      const text = seen.join('\n');
      for (const secret of secrets) expect(text.includes(secret), `a secret came back (${secret.slice(0, 3)}…)`).toBe(false);
    });
  });
}

historySuite('history on the embedded stores', () => ({}));
describeWith('mongo', 'history on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    historySuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `history_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});

// The editor is a User entity: a supergraph adds other subgraphs' fields to it (here: orders).
describe('history in a supergraph', () => {
  it("resolves an event's editor across subgraphs", async () => {
    const gw = await startGateway();
    const ordersSdl = `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
      type User @key(fields: "id") { id: ID! orders: [Order!]! }
      type Order { id: ID! }`;
    const orders = buildSubgraphSchema({
      typeDefs: parse(ordersSdl),
      resolvers: {
        User: { __resolveReference: (ref: { id: string }) => ref, orders: (u: { id: string }) => [{ id: `${u.id}-order` }] },
      } as any,
    });
    const server = createServer(createYoga({ schema: orders, logging: false }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const ordersUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const sdl = (await gw.raw({ query: '{ _service { sdl } }' })).data._service.sdl as string;
    const composed = composeServices([
      { name: 'identity', typeDefs: parse(sdl), url: gw.url },
      { name: 'orders', typeDefs: parse(ordersSdl), url: ordersUrl },
    ]);
    const runtime = createGatewayRuntime({
      supergraph: composed.supergraphSdl!,
      logging: false,
      propagateHeaders: { fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }) },
    });
    try {
      expect(composed.errors ?? []).toEqual([]);
      const userId = (await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `${unique('fed')}@example.com` } } })).data!
        .addHumanUser.userId;
      const res = await runtime.fetch('http://gateway.local/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
        body: JSON.stringify({
          query: 'query ($id: ID!) { user(id: $id) { history { edges { node { editorId editor { id username orders { id } } } } } } }',
          variables: { id: userId },
        }),
      });
      const body = (await res.json()) as any;
      expect(body.errors).toBeUndefined();
      expect(body.data.user.history.edges).toEqual([
        { node: { editorId: gw.adminId, editor: { id: gw.adminId, username: 'admin', orders: [{ id: `${gw.adminId}-order` }] } } },
      ]);
    } finally {
      await runtime.dispose();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gw.close();
    }
  });
});
