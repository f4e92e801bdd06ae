// Trusted documents (TRUSTED_DOCUMENTS, src/graphql/trusted-documents.ts) against the real
// gateway, with the client preset's own manifest of the test documents
// (test/generated/persisted-documents.json, written by `npm run codegen`): a document of the
// manifest runs by its id however a client sends it, anything else runs nothing, and an
// Idempotency-Key mutation sent by its id replays. Without the setting nothing changes.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { AddHumanUserDocument, UserDocument } from './generated/graphql.ts';
import { onlyError, startGateway, type TestGateway } from './support/gateway.ts';

const manifestPath = path.join(import.meta.dirname, 'generated/persisted-documents.json');

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(seq++).toString(36)}`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The id the client preset embeds in a document ("sha256:<hex>"), as a client sends it. */
const idOf = (doc: TypedDocumentNode<any, any>) => (doc as { __meta__?: { hash?: string } }).__meta__!.hash!;
const hexOf = (doc: TypedDocumentNode<any, any>) => idOf(doc).replace(/^sha256:/, '');

const newUser = (username: string) => ({
  input: { username, profile: { firstName: 'Trusted', lastName: 'Document' }, email: { email: `${username}@example.com` } },
});

describe('with TRUSTED_DOCUMENTS', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { TRUSTED_DOCUMENTS: manifestPath } });
  });
  afterAll(async () => gw?.close());

  const holder = (username: string) => gw.gateway.deps.store.lookup(`username:${username.toLowerCase()}`);

  it('runs a document of the manifest by its documentId, "sha256:<hex>" or "<hex>", and by Apollo\'s persistedQuery hash', async () => {
    const variables = { id: gw.adminId };
    const bodies = [
      { documentId: idOf(UserDocument), variables },
      { documentId: hexOf(UserDocument), variables },
      { extensions: { persistedQuery: { version: 1, sha256Hash: hexOf(UserDocument) } }, variables },
      { extensions: { persistedQuery: { version: 1, sha256Hash: idOf(UserDocument) } }, variables },
    ];
    for (const body of bodies) {
      const res = await gw.raw(body);
      expect(res.errors, res.text).toBeUndefined();
      expect(res.data.user.id, JSON.stringify(body)).toBe(gw.adminId);
    }
  });

  it('runs one by a GET with documentId in the query string', async () => {
    const url = new URL(gw.url);
    url.searchParams.set('documentId', idOf(UserDocument));
    url.searchParams.set('variables', JSON.stringify({ id: gw.adminId }));
    const res = await fetch(url, { headers: { authorization: `Bearer ${gw.adminToken}`, 'x-graphql-yoga-csrf': '1' } });
    const body = (await res.json()) as { data?: { user?: { id: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.user?.id).toBe(gw.adminId);
  });

  it('answers an unknown id PersistedQueryNotFound (NOT_FOUND) and runs nothing', async () => {
    const username = unique('unknown');
    // A mutation the manifest does not hold: its own hash, sent with valid variables.
    const other = print(AddHumanUserDocument).replace('userId', 'userId emailCode');
    for (const documentId of [`sha256:${sha256(other)}`, sha256(other), 'not-a-hash']) {
      const res = await gw.raw({ documentId, variables: newUser(username) });
      expect(res.status, res.text).toBe(404);
      expect(res.data).toBeUndefined();
      const error = onlyError(res);
      expect(error.message).toBe('PersistedQueryNotFound');
      expect(error.extensions?.code).toBe('NOT_FOUND');
      expect(error.extensions?.grpcCode).toBe(5);
    }
    expect(await holder(username)).toBeNull();
  });

  it('refuses a raw query, even the text of a trusted document, and runs nothing', async () => {
    const username = unique('raw');
    const requests = [
      { query: print(AddHumanUserDocument), variables: newUser(username) },
      // The manifest's exact text, and the text sent beside its own id: a query is never taken.
      { query: (await import(manifestPath, { with: { type: 'json' } })).default[idOf(AddHumanUserDocument)], variables: newUser(username) },
      { query: print(AddHumanUserDocument), documentId: idOf(AddHumanUserDocument), variables: newUser(username) },
    ];
    for (const body of requests) {
      const res = await gw.raw(body);
      expect(res.status, res.text).toBe(400);
      expect(res.data).toBeUndefined();
      const error = onlyError(res);
      expect(error.message).toMatch(/^PersistedQueryOnly: /);
      expect(error.extensions?.code).toBe('INVALID_ARGUMENT');
    }
    expect(await holder(username)).toBeNull();
  });

  it('refuses a request with neither a query nor an id (INVALID_ARGUMENT)', async () => {
    const res = await gw.raw({ variables: {} });
    expect(res.status, res.text).toBe(400);
    const error = onlyError(res);
    expect(error.message).toMatch(/^PersistedQueryKeyNotFound: /);
    expect(error.extensions?.code).toBe('INVALID_ARGUMENT');
  });

  it('replays an Idempotency-Key mutation sent by its id (the key sees the manifest text as the query)', async () => {
    const username = unique('idem');
    const key = unique('key-');
    const body = { documentId: idOf(AddHumanUserDocument), variables: newUser(username) };
    const first = await gw.raw(body, { 'idempotency-key': key });
    expect(first.errors, first.text).toBeUndefined();
    const { userId } = first.data.addHumanUser;
    expect((await holder(username))?.aggregateId).toBe(userId);

    const again = await gw.raw(body, { 'idempotency-key': key });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(first.text);

    // The same key with other variables is another request: FAILED_PRECONDITION, not run, not replayed.
    const other = unique('idem');
    const conflict = await gw.raw({ ...body, variables: newUser(other) }, { 'idempotency-key': key });
    expect(conflict.headers.get('idempotency-replayed')).toBeNull();
    expect(onlyError(conflict).extensions?.code).toBe('FAILED_PRECONDITION');
    expect(await holder(other)).toBeNull();
  });
});

describe('without TRUSTED_DOCUMENTS', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('runs raw queries, and takes no documentId', async () => {
    const res = await gw.send(UserDocument, { id: gw.adminId });
    expect(res.errors, res.text).toBeUndefined();
    expect(res.data?.user?.id).toBe(gw.adminId);

    const byId = await gw.raw({ documentId: idOf(UserDocument), variables: { id: gw.adminId } });
    expect(byId.status, byId.text).toBe(400);
    expect(byId.data).toBeUndefined();
  });
});

describe('TRUSTED_DOCUMENTS at start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trusted-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const manifest = (name: string, content: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return file;
  };
  const load = (file: string) => () => loadConfig({ TRUSTED_DOCUMENTS: file });
  const text = 'query Me { me { id } }';

  it('reads the manifest, keyed by hex, whichever form its keys have', () => {
    const documents = loadConfig({ TRUSTED_DOCUMENTS: manifestPath }).trustedDocuments!;
    expect(documents.get(hexOf(UserDocument))).toMatch(/ query User\(\$id: ID!\) \{ user\(id: \$id\) \{ \.\.\.UserFields \} \}$/);
    const bare = manifest('bare.json', JSON.stringify({ [sha256(text).toUpperCase()]: text }));
    expect([...loadConfig({ TRUSTED_DOCUMENTS: bare }).trustedDocuments!]).toEqual([[sha256(text), text]]);
    expect(loadConfig({ TRUSTED_DOCUMENTS: '' }).trustedDocuments).toBeUndefined();
  });

  it('stops the start, naming the setting, on a file it cannot use', () => {
    expect(load(path.join(dir, 'missing.json'))).toThrow(/^TRUSTED_DOCUMENTS: .*missing\.json cannot be read/);
    expect(load(manifest('broken.json', '{"sha256:'))).toThrow(/^TRUSTED_DOCUMENTS: .* is not JSON/);
    expect(load(manifest('array.json', '[]'))).toThrow(/^TRUSTED_DOCUMENTS: .* is not a persisted-documents manifest/);
    expect(load(manifest('empty.json', '{}'))).toThrow(/^TRUSTED_DOCUMENTS: .* holds no document/);
    const sha1 = createHash('sha1').update(text).digest('hex');
    expect(load(manifest('sha1.json', JSON.stringify({ [sha1]: text })))).toThrow(/is not a sha256 hash/);
    expect(load(manifest('number.json', JSON.stringify({ [sha256(text)]: 1 })))).toThrow(/other than a document's text/);
    const edited = manifest('edited.json', JSON.stringify({ [`sha256:${sha256(text)}`]: 'query Me { me { id username } }' }));
    expect(load(edited)).toThrow(/does not hash to it/);
  });
});
