// Users as large as SPEC allows (20 metadata values of 500,000 characters: 10 MB each),
// end to end over HTTP on the embedded stores: a read of many of them is bounded by weight
// (READ_BUDGET_BYTES, 32 MB, src/commands/context.ts), not only by count. A users page ends
// early and says there is more; paging on still returns every user, whole. Federation
// representations asking for more, and a ListUsers page of the wire API (offset paging, where
// a short page would make clients skip users), answer RESOURCE_EXHAUSTED. Before the budget, one page of
// 100 such users held about 2 GB and its answer could not be written at all.
// (The stores' side, on SQLite, MongoDB-wire and memory: test/support/user-search-contract.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const VALUES = 20;
const CHARS = 500_000;
const value = (user: number, k: number) => Buffer.alloc((CHARS / 4) * 3, user * VALUES + k).toString('base64');

const USERS = `query Users($first: Int, $after: String, $last: Int, $before: String) {
  users(first: $first, after: $after, last: $last, before: $before, filter: { username: { value: "heavy.", op: PREFIX } }) {
    edges { node { id username metadata { key value } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
const ENTITIES = `query Entities($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on User { id metadata { key } } }
}`;

describe('users larger than the read budget', () => {
  let gw: TestGateway;
  const ids: string[] = [];

  beforeAll(async () => {
    gw = await startGateway();
    for (let i = 0; i < 4; i++) {
      const metadata = Array.from({ length: VALUES }, (_, k) => ({ key: `k${k}`, value: value(i, k) }));
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          username: `heavy.${i}`,
          profile: { firstName: 'Heavy', lastName: `User${i}` },
          email: { email: `heavy${i}@example.com`, isVerified: true },
          metadata,
        },
      });
      if (!res.data) throw new Error(res.text.slice(0, 500));
      ids.push(res.data.addHumanUser.userId);
    }
  });
  afterAll(async () => gw?.close());

  type Page = {
    edges: { node: { id: string; username: string; metadata: { key: string; value: string }[] } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };
  const page = async (variables: Record<string, unknown>): Promise<Page> => {
    const res = await gw.raw({ query: USERS, variables });
    expect(res.errors, res.text.slice(0, 500)).toBeUndefined();
    return res.data.users;
  };
  const whole = (p: Page) =>
    p.edges.map(({ node }) => {
      const i = Number(node.username.split('.')[1]);
      expect(node.metadata.map((m) => m.value)).toEqual(Array.from({ length: VALUES }, (_, k) => value(i, k)));
      return node.username;
    });

  it('a users page holds at most 32 MB of users: it ends early, says there is more, and paging on returns each user once, whole', async () => {
    const first = await page({ first: 10 });
    expect(whole(first)).toEqual(['heavy.0', 'heavy.1', 'heavy.2']); // 30 MB; a fourth would pass 32
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await page({ first: 10, after: first.pageInfo.endCursor });
    expect(whole(second)).toEqual(['heavy.3']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    const last = await page({ last: 10 });
    expect(whole(last)).toEqual(['heavy.1', 'heavy.2', 'heavy.3']);
    expect(last.pageInfo.hasPreviousPage).toBe(true);
    const before = await page({ last: 10, before: last.pageInfo.startCursor });
    expect(whole(before)).toEqual(['heavy.0']);
    expect(before.pageInfo.hasPreviousPage).toBe(false);
  });

  it('federation representations asking for more than 32 MB of users answer RESOURCE_EXHAUSTED; fewer are answered', async () => {
    const over = await gw.raw({ query: ENTITIES, variables: { representations: ids.map((id) => ({ __typename: 'User', id })) } });
    expect(over.errors?.length).toBeGreaterThan(0);
    expect(
      over.errors!.every((e) => e.extensions?.code === 'RESOURCE_EXHAUSTED'),
      over.text.slice(0, 500),
    ).toBe(true);
    expect(over.errors![0]!.message).toMatch(/more than 32 MB/);

    const within = await gw.raw({
      query: ENTITIES,
      variables: { representations: ids.slice(0, 3).map((id) => ({ __typename: 'User', id })) },
    });
    expect(within.errors).toBeUndefined();
    expect(within.data._entities.map((u: { id: string; metadata: unknown[] }) => [u.id, u.metadata.length])).toEqual(
      ids.slice(0, 3).map((id) => [id, VALUES]),
    );
  });
  it('ListUsers (the wire API, offset paging) answers a page cut short by the budget, or an offset past it, as RESOURCE_EXHAUSTED, and pages that fit whole', async () => {
    const list = async (query: Record<string, unknown>) => {
      const res = await fetch(`${gw.baseUrl}/v2/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
        body: JSON.stringify({
          query: { asc: true, ...query },
          sortingColumn: 'USER_FIELD_NAME_USER_NAME',
          queries: [{ userNameQuery: { userName: 'heavy.', method: 'TEXT_QUERY_METHOD_STARTS_WITH' } }],
        }),
      });
      return { status: res.status, json: (await res.json()) as { code?: number; message?: string; result?: { username: string }[] } };
    };
    // A client of an offset API would take 3 of 10 for a full page and skip the rest: refused instead.
    const cut = await list({ limit: 10 });
    expect(cut.json.code, JSON.stringify(cut.json).slice(0, 300)).toBe(8);
    expect(cut.json.message).toMatch(/more than 32 MB/);
    expect((await list({ limit: 3 })).json.result?.map((u) => u.username)).toEqual(['heavy.0', 'heavy.1', 'heavy.2']);
    // The users an offset skips are read too (the walk pages through them, each page with one
    // more to learn whether another follows): they count, so past 32 MB the walk is refused.
    expect((await list({ limit: 1, offset: 1 })).json.result?.map((u) => u.username)).toEqual(['heavy.1']); // 20 + 10 MB
    const skipped = await list({ limit: 1, offset: 2 }); // 30 MB skipped, then one more
    expect(skipped.json.code, JSON.stringify(skipped.json).slice(0, 300)).toBe(8);
  });
  it('one request cannot spend the budget twice: of two aliased pages one is refused; aliased reads of one user stop at it too', async () => {
    const page = (alias: string) =>
      `${alias}: users(first: 10, filter: { username: { value: "heavy.", op: PREFIX } }) { edges { node { username } } pageInfo { hasNextPage } }`;
    // (users is non-null: the refused one takes the whole answer's data with it.)
    const twice = await gw.raw({ query: `{ ${page('a')} ${page('b')} }` });
    expect(
      twice.errors?.map((e) => e.extensions?.code),
      twice.text.slice(0, 500),
    ).toEqual(['RESOURCE_EXHAUSTED']);
    const alone = await gw.raw({ query: `{ ${page('a')} }` });
    expect(alone.data.a.edges.map((e: { node: { username: string } }) => e.node.username)).toEqual(['heavy.0', 'heavy.1', 'heavy.2']);

    const each = ids.map((id, i) => `u${i}: user(id: "${id}") { id metadata { key } }`).join(' ');
    const aliased = await gw.raw({ query: `{ ${each} }` });
    const read = ids.filter((_, i) => aliased.data?.[`u${i}`]);
    expect(read.length, JSON.stringify(aliased.errors)).toBe(3); // 30 MB; the fourth would pass 32
    expect(aliased.errors?.map((e) => e.extensions?.code)).toEqual(['RESOURCE_EXHAUSTED']);
  });
});
