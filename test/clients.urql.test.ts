// The GraphQL face as urql 6 sees it (@urql/core Client with fetchExchange, POST only): a
// failure the gateway executed is a CombinedError whose graphQLErrors carry the error model's
// extensions and whose networkError is undefined. urql reads a body of any status, so the
// statuses are asserted on the wire (recordingFetch): what graphql-response+json, which urql
// asks for first, and application/json each answer.
import { Client, fetchExchange, type CombinedError } from '@urql/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, MeDocument, UpdateMyProfileDocument, UserDocument } from './generated/graphql.ts';
import { humanInput, NO_SUCH_FIELD, recordingFetch, THREE_USERS, unique } from './support/clients.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

/** The first GraphQL error of a result's CombinedError, which must be no network error. */
function graphQLError(error: CombinedError | undefined) {
  expect(error, 'an error').toBeDefined();
  expect(error!.networkError, error!.message).toBeUndefined();
  expect(error!.graphQLErrors.length, error!.message).toBeGreaterThan(0);
  return error!.graphQLErrors[0]!;
}

describe('urql 6 against the GraphQL face', () => {
  let gw: TestGateway;

  /** A client calling as `token` (none: anonymous), with the wire recorded; `accept` replaces urql's own. */
  const clientAs = (token: string | null, accept?: string) => {
    const wire = recordingFetch();
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (accept) headers.accept = accept;
    const client = new Client({
      url: gw.url,
      exchanges: [fetchExchange],
      fetch: wire.fetch,
      fetchOptions: { headers },
      preferGetMethod: false,
    });
    return { client, wire };
  };

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('a mutation and a query succeed, sent as POST with graphql-response+json asked first', async () => {
    const { client: admin, wire } = clientAs(gw.adminToken);
    const username = unique('urql');
    const added = await admin.mutation(AddHumanUserDocument, { input: humanInput({ username }) as any }).toPromise();
    expect(added.error).toBeUndefined();
    const userId = added.data!.addHumanUser.userId;
    expect(wire.last().accept).toMatch(/^application\/graphql-response\+json, /);
    expect(wire.last()).toMatchObject({ status: 200, contentType: expect.stringContaining('application/graphql-response+json') });

    const { client: self } = clientAs(await gw.tokenFor(userId));
    const updated = await self
      .mutation(UpdateMyProfileDocument, { input: { firstName: 'Urql', lastName: 'Client', displayName: 'Urql C.' } })
      .toPromise();
    expect(updated.error).toBeUndefined();
    const me = await self.query(MeDocument, {}).toPromise();
    expect(me.data!.me).toMatchObject({ id: userId, username, profile: { firstName: 'Urql' } });
    const read = await admin.query(UserDocument, { id: userId }).toPromise();
    expect(read.data!.user).toMatchObject({ id: userId, username, profile: { lastName: 'Client' } });
  });

  it('a duplicate username: graphQLErrors[0] is ALREADY_EXISTS (httpStatus 409 in extensions), the answer 200', async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const username = unique('dup');
    expect((await client.mutation(AddHumanUserDocument, { input: humanInput({ username }) as any }).toPromise()).error).toBeUndefined();
    const again = await client.mutation(AddHumanUserDocument, { input: humanInput({ username }) as any }).toPromise();
    const first = graphQLError(again.error);
    expect(first.extensions).toMatchObject({ code: 'ALREADY_EXISTS', grpcCode: 6, httpStatus: 409 });
    expect(first.path).toEqual(['addHumanUser']);
    expect(again.data ?? null).toBeNull();
    expect(wire.last().status).toBe(200);
  });

  it('several mutation fields, the middle one failing: the error names it, the first was done, the last did not run', async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const [idA, idC] = [unique('a-'), unique('c-')];
    const username = unique('three');
    const result = await client
      .mutation(THREE_USERS, { a: humanInput({ userId: idA, username }), b: humanInput({ username }), c: humanInput({ userId: idC }) })
      .toPromise();
    expect(wire.last().status).toBe(200);
    const first = graphQLError(result.error);
    expect(result.error!.graphQLErrors).toHaveLength(1);
    expect(first.path).toEqual(['b']);
    expect(first.extensions.code).toBe('ALREADY_EXISTS');
    // The payloads are non-null, so the failed field nulls the whole of data (schema.graphql).
    expect(result.data ?? null).toBeNull();

    expect((await client.query(UserDocument, { id: idA }).toPromise()).data!.user).toMatchObject({ id: idA, username });
    expect((await client.query(UserDocument, { id: idC }).toPromise()).data!.user).toBeNull();
  });

  it('an invalid input is INVALID_ARGUMENT naming the field in its BadRequest details', async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const res = await client
      .mutation(AddHumanUserDocument, { input: humanInput({ email: { email: 'not an address' } }) as any })
      .toPromise();
    const first = graphQLError(res.error);
    expect(first.extensions).toMatchObject({ code: 'INVALID_ARGUMENT', grpcCode: 3, httpStatus: 400 });
    const details = first.extensions.details as { '@type': string; fieldViolations: { field: string }[] }[];
    expect(details[0]!['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    expect(details.flatMap((d) => d.fieldViolations.map((v) => v.field))).toEqual(['input.email.email']);
    expect(wire.last().status).toBe(200);
  });

  it("no token and a bad token: UNAUTHENTICATED in graphQLErrors, 401 under urql's Accept (graphql-response+json), 200 under application/json", async () => {
    for (const [accept, status] of [
      [undefined, 401],
      ['application/json', 200],
    ] as const) {
      for (const token of [null, 'not-a-token']) {
        const { client, wire } = clientAs(token, accept);
        const res = await client.query(MeDocument, {}).toPromise();
        expect(graphQLError(res.error).extensions).toMatchObject({ code: 'UNAUTHENTICATED', grpcCode: 16, httpStatus: 401 });
        expect(wire.last().status, `${accept ?? "urql's default Accept"}, token ${token}`).toBe(status);
      }
    }
  });

  it("a document that does not validate: 400 with urql's Accept (graphql-response+json), 200 with application/json; graphQLErrors both times", async () => {
    for (const [accept, status, contentType] of [
      [undefined, 400, 'application/graphql-response+json'],
      ['application/json', 200, 'application/json'],
    ] as const) {
      const { client, wire } = clientAs(gw.adminToken, accept);
      const res = await client.query(NO_SUCH_FIELD, {}).toPromise();
      expect(graphQLError(res.error).extensions.code).toBe('INVALID_ARGUMENT');
      expect(wire.last(), accept ?? "urql's default Accept").toMatchObject({ status, contentType: expect.stringContaining(contentType) });
    }
  });
});
