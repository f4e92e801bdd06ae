// Apollo Client and urql, set up as docs/codegen.md says, against a gateway with
// TRUSTED_DOCUMENTS: they send the client preset's hash and never the query's text, and the
// answers are whole. The documents are the tests' own, generated with codegen.ts's output
// plus the addTypenameSelectionDocumentTransform the page asks Apollo users to add (Apollo's
// cache adds __typename to what it sends and needs it in what it gets).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generate } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';
import { Client, fetchExchange, makeOperation, mapExchange } from '@urql/core';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import codegenConfig, { generatedDir } from '../codegen.ts';
import type * as Generated from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'typename-documents-'));
let docs: typeof Generated;
let gw: TestGateway;
/** The bodies the clients sent, as the gateway received them. */
let sent: Record<string, unknown>[] = [];

const recordingFetch: typeof fetch = (input, init) => {
  sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
  return fetch(input, init);
};

beforeAll(async () => {
  const output = codegenConfig.generates[generatedDir] as object;
  const out = `${dir}/`;
  const generates = { [out]: { ...output, documentTransforms: [addTypenameSelectionDocumentTransform] } };
  await generate({ ...codegenConfig, silent: true, generates }, true);
  docs = (await import(path.join(dir, 'graphql.ts'))) as typeof Generated;
  gw = await startGateway({ env: { TRUSTED_DOCUMENTS: path.join(dir, 'persisted-documents.json') } });
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const newUser = (username: string) => ({
  input: { username, profile: { firstName: 'Client', lastName: 'Side' }, email: { email: `${username}@example.com` } },
});
const holder = async (username: string) => (await gw.gateway.deps.store.lookup(`username:${username}`))?.aggregateId;

describe('Apollo Client with the persisted-query link of docs/codegen.md', () => {
  const apollo = () =>
    new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink({
        generateHash: (document) => (document as { __meta__?: { hash: string } }).__meta__!.hash,
        retry: () => false,
        disable: () => false,
      }).concat(new HttpLink({ uri: gw.url, headers: { authorization: `Bearer ${gw.adminToken}` }, fetch: recordingFetch })),
    });

  it('runs a query and a mutation by hash, and gets every field', async () => {
    sent = [];
    const client = apollo();
    const { data } = await client.query({ query: docs.UserDocument, variables: { id: gw.adminId } });
    expect(data?.user?.id).toBe(gw.adminId);
    expect(data?.user?.profile.displayName).toBe('Administrator');
    expect(data?.user?.details.resourceOwner).toBe(gw.defaultOrgId);

    const username = `apollo${Date.now().toString(36)}`;
    const added = await client.mutate({ mutation: docs.AddHumanUserDocument, variables: newUser(username) });
    expect(added.data?.addHumanUser.userId).toBe(await holder(username));

    expect(sent).toHaveLength(2);
    for (const body of sent) {
      expect(body.query).toBeUndefined();
      expect(body.extensions).toMatchObject({ persistedQuery: { version: 1, sha256Hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) } });
    }
  });

  it('does not retry an unknown document with its text: one request, PersistedQueryNotFound', async () => {
    sent = [];
    const unknown = Object.assign(parse('query Unknown { me { id } }'), { __meta__: { hash: `sha256:${'0'.repeat(64)}` } });
    const error = await apollo()
      .query({ query: unknown })
      .then(
        () => null,
        (e: Error) => e,
      );
    expect(error?.message).toMatch(/PersistedQueryNotFound/);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.query).toBeUndefined();
  });
});

describe('urql with the exchange of docs/codegen.md', () => {
  it('runs a query and a mutation by hash', async () => {
    sent = [];
    const trustedDocuments = mapExchange({
      onOperation: (operation) => {
        const hash = (operation.query as { __meta__?: { hash?: string } }).__meta__?.hash;
        if (operation.kind === 'teardown' || !hash) return operation;
        const extensions = { ...operation.extensions, persistedQuery: { version: 1 as const, sha256Hash: hash } };
        return makeOperation(operation.kind, { ...operation, extensions }, operation.context);
      },
    });
    const client = new Client({
      url: gw.url,
      preferGetMethod: false,
      exchanges: [trustedDocuments, fetchExchange],
      fetch: recordingFetch,
      fetchOptions: () => ({ headers: { authorization: `Bearer ${gw.adminToken}` } }),
    });
    const result = await client.query(docs.UserDocument, { id: gw.adminId }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.user?.id).toBe(gw.adminId);

    const username = `urql${Date.now().toString(36)}`;
    const added = await client.mutation(docs.AddHumanUserDocument, newUser(username)).toPromise();
    expect(added.error).toBeUndefined();
    expect(added.data?.addHumanUser.userId).toBe(await holder(username));

    expect(sent).toHaveLength(2);
    for (const body of sent) expect(body.query).toBeUndefined();
  });
});
