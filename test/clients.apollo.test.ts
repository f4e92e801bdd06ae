// The GraphQL face as Apollo Client 4 sees it (HttpLink on Node's fetch, InMemoryCache): a
// failure the gateway executed arrives as GraphQL errors carrying the error model's extensions
// (CombinedGraphQLErrors), never as a ServerError, which Apollo raises for any status >= 300
// on application/json and which would hide the code from the application.
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, ServerError } from '@apollo/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, MeDocument, UpdateMyProfileDocument, UserDocument } from './generated/graphql.ts';
import { humanInput, NO_SUCH_FIELD, recordingFetch, THREE_USERS, unique } from './support/clients.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

/** The first GraphQL error of a CombinedGraphQLErrors, failing the test on any other kind of error. */
function graphQLError(error: unknown) {
  expect(ServerError.is(error), String(error)).toBe(false);
  expect(CombinedGraphQLErrors.is(error), String(error)).toBe(true);
  return (error as CombinedGraphQLErrors).errors[0]!;
}

describe('Apollo Client 4 against the GraphQL face', () => {
  let gw: TestGateway;

  /** A client of its own cache calling as `token` (none: anonymous), with the wire recorded. */
  const clientAs = (token: string | null, accept?: string) => {
    const wire = recordingFetch();
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (accept) headers.accept = accept;
    const client = new ApolloClient({ link: new HttpLink({ uri: gw.url, fetch: wire.fetch, headers }), cache: new InMemoryCache() });
    return { client, wire };
  };

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('a mutation and a query succeed: addHumanUser, updateMyProfile as that user, and me/user read it back', async () => {
    const { client: admin, wire } = clientAs(gw.adminToken);
    const username = unique('apollo');
    const added = await admin.mutate({ mutation: AddHumanUserDocument, variables: { input: humanInput({ username }) as any } });
    expect(added.error).toBeUndefined();
    const userId = added.data!.addHumanUser.userId;
    expect(wire.last().status).toBe(200);

    const { client: self } = clientAs(await gw.tokenFor(userId));
    const updated = await self.mutate({
      mutation: UpdateMyProfileDocument,
      variables: { input: { firstName: 'Apollo', lastName: 'Client', displayName: 'Apollo C.' } },
    });
    expect(updated.data!.updateMyProfile.details.resourceOwner).toBe(gw.defaultOrgId);

    const me = await self.query({ query: MeDocument, fetchPolicy: 'network-only' });
    expect(me.data!.me).toMatchObject({ id: userId, username, profile: { firstName: 'Apollo', displayName: 'Apollo C.' } });
    const read = await admin.query({ query: UserDocument, variables: { id: userId }, fetchPolicy: 'network-only' });
    expect(read.data!.user).toMatchObject({ id: userId, username, profile: { lastName: 'Client' } });
    // The cache normalised the user by its id: the same object answers from the cache.
    const cached = await admin.query({ query: UserDocument, variables: { id: userId }, fetchPolicy: 'cache-only' });
    expect(cached.data!.user!.username).toBe(username);
  });

  it('a duplicate username is CombinedGraphQLErrors with ALREADY_EXISTS (httpStatus 409 in extensions), on an HTTP 200', async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const username = unique('dup');
    await client.mutate({ mutation: AddHumanUserDocument, variables: { input: humanInput({ username }) as any } });
    const error = await client.mutate({ mutation: AddHumanUserDocument, variables: { input: humanInput({ username }) as any } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const first = graphQLError(error);
    expect(first.extensions).toMatchObject({ code: 'ALREADY_EXISTS', grpcCode: 6, httpStatus: 409 });
    expect(first.path).toEqual(['addHumanUser']);
    expect(wire.last()).toMatchObject({ status: 200, accept: 'application/graphql-response+json,application/json;q=0.9' });
  });

  it("several mutation fields, the middle one failing (errorPolicy 'all'): the error names it, the first was done, the last did not run", async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const [idA, idC] = [unique('a-'), unique('c-')];
    const username = unique('three');
    const result = await client.mutate({
      mutation: THREE_USERS,
      variables: {
        a: humanInput({ userId: idA, username }),
        b: humanInput({ username }),
        c: humanInput({ userId: idC }),
      },
      errorPolicy: 'all',
    });
    expect(wire.last().status).toBe(200);
    const first = graphQLError(result.error);
    expect((result.error as CombinedGraphQLErrors).errors).toHaveLength(1);
    expect(first.path).toEqual(['b']);
    expect(first.extensions?.code).toBe('ALREADY_EXISTS');
    // The payloads are non-null, so the failed field nulls the whole of data (schema.graphql).
    expect(result.data ?? null).toBeNull();

    const a = await client.query({ query: UserDocument, variables: { id: idA }, fetchPolicy: 'network-only' });
    expect(a.data!.user).toMatchObject({ id: idA, username });
    const c = await client.query({ query: UserDocument, variables: { id: idC }, fetchPolicy: 'network-only' });
    expect(c.data!.user).toBeNull();
  });

  it('an invalid input is INVALID_ARGUMENT naming the field in its BadRequest details, on an HTTP 200 (the input rules run in the field)', async () => {
    const { client, wire } = clientAs(gw.adminToken);
    const error = await client
      .mutate({ mutation: AddHumanUserDocument, variables: { input: humanInput({ email: { email: 'not an address' } }) as any } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    const first = graphQLError(error);
    expect(first.extensions).toMatchObject({ code: 'INVALID_ARGUMENT', grpcCode: 3, httpStatus: 400 });
    const details = first.extensions!.details as { '@type': string; fieldViolations: { field: string }[] }[];
    expect(details[0]!['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    expect(details.flatMap((d) => d.fieldViolations.map((v) => v.field))).toEqual(['input.email.email']);
    expect(wire.last().status).toBe(200);
  });

  it("no token and a bad token: CombinedGraphQLErrors with UNAUTHENTICATED, 401 under Apollo's Accept (graphql-response+json), 200 under application/json", async () => {
    for (const [accept, status] of [
      [undefined, 401],
      ['application/json', 200],
    ] as const) {
      for (const token of [null, 'not-a-token']) {
        const { client, wire } = clientAs(token, accept);
        const error = await client.query({ query: MeDocument, fetchPolicy: 'network-only' }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(graphQLError(error).extensions).toMatchObject({ code: 'UNAUTHENTICATED', grpcCode: 16, httpStatus: 401 });
        expect(wire.last().status, `${accept ?? "Apollo's default Accept"}, token ${token}`).toBe(status);
      }
    }
  });

  it('a document that does not validate: GraphQL errors either way, 400 under graphql-response+json and 200 under application/json', async () => {
    for (const [accept, status] of [
      [undefined, 400],
      ['application/json', 200],
    ] as const) {
      const { client, wire } = clientAs(gw.adminToken, accept);
      const error = await client.query({ query: NO_SUCH_FIELD, fetchPolicy: 'network-only' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(graphQLError(error).extensions?.code).toBe('INVALID_ARGUMENT');
      expect(wire.last().status, accept ?? "Apollo's default Accept").toBe(status);
    }
  });
});
