// The request cost (src/graphql/cost.ts): counted with the page sizes the request asks for,
// literals or variables; the console's documented queries (docs/queries/console.graphql) pass
// at their largest pages with room; pages of pages and many federation representations are
// refused before anything runs.
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PAGE, MAX_COST, requestCost } from '../src/graphql/cost.ts';
import { buildSchema } from '../src/schema/index.ts';
import { onlyError, startGateway, type TestGateway } from './support/gateway.ts';

const consoleQueries = readFileSync(new URL('../docs/queries/console.graphql', import.meta.url), 'utf8');

describe('request cost', () => {
  let gw: TestGateway;
  let schema: ReturnType<typeof buildSchema>;
  beforeAll(async () => {
    gw = await startGateway();
    schema = buildSchema(gw.config);
  });
  afterAll(() => gw?.close());

  const cost = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
    requestCost(schema, parse(query), operationName, variables);

  it("the console's queries pass at their largest pages with room: at most half the limit", () => {
    const page = cost(consoleQueries, { first: 100 }, 'ConsoleUsers');
    const history = cost(consoleQueries, { id: '1', first: 100 }, 'ConsoleUserHistory');
    const user = cost(consoleQueries, { id: '1' }, 'ConsoleUser');
    for (const c of [page, history, user]) expect(c).toBeLessThanOrEqual(MAX_COST / 2);
    // A row of ConsoleUsers is 27 fields (edge, cursor and node included); the page adds users, totalCount and pageInfo's 5.
    expect(page).toBe(100 * 27 + 7);
    // The figures docs/graphql.md's request cost table gives.
    expect(history).toBe(100 * 15 + 7);
    expect(user).toBe(36);
  });

  it('a page size counts the same whether it is a literal or a variable; none given is the default page', () => {
    const byVariable = cost('query($n: Int) { users(first: $n) { edges { node { id username } } } }', { n: 100 });
    const byLiteral = cost('{ users(first: 100) { edges { node { id username } } } }');
    const byLast = cost('query($n: Int) { users(last: $n) { edges { node { id username } } } }', { n: 100 });
    expect(byVariable).toBe(byLiteral);
    expect(byLast).toBe(byLiteral);
    expect(byLiteral).toBe(1 + 100 * 4);
    expect(cost('{ users { edges { node { id username } } } }')).toBe(1 + DEFAULT_PAGE * 4);
    expect(cost('query($n: Int) { users(first: $n) { totalCount edges { node { id } } } }', { n: 10 })).toBe(1 + 1 + 10 * 3);
    // Beyond the largest page, counted at the largest (the field refuses it itself).
    expect(cost('{ users(first: 100000) { edges { node { id } } } }')).toBe(1 + 100 * 3);
  });

  it('a fragment counts where it is spread, in time linear in the document (a chain of doubling fragments)', () => {
    const chain = Array.from({ length: 40 }, (_, i) => `fragment F${i} on User { ...F${i + 1} ...F${i + 1} }`).join('\n');
    const query = `{ me { ...F0 } }\n${chain}\nfragment F40 on User { id }`;
    // Counted naively this is 2^40 walks; counted once per fragment it answers at once.
    expect(cost(query)).toBe(1 + 2 ** 40);
    const paged = `query($n: Int) { users(first: $n) { ...Page } } fragment Page on UserConnection { totalCount edges { ...Row } } fragment Row on UserEdge { node { id } }`;
    expect(cost(paged, { n: 50 })).toBe(1 + 1 + 50 * (1 + 2));
  });

  const graphqlResponse = { accept: 'application/graphql-response+json' };

  it('pages of pages over the limit are refused before anything runs: INVALID_ARGUMENT naming the cost (200 on application/json, 400 on application/graphql-response+json)', async () => {
    const query = 'query($n: Int) { users(first: $n) { edges { node { id history(first: 100) { edges { node { type } } } } } } }';
    const json = await gw.raw({ query, variables: { n: 100 } });
    expect(json.status, json.text).toBe(200);
    expect(json.data).toBeUndefined();
    const error = onlyError(json);
    expect(error.extensions?.code).toBe('INVALID_ARGUMENT');
    expect(error.extensions?.httpStatus).toBe(400);
    expect(error.message).toBe(
      `Invalid input: query: costs 30401, more than ${MAX_COST}: every field counts once per value, a page's edges once per item (first/last, 20 by default); ask for fewer items or fields`,
    );
    const strict = await gw.raw({ query, variables: { n: 100 } }, graphqlResponse);
    expect(strict.status, strict.text).toBe(400);
    // The same document with a smaller outer page passes, and runs.
    const small = await gw.raw({ query, variables: { n: 2 } });
    expect(small.status, small.text).toBe(200);
    expect(small.errors).toBeUndefined();
    expect(small.data.users.edges.length).toBeGreaterThan(0);
  });

  it('_entities counts once per representation: 50 users pass, 2,000 are refused', async () => {
    const query =
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on User { id username profile { firstName lastName } email { email } } } }';
    const reps = (n: number) => Array.from({ length: n }, () => ({ __typename: 'User', id: gw.adminId }));
    expect(cost(query, { r: reps(50) })).toBe(1 + 50 * 7);
    const few = await gw.raw({ query, variables: { r: reps(50) } });
    expect(few.errors).toBeUndefined();
    expect(few.data._entities).toHaveLength(50);
    const many = await gw.raw({ query, variables: { r: reps(2000) } });
    expect(many.data).toBeUndefined();
    expect(onlyError(many).message).toMatch(/^Invalid input: query: costs 14001, more than/);
  });

  it("the console's queries run through the gateway at their largest pages", async () => {
    for (const [operationName, variables] of [
      ['ConsoleUsers', { first: 100 }],
      ['ConsoleUser', { id: gw.adminId }],
      ['ConsoleUserHistory', { id: gw.adminId, first: 100 }],
    ] as const) {
      const res = await gw.raw({ query: consoleQueries, operationName, variables });
      expect(res.errors, `${operationName}: ${res.text.slice(0, 300)}`).toBeUndefined();
      expect(res.status).toBe(200);
    }
  });
});
