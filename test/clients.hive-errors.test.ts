// The gateway as a subgraph behind a Hive gateway: a failure of the subgraph reaches the
// supergraph's client with the subgraph's error model (extensions.code and the rest), on an
// HTTP 200 from the Hive gateway, whichever of the two media types the client asks for.
// extensions.http is not among what arrives: the Hive gateway (graphql-yoga) takes a subgraph
// error's extensions.http as its own, answering with its status and removing it from the error;
// that is why the status here is the test's point.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanInput, unique } from './support/clients.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { startHiveGateway, type HiveGateway } from './support/hive.ts';

const ADD_USER = 'mutation Add($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }';
const SET_PASSWORD = 'mutation Set($input: SetHumanPasswordInput!) { setHumanPassword(input: $input) { details { sequence } } }';
const USER = 'query User($id: ID!) { user(id: $id) { id username } }';

const ACCEPTS = ['application/json', 'application/graphql-response+json'];

describe('errors of the gateway as a subgraph, through an in-process Hive gateway', () => {
  let gw: TestGateway;
  let hive: HiveGateway;
  let admin: Record<string, string>;

  beforeAll(async () => {
    gw = await startGateway();
    hive = await startHiveGateway(gw);
    admin = { authorization: `Bearer ${gw.adminToken}` };
  });
  afterAll(async () => {
    await hive?.runtime.dispose();
    await gw?.close();
  });

  it('a mutation and a query succeed through the supergraph', async () => {
    const username = unique('hive');
    const added = await hive.post({ query: ADD_USER, variables: { input: humanInput({ username }) } }, admin);
    expect(added.body.errors).toBeUndefined();
    expect(added.status).toBe(200);
    const userId = added.body.data.addHumanUser.userId;
    const read = await hive.post({ query: USER, variables: { id: userId } }, admin);
    expect(read.body.data.user).toEqual({ id: userId, username });
  });

  it.each(ACCEPTS)(
    'a duplicate username: ALREADY_EXISTS with the subgraph’s extensions, the Hive gateway answering 200 (Accept: %s)',
    async (accept) => {
      const username = unique('dup');
      expect((await hive.post({ query: ADD_USER, variables: { input: humanInput({ username }) } }, admin)).body.errors).toBeUndefined();
      const again = await hive.post({ query: ADD_USER, variables: { input: humanInput({ username }) } }, { ...admin, accept });
      expect(again.body.errors, JSON.stringify(again.body)).toHaveLength(1);
      const [error] = again.body.errors!;
      expect(error!.extensions).toMatchObject({ code: 'ALREADY_EXISTS', grpcCode: 6, details: expect.any(Array), serviceName: 'identity' });
      expect(error!.path).toEqual(['addHumanUser']);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.contentType).toContain(accept);
    },
  );

  it('the subgraph itself answers the Hive gateway’s kind of request with 200, the REST status only inside the error', async () => {
    const username = unique('direct');
    expect((await gw.raw({ query: ADD_USER, variables: { input: humanInput({ username }) } })).errors).toBeUndefined();
    // The Accept the Hive gateway's HTTP transport sends to a subgraph.
    const res = await gw.raw(
      { query: ADD_USER, variables: { input: humanInput({ username }) } },
      { accept: 'application/graphql-response+json, application/json, multipart/mixed' },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'ALREADY_EXISTS', http: { status: 409 } });
  });

  it.each(ACCEPTS)(
    'an unknown user id: NOT_FOUND with the subgraph’s extensions, the Hive gateway answering 200 (Accept: %s)',
    async (accept) => {
      const res = await hive.post(
        { query: SET_PASSWORD, variables: { input: { userId: unique('nobody-'), password: 'Str0ng!pass-' } } },
        { ...admin, accept },
      );
      expect(res.body.errors, JSON.stringify(res.body)).toHaveLength(1);
      expect(res.body.errors![0]!.extensions).toMatchObject({
        code: 'NOT_FOUND',
        grpcCode: 5,
        details: expect.any(Array),
        serviceName: 'identity',
      });
      expect(res.body.errors![0]!.path).toEqual(['setHumanPassword']);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
  );

  it.each(ACCEPTS)(
    'a query of a user the caller may not read: PERMISSION_DENIED, the Hive gateway answering 200 (Accept: %s)',
    async (accept) => {
      const added = await hive.post({ query: ADD_USER, variables: { input: humanInput() } }, admin);
      const plain = { authorization: `Bearer ${await gw.tokenFor(added.body.data.addHumanUser.userId)}` };
      const res = await hive.post({ query: USER, variables: { id: gw.adminId } }, { ...plain, accept });
      expect(res.body.errors, JSON.stringify(res.body)).toHaveLength(1);
      expect(res.body.errors![0]!.extensions).toMatchObject({ code: 'PERMISSION_DENIED', grpcCode: 7, serviceName: 'identity' });
      expect(res.body.errors![0]!.path).toEqual(['user']);
      expect(res.body.data).toEqual({ user: null });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
  );

  it('no token: UNAUTHENTICATED from the subgraph, the Hive gateway answering 200', async () => {
    const res = await hive.post({ query: '{ me { id } }' }, { accept: 'application/json' });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', grpcCode: 16 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
