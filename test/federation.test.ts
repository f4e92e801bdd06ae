// The gateway as an Apollo Federation 2 subgraph: `_service { sdl }` with the
// entity keys, `_entities` batched into one store round trip and filtered by the
// read rules, and a supergraph (this subgraph + a small orders subgraph written
// here) composed with @theguild/federation-composition and served by an
// in-process Hive gateway that routes to both over HTTP.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, AddOIDCIdentityProviderDocument, AddOrganizationDocument, AddProjectDocument } from './generated/graphql.ts';
import { expectRestStatus, onlyError, startGateway, upstreamMode, type TestGateway } from './support/gateway.ts';
import type { UpstreamGateway } from '../src/upstream-gateway.ts';
import { describeWith } from './support/servers.ts';
import type { AggregateType, EventStore } from '../src/store/port.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on User { id username resourceOwner }
    ... on Organization { id name domain }
    ... on Project { id name }
    ... on IdentityProvider { id name issuer }
  }
}`;

/** The front gateway's upstream calls so far, by method (gateway_upstream_duration_seconds_count). */
async function upstreamCalls(front: UpstreamGateway): Promise<Record<string, number>> {
  const text = await front.metrics.render();
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_upstream_duration_seconds_count\{method="([^"]+)",code="[^"]+"\} (\d+)/gm))
    calls[m[1]!] = (calls[m[1]!] ?? 0) + Number(m[2]);
  return calls;
}

const callsSince = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).flatMap(([k, n]) => (n - (before[k] ?? 0) > 0 ? [[k, n - (before[k] ?? 0)]] : [])));

/**
 * Counts the calls reaching the real store: deps.store is replaced by a thin wrapper
 * around it (nothing mocked) until `restore`.
 */
function countStoreCalls(deps: { store: EventStore }) {
  const calls: {
    method: 'load' | 'loadMany';
    type: AggregateType;
    ids: string[];
  }[] = [];
  const real = deps.store;
  deps.store = new Proxy(real, {
    get(target, name) {
      if (name === 'load') {
        return (type: AggregateType, id: string) => {
          calls.push({ method: 'load', type, ids: [id] });
          return target.load(type, id);
        };
      }
      if (name === 'loadMany') {
        return (type: AggregateType, ids: readonly string[]) => {
          calls.push({ method: 'loadMany', type, ids: [...ids] });
          return target.loadMany(type, ids);
        };
      }
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    calls,
    restore() {
      deps.store = real;
    },
  };
}

function subgraphSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    const userIds: string[] = [];

    const addUser = async (extra: Record<string, unknown> = {}, opts = {}) => {
      const res = await gw.send(
        AddHumanUserDocument,
        {
          input: {
            profile: { firstName: 'Fed', lastName: 'Eration' },
            email: { email: `${unique('fed')}@example.com`, isVerified: true },
            ...extra,
          } as any,
        },
        opts,
      );
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser.userId;
    };
    const entities = (representations: object[], token?: string | null) =>
      gw.raw(
        { query: ENTITIES, variables: { representations } },
        token === undefined ? {} : token ? { authorization: `Bearer ${token}` } : { authorization: '' },
      );

    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      for (let i = 0; i < 5; i++) userIds.push(await addUser());
    });
    afterAll(async () => gw?.close());

    it('_service { sdl } is the checked-in subgraph.graphql, with @key(fields: "id") on the four entities and the federation v2 link', async () => {
      const res = await gw.raw({ query: '{ _service { sdl } }' });
      expect(res.errors).toBeUndefined();
      const sdl: string = res.data._service.sdl;
      expect(sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \[[^\]]*"@key"/);
      for (const type of ['User', 'Organization', 'Project', 'IdentityProvider']) {
        expect(sdl, type).toMatch(new RegExp(`type ${type}\\s+@key\\(fields: "id"\\)`));
      }
      expect(readFileSync('subgraph.graphql', 'utf8')).toBe(sdl + '\n');
    });

    it('_entities resolves a batch of 5 User representations with one store round trip for the users', async () => {
      if (gw.front) {
        // Upstream mode: one upstream call (ListUsers, an in-user-ids query) for the batch, none per entity.
        const before = await upstreamCalls(gw.front);
        const res = await entities(userIds.map((id) => ({ __typename: 'User', id })));
        expect(res.errors).toBeUndefined();
        expect(res.data._entities.map((e: any) => [e.__typename, e.id])).toEqual(userIds.map((id) => ['User', id]));
        const after = await upstreamCalls(gw.front);
        expect(callsSince(before, after)).toEqual({ ListUsers: 1 });
        return;
      }
      const spy = countStoreCalls(gw.gateway.deps);
      let res;
      try {
        res = await entities(userIds.map((id) => ({ __typename: 'User', id })));
      } finally {
        spy.restore();
      }
      expect(res.errors).toBeUndefined();
      expect(res.data._entities.map((e: any) => [e.__typename, e.id])).toEqual(userIds.map((id) => ['User', id]));
      expect(res.data._entities.every((e: any) => e.resourceOwner === gw.defaultOrgId)).toBe(true);

      const touchingRepresented = spy.calls.filter((c) => c.type === 'user' && c.ids.some((id) => userIds.includes(id)));
      // One read for them all, the caller's own user in the same find (src/commands/context.ts prefetch).
      expect(touchingRepresented).toEqual([{ method: 'loadMany', type: 'user', ids: [gw.adminId, ...userIds] }]);
      // The rest is the caller's authentication and the read rules: the same for any batch size.
      const single = countStoreCalls(gw.gateway.deps);
      try {
        expect((await entities([{ __typename: 'User', id: userIds[0] }])).errors).toBeUndefined();
      } finally {
        single.restore();
      }
      expect(spy.calls.length).toBe(single.calls.length);
      console.log(`store calls for 5 User representations: ${spy.calls.map((c) => `${c.method}(${c.type}×${c.ids.length})`).join(', ')}`);
    });

    it('representations of no entity type of this subgraph: INVALID_ARGUMENT naming each, with a token or without, and no error logged', async () => {
      const logged = gw.logs.length;
      for (const token of [undefined, null]) {
        const res = await entities(
          [{ __typename: 'User', id: userIds[0] }, { __typename: 'Nope', id: '1' }, { id: '2' }, { __typename: 'Query', id: '3' }],
          token,
        );
        expectRestStatus(res, 400, res.text);
        const err = onlyError(res);
        expect(err.extensions?.code).toBe('INVALID_ARGUMENT');
        expect((err.extensions?.details as any)[0].fieldViolations.map((v: { field: string }) => v.field)).toEqual([
          'representations.1.__typename',
          'representations.2.__typename',
          'representations.3.__typename',
        ]);
      }
      expect(gw.logs.slice(logged).filter((l) => l.includes('"level":"error"'))).toEqual([]);
    });

    it('a representation the caller may not see resolves to null; unknown ids too', async () => {
      const plainId = await addUser();
      const plainToken = await gw.tokenFor(plainId);
      const other = await gw.send(AddOrganizationDocument, {
        input: { name: unique('Other') },
      });
      const otherOrgId = other.data!.addOrganization.orgId;
      const outsider = await addUser({ organisation: { orgId: otherOrgId } });

      // A user without roles sees itself and its organization, nothing else.
      const res = await entities(
        [
          { __typename: 'User', id: plainId },
          { __typename: 'User', id: userIds[0] },
          { __typename: 'User', id: outsider },
          { __typename: 'Organization', id: gw.defaultOrgId },
          { __typename: 'Organization', id: otherOrgId },
        ],
        plainToken,
      );
      expect(res.errors).toBeUndefined();
      expect(res.data._entities.map((e: any) => e?.id ?? null)).toEqual([plainId, null, null, gw.defaultOrgId, null]);

      // The instance administrator sees everything that exists; an unknown id is null. Not through
      // a front in upstream mode: its one ListUsers (user v2) is instance-wide at ZITADEL, but this
      // gateway's wire face, the upstream here, answers it for the caller's organization.
      if (!upstreamMode) {
        const admin = await entities([
          { __typename: 'User', id: outsider },
          { __typename: 'Organization', id: otherOrgId },
          { __typename: 'User', id: 'no-such-user' },
        ]);
        expect(admin.errors).toBeUndefined();
        expect(admin.data._entities.map((e: any) => e?.id ?? null)).toEqual([outsider, otherOrgId, null]);
      }

      // x-service-orgid scopes users, projects and identity providers like the queries do.
      const scoped = await gw.raw(
        {
          query: ENTITIES,
          variables: {
            representations: [
              { __typename: 'User', id: outsider },
              { __typename: 'User', id: userIds[0] },
            ],
          },
        },
        { 'x-service-orgid': otherOrgId },
      );
      expect(scoped.data._entities.map((e: any) => e?.id ?? null)).toEqual([outsider, null]);

      // No token: UNAUTHENTICATED, as for every query.
      const anonymous = await entities([{ __typename: 'User', id: plainId }], null);
      expect(anonymous.data._entities).toEqual([null]);
      expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    });

    it('Project and IdentityProvider representations resolve for a caller with a role in their organization', async () => {
      const project = await gw.send(AddProjectDocument, {
        input: { name: unique('proj') },
      });
      const projectId = project.data!.addProject.projectId;
      const idp = await gw.send(AddOIDCIdentityProviderDocument, {
        input: {
          name: unique('idp'),
          issuer: 'https://issuer.example.com',
          clientId: 'client',
          clientSecret: 'secret',
        },
      });
      const idpId = idp.data!.addOIDCIdentityProvider.idpId;
      const res = await entities([
        { __typename: 'Project', id: projectId },
        { __typename: 'IdentityProvider', id: idpId },
      ]);
      expect(res.errors).toBeUndefined();
      expect(res.data._entities).toMatchObject([
        { __typename: 'Project', id: projectId },
        {
          __typename: 'IdentityProvider',
          id: idpId,
          issuer: 'https://issuer.example.com',
        },
      ]);
      const plainToken = await gw.tokenFor(await addUser());
      const hidden = await entities(
        [
          { __typename: 'Project', id: projectId },
          { __typename: 'IdentityProvider', id: idpId },
        ],
        plainToken,
      );
      expect(hidden.data._entities).toEqual([null, null]);
    });

    it('organization(id): the administrator reads any, a member its own; another is PERMISSION_DENIED', async () => {
      const query = 'query Org($id: ID!) { organization(id: $id) { id name domain details { sequence resourceOwner } } }';
      const res = await gw.raw({ query, variables: { id: gw.defaultOrgId } });
      expect(res.errors).toBeUndefined();
      expect(res.data.organization).toMatchObject({
        id: gw.defaultOrgId,
        name: 'Default',
        details: { resourceOwner: gw.defaultOrgId },
      });
      expect((await gw.raw({ query, variables: { id: 'no-such-org' } })).data.organization).toBeNull();

      const plainToken = await gw.tokenFor(await addUser());
      const own = await gw.raw({ query, variables: { id: gw.defaultOrgId } }, { authorization: `Bearer ${plainToken}` });
      expect(own.data.organization.id).toBe(gw.defaultOrgId);
      const otherOrgId = (
        await gw.send(AddOrganizationDocument, {
          input: { name: unique('Hidden') },
        })
      ).data!.addOrganization.orgId;
      for (const id of [otherOrgId, 'no-such-org']) {
        const denied = await gw.raw({ query, variables: { id } }, { authorization: `Bearer ${plainToken}` });
        expect(onlyError(denied).extensions?.code).toBe('PERMISSION_DENIED');
      }
    });
  });
}

subgraphSuite('federation subgraph on the embedded store', () => ({}));
describeWith('mongo', 'federation subgraph on MongoDB-wire', (mongoUrl) => {
  subgraphSuite('the same suite', () => ({
    MONGODB_URL: mongoUrl,
    MONGODB_DB: `fed_${Date.now()}`,
  }));
});

// A second subgraph, as another team would write it: orders of a user, and a Relay
// connection of them (so its PageInfo must compose with this subgraph's).
const ORDERS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@shareable"])
  type User @key(fields: "id") {
    id: ID!
    orders: [Order!]!
    orderPage(first: Int, after: String): OrderConnection!
  }
  type OrderConnection {
    pageInfo: PageInfo!
    nodes: [Order!]!
  }
  type PageInfo @shareable {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }
  type Order {
    id: ID!
    total: Int!
  }
`;

