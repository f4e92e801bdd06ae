// The HTTP edge against the real gateway on a loopback port: CSRF prevention, the
// request body cap, graphql-armor limits, no batching, error masking with a
// request id, CORS, and the client address without trusted proxies.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  getIntrospectionQuery,
  Kind,
  parse,
  print,
  visit,
  type DefinitionNode,
  type DocumentNode,
  type FragmentDefinitionNode,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, AddOIDCIdentityProviderDocument } from './generated/graphql.ts';
import { readResponse } from './support/net.ts';
import { expectRestStatus, onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { MAX_COST } from '../src/graphql/cost.ts';
import { armorLimits } from '../src/graphql/armor.ts';
import { MAX_IDP_LINKS, MAX_METADATA_ENTRIES } from '../src/limits.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Hard', lastName: 'Ened' };
const E = (n: number) => '😀'.repeat(n);
const ADD_USER = 'mutation AddHumanUser($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }';

/** Every operation of test/operations/*.graphql as a client sends it: the operation and the fragments it uses. */
function operationDocuments(): { name: string; query: string }[] {
  const dir = fileURLToPath(new URL('./operations', import.meta.url));
  const out: { name: string; query: string }[] = [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  const files: { file: string; doc: DocumentNode }[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.graphql'))) {
    const doc = parse(readFileSync(path.join(dir, file), 'utf8'));
    for (const f of doc.definitions) if (f.kind === Kind.FRAGMENT_DEFINITION) fragments.set(f.name.value, f);
    files.push({ file, doc });
  }
  // Fragments are shared across the files (codegen reads them as one set).
  for (const { file, doc } of files) {
    for (const op of doc.definitions) {
      if (op.kind !== Kind.OPERATION_DEFINITION) continue;
      const used = new Map<string, DefinitionNode>();
      const collect = (node: DefinitionNode) =>
        visit(node, {
          FragmentSpread(spread) {
            const fragment = fragments.get(spread.name.value);
            if (fragment && !used.has(spread.name.value)) {
              used.set(spread.name.value, fragment);
              collect(fragment);
            }
          },
        });
      collect(op);
      out.push({
        name: `${file}: ${op.name?.value}`,
        query: print({ kind: Kind.DOCUMENT, definitions: [op, ...used.values()] } as DocumentNode),
      });
    }
  }
  return out;
}

/** POST with full control over the body bytes and headers (no JSON re-encoding). */
async function postRaw(url: string, body: string, headers: Record<string, string>) {
  return readResponse(await fetch(url, { method: 'POST', headers, body }));
}

describe('HTTP hardening (embedded stores)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());
  const auth = () => ({ authorization: `Bearer ${gw.adminToken}` });
  const holder = (username: string) => gw.gateway.deps.store.lookup(`username:${username.toLowerCase()}`);

  describe('CSRF prevention', () => {
    const mutationFor = (username: string) =>
      `mutation { addHumanUser(input: { username: "${username}", profile: { firstName: "C", lastName: "S" }, email: { email: "${username}@example.com", isVerified: true } }) { userId } }`;

    it('a mutation over GET is refused: 403 without the CSRF header, 405 with it; nothing is created', async () => {
      const username = unique('get');
      const url = `${gw.url}?query=${encodeURIComponent(mutationFor(username))}`;
      const plain = await fetch(url, { headers: auth() });
      expect(plain.status).toBe(403);
      const withHeader = await fetch(url, { headers: { ...auth(), 'x-graphql-yoga-csrf': '1' } });
      expect(withHeader.status).toBe(405);
      expect(withHeader.headers.get('allow')).toBe('POST');
      expect((await withHeader.json()).errors[0].extensions.code).toBe('INVALID_ARGUMENT');
      expect(await holder(username)).toBeNull();
    });

    it('POST bodies a browser sends cross-site without a preflight (text/plain, forms) are refused with 403', async () => {
      const username = unique('form');
      const body = JSON.stringify({ query: mutationFor(username) });
      for (const type of [
        'text/plain',
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const res = await postRaw(gw.url, body, { ...auth(), 'content-type': type });
        expect(res.status, type).toBe(403);
        expect(res.json.errors[0].extensions.code).toBe('PERMISSION_DENIED');
        expect(res.json.errors[0].message).toMatch(/CSRF/);
      }
      expect(await holder(username)).toBeNull();
    });

    it('a GET query needs the x-graphql-yoga-csrf header; application/json POSTs need nothing more', async () => {
      const url = `${gw.url}?query=${encodeURIComponent('{ me { id } }')}`;
      expect((await fetch(url, { headers: auth() })).status).toBe(403);
      const ok = await fetch(url, { headers: { ...auth(), 'x-graphql-yoga-csrf': '1' } });
      expect(ok.status).toBe(200);
      expect((await ok.json()).data.me.id).toBe(gw.adminId);
      const post = await postRaw(gw.url, JSON.stringify({ query: '{ me { id } }' }), { ...auth(), 'content-type': 'application/json' });
      expect(post.status).toBe(200);
    });
  });

  describe('request body cap, sized to the largest legal input', () => {
    let largest: { input: any; body: string };
    beforeAll(async () => {
      const idp = await gw.send(AddOIDCIdentityProviderDocument, {
        input: { name: unique('IDP '), issuer: 'https://issuer.example', clientId: unique('client-'), clientSecret: unique('s3cr3t-') },
      });
      expect(idp.errors, idp.text).toBeUndefined();
      const idpId = idp.data!.addOIDCIdentityProvider.idpId;
      const input = (tag: string) => ({
        userId: unique(tag),
        username: unique(tag),
        profile: { firstName: E(200), lastName: E(200), nickName: E(200), displayName: E(200), preferredLanguage: 'en' },
        email: { email: `${unique(tag)}@example.com`, isVerified: true },
        metadata: Array.from({ length: MAX_METADATA_ENTRIES }, (_, i) => ({
          key: `${i}-${E(200 - `${i}-`.length)}`,
          value: randomBytes(500_000).toString('base64'),
        })),
        idpLinks: Array.from({ length: MAX_IDP_LINKS }, (_, i) => ({ idpId, userId: `${tag}${i}-${E(190)}`, userName: E(200) })),
      });
      const first = input('big');
      largest = { input: first, body: JSON.stringify({ query: ADD_USER, variables: { input: first } }) };
    });

    it('the largest legal addHumanUser, padded to exactly the cap, is accepted and stored', async () => {
      const cap = maxRequestBodyBytes(gw.config);
      const bytes = Buffer.byteLength(largest.body);
      expect(bytes).toBeGreaterThan(13_000_000);
      expect(bytes).toBeLessThanOrEqual(cap);
      const padded = largest.body + ' '.repeat(cap - bytes);
      expect(Buffer.byteLength(padded)).toBe(cap);
      const res = await postRaw(gw.url, padded, { ...auth(), 'content-type': 'application/json' });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      expect(res.json.data.addHumanUser.userId).toBe(largest.input.userId);
      const stored = await gw.gateway.deps.store.load<any>('user', largest.input.userId);
      expect(stored!.state.metadata).toHaveLength(MAX_METADATA_ENTRIES);
    });

    it('one byte more is 413 RESOURCE_EXHAUSTED and creates nothing, with or without Content-Length', async () => {
      const cap = maxRequestBodyBytes(gw.config);
      const input = { ...largest.input, userId: unique('over'), username: unique('over') };
      const body = JSON.stringify({ query: ADD_USER, variables: { input } });
      const over = body + ' '.repeat(cap + 1 - Buffer.byteLength(body));
      const res = await postRaw(gw.url, over, { ...auth(), 'content-type': 'application/json' });
      expect(res.status).toBe(413);
      expect(onlyError({ ...res, errors: res.json.errors } as any).extensions?.code).toBe('RESOURCE_EXHAUSTED');

      // Chunked, no Content-Length: counted while it streams in.
      const chunked = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          gw.url,
          { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
          (r) => {
            let text = '';
            r.on('data', (c) => (text += c)).on('end', () => resolve({ status: r.statusCode!, text }));
          },
        );
        req.on('error', reject);
        const buf = Buffer.from(over);
        for (let i = 0; i < buf.length; i += 1 << 20) req.write(buf.subarray(i, i + (1 << 20)));
        req.end();
      }).catch((err) => ({ status: -1, text: String(err) }));
      // The server answers 413 as soon as the cap is passed (the client may see the socket end instead).
      if (chunked.status === -1) expect(chunked.text).toMatch(/EPIPE|ECONNRESET/);
      else expect(chunked.status, chunked.text.slice(0, 200)).toBe(413);
      expect(await gw.gateway.deps.store.load('user', input.userId)).toBeNull();
    });
  });

  it('a variable with a field its type lacks, or without a required one: INVALID_ARGUMENT naming the field, never echoing what was sent', async () => {
    const secret = 'Tr0ub4dor&3; Field "x" is not defined by type Y.';
    const query = 'mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }';
    const email = { email: `${unique('var')}@example.com`, isVerified: true };
    const cases: [object, RegExp, string][] = [
      [
        { profile, email, password: { password: secret }, userName: 'ada' },
        /^Variable "\$input" got an invalid value; Field "userName" is not defined by type "AddHumanUserInput"\.$/,
        'input',
      ],
      [
        { profile: { firstName: 'Ada' }, email, password: { password: secret } },
        /^Variable "\$input" got an invalid value at "input\.profile"; Field "lastName" of required type "String!" was not provided\.$/,
        'input.profile',
      ],
      [
        { profile, email: { ...email, isVerified: secret }, password: { password: secret } },
        /^Variable "\$input" got an invalid value at "input\.email\.isVerified"; Boolean cannot represent a non boolean value\.$/,
        'input.email.isVerified',
      ],
      // A key or an enum value of the client's own is named only when it is a short name.
      [
        { profile: { ...profile, [secret]: 1 }, email },
        /^Variable "\$input" got an invalid value at "input\.profile"; Field is not defined by type "ProfileInput"\.$/,
        'input.profile',
      ],
      [
        { profile: { ...profile, gender: secret }, email },
        /^Variable "\$input" got an invalid value at "input\.profile\.gender"; Value does not exist in "Gender" enum\.$/,
        'input.profile.gender',
      ],
      [
        {
          profile,
          email,
          metadata: [
            { key: 'k', value: 'aGk=' },
            { key: 'k', value: '!!' },
          ],
        },
        /^Variable "\$input" got an invalid value at "input\.metadata\[1\]\.value"; /,
        'input.metadata.1.value',
      ],
    ];
    for (const [input, message, field] of cases) {
      const res = await gw.raw({ query, variables: { input } });
      expectRestStatus(res, 400);
      const err = onlyError(res);
      expect(err.extensions?.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(message);
      expect((err.extensions?.details as any)[0].fieldViolations.map((v: { field: string }) => v.field)).toEqual([field]);
      expect(res.text).not.toContain('Tr0ub4dor');
    }
  });

  it('several mutation fields stop at the first that fails: 200 whenever they ran (data null, the error names the field and its REST status); variables that do not coerce: 400 on application/graphql-response+json', async () => {
    const graphqlResponse = { accept: 'application/graphql-response+json' };
    const me = async () => (await gw.gateway.deps.store.load<any>('user', gw.adminId))!;
    const profile = (name: string) => `{ firstName: "${name}", lastName: "Admin", displayName: "${name} Admin" }`;
    const field = (key: string, name: string) => `${key}: updateMyProfile(input: ${profile(name)}) { details { sequence } }`;
    const name = unique('Part');
    // a is done; b changes nothing after it (FAILED_PRECONDITION); c does not run.
    const partial = await gw.raw({ query: `mutation { ${field('a', name)} ${field('b', name)} ${field('c', `${name}C`)} }` });
    expect(partial.status, partial.text).toBe(200);
    expect(partial.data).toBeNull();
    expect(partial.errors!.map((e: any) => [e.path, e.extensions.code])).toEqual([[['b'], 'FAILED_PRECONDITION']]);
    expect((await me()).state.profile.firstName).toBe(name);

    // The first field fails: nothing after it runs; executed all the same, so 200 on both media types.
    const before = (await me()).sequence;
    for (const headers of [{}, graphqlResponse]) {
      const failed = await gw.raw({ query: `mutation { ${field('a', name)} ${field('b', `${name}B`)} }` }, headers);
      expect(failed.status, failed.text).toBe(200);
      expect(failed.data).toBeNull();
      expect(failed.errors!.map((e: any) => [e.path, e.extensions.code, e.extensions.httpStatus])).toEqual([
        [['a'], 'FAILED_PRECONDITION', 409],
      ]);
    }
    expect((await me()).sequence).toBe(before);

    // Variables that do not coerce stop everything before the first field: not executed, so
    // their 400 on application/graphql-response+json, 200 on application/json.
    for (const [headers, status] of [
      [{}, 200],
      [graphqlResponse, 400],
    ] as const) {
      const badVariables = await gw.raw(
        {
          query: `mutation($i: UpdateMyProfileInput!) { ${field('a', `${name}V`)} b: updateMyProfile(input: $i) { details { sequence } } }`,
          variables: { i: { firstName: 1 } },
        },
        headers,
      );
      expect(badVariables.status, badVariables.text).toBe(status);
      expect(badVariables.data).toBeUndefined();
      expect(badVariables.errors!.length).toBeGreaterThan(0);
      for (const e of badVariables.errors!) expect(e.extensions).toMatchObject({ code: 'INVALID_ARGUMENT', httpStatus: 400 });
    }
    expect((await me()).sequence).toBe(before);
  });

  it('a body of more than 10,000 JSON objects and arrays: INVALID_ARGUMENT before it is parsed, and nothing written', async () => {
    // Containers: the body, variables, input, profile, email and the metadata list (6), then one per entry.
    const bodyOf = (entries: number, userId: string) => {
      const pad = ` #${'x'.repeat(70_000)}`; // a GraphQL comment: past the 64 KiB that are never scanned
      const query = `mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }${pad}`;
      return JSON.stringify({
        query,
        variables: { input: { userId, profile, email: { email: `${unique('c')}@example.com` }, metadata: Array(entries).fill({}) } },
      });
    };
    // At the limit the body is parsed, and its variables do not coerce: a request that was read.
    const atLimit = await postRaw(gw.url, bodyOf(9_994, unique('at')), { ...auth(), 'content-type': 'application/json' });
    expect(atLimit.status).toBe(200);
    expect(atLimit.json.errors[0].extensions.httpStatus).toBe(400);
    expect(atLimit.json.errors[0].message).toMatch(/^Variable "\$input" got an invalid value at "input\.metadata\[0\]"/);
    for (const entries of [9_995, 4_000_000]) {
      const userId = unique('over');
      const res = await postRaw(gw.url, bodyOf(entries, userId), { ...auth(), 'content-type': 'application/json' });
      expect(res.status).toBe(400);
      const err = onlyError({ ...res, errors: res.json.errors } as any);
      expect(err.extensions?.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toBe('Invalid input: body: must hold at most 10000 JSON objects and arrays');
      expect(await gw.gateway.deps.store.load('user', userId)).toBeNull();
    }
  });

  it('variables with thousands of bad list elements: at most 50 errors and one "error limit reached", without a token too', async () => {
    const query = 'mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }';
    const elements = 30_000; // a 60 KB body: under the limit of a request without a token
    const variables = { input: { profile, email: { email: 'x@example.com' }, metadata: Array(elements).fill(1) } };
    expect(JSON.stringify(variables).length).toBeLessThan(64 * 1024);
    for (const headers of [{}, auth()]) {
      const res = await postRaw(gw.url, JSON.stringify({ query, variables }), { ...headers, 'content-type': 'application/json' });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      const errors = res.json.errors as { message: string; extensions: { code: string; httpStatus: number } }[];
      expect(errors).toHaveLength(51);
      expect(errors.every((e) => e.extensions.code === 'INVALID_ARGUMENT' && e.extensions.httpStatus === 400)).toBe(true);
      expect(errors[0]!.message).toMatch(/at "input\.metadata\[0\]"; Expected type "MetadataInput" to be an object\.$/);
      expect(errors[50]!.message).toMatch(/error limit reached/);
      expect(res.text.length).toBeLessThan(32 * 1024);
    }
  });

  describe('graphql-armor', () => {
    it('every operation in test/operations, the introspection query and federation queries pass the limits', async () => {
      const docs = operationDocuments();
      expect(docs.length).toBeGreaterThan(20);
      const user = await gw.send(AddHumanUserDocument, {
        input: { profile, email: { email: `${unique('fed')}@example.com`, isVerified: true } },
      });
      docs.push(
        {
          name: 'introspection',
          query: getIntrospectionQuery({
            descriptions: true,
            specifiedByUrl: true,
            directiveIsRepeatable: true,
            inputValueDeprecation: true,
          }),
        },
        { name: '_service', query: 'query { _service { sdl } }' },
        {
          name: '_entities',
          query: `query($representations: [_Any!]!) { _entities(representations: $representations) { __typename ... on User { id username state resourceOwner details { sequence creationDate changeDate resourceOwner } profile { firstName lastName nickName displayName preferredLanguage gender } email { email isVerified } phone { phone isVerified } metadata { key value } idpLinks { idpId userId userName } u2fTokens { id name state } } } }`,
        },
      );
      for (const { name, query } of docs) {
        const variables = name === '_entities' ? { representations: [{ __typename: 'User', id: user.data!.addHumanUser.userId }] } : {};
        const res = await gw.raw({ query, variables });
        const messages = (res.errors ?? []).map((e) => e.message);
        for (const m of messages) expect(m, `${name}: ${m}`).toMatch(/^Variable "\$\w+" of required type .* was not provided\.$/);
        // A missing variable fails before execution: still 200 on application/json.
        expect(res.status, name).toBe(200);
      }
    });

    /** Refused by a limit before execution: 200 on application/json, 400 on application/graphql-response+json. */
    const refused = async (query: string, limit: RegExp) => {
      for (const [accept, status] of [
        ['application/json', 200],
        ['application/graphql-response+json', 400],
      ] as const) {
        const res = await gw.raw({ query }, { accept });
        expect(res.status, `${accept}: ${res.text}`).toBe(status);
        const err = onlyError(res);
        expect(err.extensions?.code).toBe('INVALID_ARGUMENT');
        expect(err.extensions?.httpStatus).toBe(400);
        expect(err.message).toMatch(limit);
      }
    };

    it('too deep, too many aliases, too costly, too many tokens or directives: INVALID_ARGUMENT naming the limit', async () => {
      const nest = (n: number): string => (n === 0 ? 'name' : `ofType { ${nest(n - 1)} }`);
      await refused(
        `{ __type(name: "User") { fields { type { ${nest(7)} } } } }`,
        new RegExp(`depth limit of ${armorLimits.maxDepth.n} exceeded`),
      );
      const aliases = Array.from({ length: armorLimits.maxAliases.n + 1 }, (_, i) => `a${i}: me { id }`).join(' ');
      await refused(`{ ${aliases} }`, new RegExp(`Aliases limit of ${armorLimits.maxAliases.n} exceeded`));
      // The most a client can batch passes: every alias a `user` with test/operations' UserFields…
      const userDoc = parse(operationDocuments().find((d) => d.name.endsWith(': User'))!.query);
      const userFragments = userDoc.definitions
        .filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((d) => print(d))
        .join('\n');
      const batch = Array.from({ length: armorLimits.maxAliases.n }, (_, i) => `u${i}: user(id: "${gw.adminId}") { ...UserFields }`).join(
        ' ',
      );
      const batched = await gw.raw({ query: `{ ${batch} }\n${userFragments}` });
      expect(batched.status, batched.text.slice(0, 300)).toBe(200);
      // …pages of pages multiply past the cost limit (src/graphql/cost.ts; test/graphql.cost.test.ts).
      const fanOut = `{ users(first: 100) { edges { node { history(first: 100) { edges { node { createdAt } } } } } } }`;
      await refused(fanOut, new RegExp(`costs \\d+, more than ${MAX_COST}`));
      await refused(`{ me { ${'id '.repeat(armorLimits.maxTokens.n)}} }`, new RegExp(`Token limit of ${armorLimits.maxTokens.n} exceeded`));
      await refused(
        `{ me ${'@include(if: true) '.repeat(armorLimits.maxDirectives.n + 1)}{ id } }`,
        new RegExp(`Directives limit of ${armorLimits.maxDirectives.n} exceeded`),
      );
    });
  });

  it("batching is off (yoga's default): an array body is refused with 400", async () => {
    const res = await gw.raw([{ query: '{ me { id } }' }, { query: '{ me { id } }' }]);
    expect(res.status).toBe(400);
    expect(onlyError(res).message).toBe('Batching is not supported.');
  });

  it('an unexpected error is masked as INTERNAL with the request id of the x-request-id header and the log lines', async () => {
    const { hasher } = gw.gateway.deps;
    gw.gateway.deps.hasher = { ...hasher, hash: async () => Promise.reject(new Error('hasher exploded: internal detail')) };
    try {
      const input = {
        username: unique('boom'),
        profile,
        email: { email: `${unique('boom')}@example.com`, isVerified: true },
        password: { password: 'Sup3r$ecret!Pw' },
      };
      const res = await gw.send(AddHumanUserDocument, { input });
      expectRestStatus(res, 500);
      const err = onlyError(res);
      expect(err.message).toBe('Unexpected error.');
      expect(err.extensions?.code).toBe('INTERNAL');
      const requestId = res.headers.get('x-request-id');
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(err.extensions?.requestId).toBe(requestId);
      expect(res.text).not.toContain('exploded');

      const lines = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === requestId);
      expect(lines.find((l) => l.msg === 'unexpected error')?.error).toMatch(/hasher exploded/);
      // The request line logs the HTTP status (an executed request: 200); the error code says what failed.
      expect(lines.find((l) => l.msg === 'request')).toMatchObject({
        status: 200,
        operationName: 'AddHumanUser',
        caller: gw.adminId,
        errors: ['INTERNAL'],
      });

      // A request id the client sends (a harmless one) is kept; anything else is replaced.
      const mine = await gw.send(
        AddHumanUserDocument,
        { input: { ...input, username: unique('boom') } },
        { headers: { 'x-request-id': 'client-req-42' } },
      );
      expect(mine.headers.get('x-request-id')).toBe('client-req-42');
      expect(onlyError(mine).extensions?.requestId).toBe('client-req-42');
      const odd = await gw.send(
        AddHumanUserDocument,
        { input: { ...input, username: unique('boom') } },
        { headers: { 'x-request-id': 'bad id\twith spaces' } },
      );
      expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      gw.gateway.deps.hasher = hasher;
    }
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: the TCP peer is the client', async () => {
    const limited = await startGateway({ env: { RATE_LIMIT_PER_IP_PER_MINUTE: '3' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await postRaw(limited.url, JSON.stringify({ query: '{ __typename }' }), {
          'content-type': 'application/json',
          'x-forwarded-for': `198.51.100.${i}`,
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      const line = limited.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
      expect(line.ip).toBe('127.0.0.1');
    } finally {
      await limited.close();
    }
  });
});

describe('CORS per configuration', () => {
  const preflight = (url: string, origin: string) =>
    fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });
  const simple = (url: string, origin: string) =>
    postRaw(url, JSON.stringify({ query: '{ __typename }' }), { 'content-type': 'application/json', origin });

  it('quick start: any localhost port may call; other origins get no CORS headers', async () => {
    const gw = await startGateway();
    try {
      const ok = await preflight(gw.url, 'http://localhost:5173');
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(ok.headers.get('access-control-allow-headers')).toMatch(/idempotency-key/);
      expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
      const post = await simple(gw.url, 'http://127.0.0.1:3000');
      expect(post.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:3000');
      expect(post.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
      for (const origin of ['https://evil.example', 'http://localhost.evil.example', 'http://localhost:5173.evil.example']) {
        expect((await preflight(gw.url, origin)).headers.get('access-control-allow-origin'), origin).toBeNull();
        expect((await simple(gw.url, origin)).headers.get('access-control-allow-origin'), origin).toBeNull();
      }
    } finally {
      await gw.close();
    }
  });

  it('production: no cross-origin caller unless CORS_ORIGINS names it', async () => {
    const closed = await startGateway({ env: { NODE_ENV: 'production' } });
    try {
      expect((await preflight(closed.url, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBeNull();
      expect((await simple(closed.url, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await closed.close();
    }
    const open = await startGateway({
      env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' },
    });
    try {
      expect((await preflight(open.url, 'https://app.example.com')).headers.get('access-control-allow-origin')).toBe(
        'https://app.example.com',
      );
      expect((await simple(open.url, 'https://admin.example.com')).headers.get('access-control-allow-origin')).toBe(
        'https://admin.example.com',
      );
      expect((await simple(open.url, 'https://other.example.com')).headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await open.close();
    }
  });
});