describe('supergraph: this subgraph composed with an orders subgraph, behind an in-process Hive gateway', () => {
  let gw: TestGateway;
  let ordersServer: Server;
  let ordersUrl: string;
  let runtime: GatewayRuntime;
  const ordersSaw: (string | null)[] = [];

  beforeAll(async () => {
    gw = await startGateway();
    const ordersSchema = buildSubgraphSchema({
      typeDefs: parse(ORDERS_SDL),
      resolvers: {
        User: {
          __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
          orders: (user: { id: string }) => [
            { id: `${user.id}-order-1`, total: 42 },
            { id: `${user.id}-order-2`, total: 7 },
          ],
        },
      } as any,
    });
    const ordersYoga = createYoga({
      schema: ordersSchema,
      logging: false,
      context: ({ request }) => {
        ordersSaw.push(request.headers.get('authorization'));
        return {};
      },
    });
    ordersServer = createServer(ordersYoga);
    await new Promise<void>((resolve) => ordersServer.listen(0, '127.0.0.1', () => resolve()));
    ordersUrl = `http://127.0.0.1:${(ordersServer.address() as AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    await runtime?.dispose();
    if (ordersServer) await new Promise<void>((resolve) => ordersServer.close(() => resolve()));
    await gw?.close();
  });

  it('composes, and `{ me { id username orders { id } } }` crosses both subgraphs with the Authorization header propagated', async () => {
    const sdl = (await gw.raw({ query: '{ _service { sdl } }' })).data._service.sdl as string;
    const composed = composeServices([
      { name: 'identity', typeDefs: parse(sdl), url: gw.url },
      { name: 'orders', typeDefs: parse(ORDERS_SDL), url: ordersUrl },
    ]);
    expect(composed.errors ?? []).toEqual([]);
    const supergraph = composed.supergraphSdl!;
    expect(supergraph).toContain(gw.url);
    expect(supergraph).toContain(ordersUrl);

    runtime = createGatewayRuntime({
      supergraph,
      logging: false,
      maskedErrors: false,
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization'),
        }),
      },
    });

    const identitySaw = countStoreCalls(gw.gateway.deps);
    let res: Response;
    try {
      res = await runtime.fetch('http://gateway.local/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${gw.adminToken}`,
        },
        body: JSON.stringify({ query: '{ me { id username orders { id } } }' }),
      });
    } finally {
      identitySaw.restore();
    }
    const body = (await res.json()) as any;
    expect(body.errors).toBeUndefined();
    expect(body.data.me).toEqual({
      id: gw.adminId, // from the identity subgraph
      username: 'admin',
      orders: [{ id: `${gw.adminId}-order-1` }, { id: `${gw.adminId}-order-2` }], // from the orders subgraph
    });
    // The identity subgraph authenticated the caller from the propagated header (it loaded the admin user).
    expect(identitySaw.calls.some((c) => c.method === 'load' && c.type === 'user' && c.ids[0] === gw.adminId)).toBe(true);
    expect(ordersSaw).toContain(`Bearer ${gw.adminToken}`);

    // Without the header the identity subgraph refuses, through the supergraph too.
    const anonymous = (await (
      await runtime.fetch('http://gateway.local/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ me { id } }' }),
      })
    ).json()) as any;
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
