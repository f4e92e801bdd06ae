// Projects and SAML applications end to end over HTTP, on the embedded stores
// and on MongoDB-wire + Redis: real metadata documents as metadataXml, a
// metadataUrl served by a local HTTP server (allowed by config in one case
// only), the address guard with the default config, uniqueness, limits and
// permissions.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  AddProjectDocument,
  AddSAMLAppDocument,
  ProjectDocument,
  type AddSAMLAppInput,
} from './generated/graphql.ts';
import {
  expectRestStatus,
  onlyError,
  startGateway,
  upstreamMode,
  violatedFields,
  type Response,
  type TestGateway,
} from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { projectEvents, type Project, type SAMLAppAdded } from '../src/model/projects.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const fixture = (name: string) => readFileSync(new URL(`./fixtures/saml/${name}`, import.meta.url));
const b64 = (doc: Buffer | string) => Buffer.from(doc).toString('base64');
/** The signed-and-encrypted SP fixture under another entityID. */
/**
 * An app's entityID as the project query shows it. In upstream mode it comes from ZITADEL's
 * ListApps, whose SAMLConfig carries the metadata document and no entityID of its own: ZITADEL
 * answers the stored document and the front reads the entityID from it; this gateway's wire face,
 * standing in for ZITADEL here, keeps no document in its read model and answers the URL (or
 * nothing), so through it the entityID shows empty. Embedded: as stored.
 */
const shownEntityId = (entityId: string) => (upstreamMode ? '' : entityId);

const spMetadata = (entityId: string) =>
  fixture('sp-entity-descriptor.xml').toString().replace('entityID="https://sp.example.com/saml/metadata"', `entityID="${entityId}"`);
const emoji = (n: number) => '\u{1F600}'.repeat(n);
/** 100,000 elements nested inside the root EntityDescriptor: about 700 KB. */
const deepMetadata = () =>
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${unique('urn:deep:')}">${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</md:EntityDescriptor>`;

/**
 * Runs `work` while GET /health is polled every 50 ms. The gateway runs in this
 * process, so a blocked event loop shows as a long gap between health answers.
 */
async function whilePollingHealth<T>(graphqlUrl: string, work: () => Promise<T>) {
  const healthUrl = new URL('/health', graphqlUrl);
  let done = false;
  let sent = 0;
  const answered: number[] = [];
  const started = performance.now();
  const poller = (async () => {
    while (!done) {
      sent++;
      const res = await fetch(healthUrl);
      await res.arrayBuffer();
      if (res.status === 200) answered.push(performance.now());
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const result = await work();
  const ended = performance.now();
  done = true;
  await poller;
  const times = [started, ...answered, ended].sort((a, b) => a - b);
  const longestGap = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
  return { result, sent, answered: answered.length, longestGap };
}

/**
 * The longest pause between /health answers that still shows a loop that was never blocked
 * by a parse: its polls come every 50 ms, a parse on the loop would hold it for the whole
 * document, and a loaded machine (client and gateway in one process) adds pauses of its own.
 */
const LOOP_GAP_MS = 3000;

function codeOf(res: Response<unknown>): string | undefined {
  return onlyError(res).extensions?.code;
}

/** A local HTTP server for metadataUrl; counts connections so a refused URL can be shown unreached. */
async function metadataServer() {
  const served = new Map<string, Buffer | string>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (body === undefined) return void res.writeHead(404).end('not here');
    res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(body);
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    serve: (path: string, body: Buffer | string) => served.set(path, body),
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function samlSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    let meta: Awaited<ReturnType<typeof metadataServer>>;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      meta = await metadataServer();
    });
    afterAll(async () => {
      await gw?.close();
      await meta?.close();
    });

    const addProject = async (opts: { token?: string | null; orgId?: string } = {}, name = unique('Project ')) => {
      const res = await gw.send(AddProjectDocument, { input: { name } }, opts);
      if (!res.data) throw new Error(res.text);
      return res.data.addProject;
    };
    const addApp = (input: Partial<AddSAMLAppInput> & { projectId: string }, opts: { token?: string | null; orgId?: string } = {}) =>
      gw.send(AddSAMLAppDocument, { input: { name: unique('App '), ...input } }, opts);
    const stored = async (projectId: string) => (await gw.gateway.deps.store.load<Project>('project', projectId))!;
    const addOrg = async () => (await gw.send(AddOrganizationDocument, { input: { name: unique('Org ') } })).data!.addOrganization.orgId;
    /** A user of `orgId` holding `roles` there (none: a plain user), with a token. */
    const userWith = async (roles: string[], orgId = gw.defaultOrgId) => {
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          organisation: { orgId },
          profile: { firstName: 'Sam', lastName: 'L' },
          email: { email: `${unique('saml')}@example.com`, isVerified: true },
        },
      });
      const userId = res.data!.addHumanUser.userId;
      if (roles.length) {
        const grant = await gw.send(AddOrgMemberDocument, { input: { userId, roles } }, { orgId });
        expect(grant.errors).toBeUndefined();
      }
      return { userId, token: await gw.tokenFor(userId) };
    };

    it('addProject creates a project of the acting organization; the project query reads it back', async () => {
      const name = unique('Billing ');
      const { projectId, details } = await addProject({}, `  ${name} `);
      expect(projectId).toMatch(/^\d+$/);
      expect(details.sequence).toBe('1');
      expect(details.creationDate).toBe(details.changeDate);
      expect(details.resourceOwner).toBe(gw.defaultOrgId);
      const read = await gw.send(ProjectDocument, { id: projectId });
      expect(read.errors).toBeUndefined();
      expect(read.data!.project).toMatchObject({ id: projectId, name, resourceOwner: gw.defaultOrgId, samlApps: [] });
      expect(read.data!.project!.details).toEqual(details);
    });

    it('addProject: names are unique per organization ignoring case; other organizations may reuse them', async () => {
      const name = unique('Payroll ');
      await addProject({}, name);
      const again = await gw.send(AddProjectDocument, { input: { name: name.toUpperCase() } });
      expect(codeOf(again)).toBe('ALREADY_EXISTS');
      expectRestStatus(again, 409);
      const elsewhere = await gw.send(AddProjectDocument, { input: { name } }, { orgId: await addOrg() });
      expect(elsewhere.errors).toBeUndefined();
    });

    it('addProject: the name is non-empty and at most 200 characters', async () => {
      expect((await gw.send(AddProjectDocument, { input: { name: emoji(200) } })).errors).toBeUndefined();
      for (const name of [emoji(201), '', ' \u00a0 ']) {
        const res = await gw.send(AddProjectDocument, { input: { name } });
        expect(codeOf(res)).toBe('INVALID_ARGUMENT');
        expect(violatedFields(onlyError(res))).toEqual(['input.name']);
      }
    });

    it('addSAMLApp takes each valid metadata fixture as metadataXml; details.sequence is the project sequence', async () => {
      const { projectId } = await addProject();
      const cases = [
        ['sp-entity-descriptor.xml', 'https://sp.example.com/saml/metadata'],
        ['sp-prefixed.xml', 'urn:example:sp:payroll'],
        ['sp-default-namespace.xml', 'https://wiki.example.net/sp'],
      ] as const;
      const added = [];
      for (const [i, [file, entityId]] of cases.entries()) {
        const res = await addApp({ projectId, name: `App ${file}`, metadataXml: b64(fixture(file)) });
        expect(res.errors, file).toBeUndefined();
        const { appId, details } = res.data!.addSAMLApp;
        expect(appId).toMatch(/^\d+$/);
        expect(details.sequence).toBe(String(i + 2));
        expect(details.creationDate).not.toBeNull();
        expect(details.creationDate).toBe(details.changeDate);
        expect(details.resourceOwner).toBe(gw.defaultOrgId);
        added.push({ id: appId, name: `App ${file}`, entityId: shownEntityId(entityId), metadataUrl: null, details });
      }
      const read = await gw.send(ProjectDocument, { id: projectId });
      expect(read.data!.project!.samlApps).toEqual(added);
      expect(read.data!.project!.details.sequence).toBe('4');
      // The documents are kept in the apps' events, as given; the project's state holds none of them.
      const state = await stored(projectId);
      expect(state.state.apps.every((a) => !('metadataXml' in a))).toBe(true);
      const events = await gw.gateway.deps.store.events('project', projectId);
      expect(events.filter((e) => e.type === projectEvents.samlAppAdded).map((e) => (e.payload as SAMLAppAdded).metadataXml)).toEqual(
        cases.map(([file]) => b64(fixture(file))),
      );
    });

    it('addSAMLApp refuses an EntitiesDescriptor, a DOCTYPE, billion laughs and an external entity: INVALID_ARGUMENT, nothing written', async () => {
      const { projectId } = await addProject();
      for (const [file, reason] of [
        ['entities-descriptor.xml', /EntitiesDescriptor/],
        ['doctype.xml', /DOCTYPE/],
        ['billion-laughs.xml', /DOCTYPE/],
        ['external-entity.xml', /DOCTYPE/],
      ] as const) {
        const started = performance.now();
        const res = await addApp({ projectId, metadataXml: b64(fixture(file)) });
        // Refused before anything expands (expanded, billion laughs is 3 GB): a bound for a
        // loaded machine, far below what expanding would take.
        expect(performance.now() - started, file).toBeLessThan(10_000);
        expect(codeOf(res), file).toBe('INVALID_ARGUMENT');
        expectRestStatus(res, 400);
        expect(onlyError(res).message, file).toMatch(reason);
        expect(violatedFields(onlyError(res))).toEqual(['input.metadataXml']);
        expect(res.text).not.toContain('root:x:0:0');
      }
      expect((await stored(projectId)).sequence).toBe(1);
    });

    it('addSAMLApp refuses 100,000 nested elements as INVALID_ARGUMENT while /health keeps answering', async () => {
      const { projectId } = await addProject();
      const doc = deepMetadata();
      const polled = await whilePollingHealth(gw.url, () => addApp({ projectId, metadataXml: b64(doc) }));
      expect(codeOf(polled.result)).toBe('INVALID_ARGUMENT');
      expect(onlyError(polled.result).message).toMatch(/more than 64 levels deep/);
      expect(violatedFields(onlyError(polled.result))).toEqual(['input.metadataXml']);
      expect(polled.answered).toBeGreaterThan(0);
      expect(polled.answered).toBe(polled.sent);
      expect(polled.longestGap, 'the event loop kept answering /health').toBeLessThan(LOOP_GAP_MS);
      expect((await stored(projectId)).sequence).toBe(1);
    });

    it('addSAMLApp refuses metadata that is not XML, not SAML metadata, or has no entityID', async () => {
      const { projectId } = await addProject();
      for (const doc of [
        'plain text',
        '<html><body/></html>',
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"/>',
        '<md:EntityDescriptor xmlns:md="urn:example:other" entityID="https://x.example"/>',
      ]) {
        const res = await addApp({ projectId, metadataXml: b64(doc) });
        expect(codeOf(res), doc).toBe('INVALID_ARGUMENT');
      }
      const notBase64 = await addApp({ projectId, metadataXml: '<md:EntityDescriptor/>' });
      expect(codeOf(notBase64)).toBe('INVALID_ARGUMENT');
      expect((await stored(projectId)).sequence).toBe(1);
    });

    it('addSAMLApp: exactly one of metadataXml and metadataUrl', async () => {
      const { projectId } = await addProject();
      const both = await addApp({ projectId, metadataXml: b64(spMetadata(unique('urn:both:'))), metadataUrl: meta.url('/x') });
      expect(codeOf(both)).toBe('INVALID_ARGUMENT');
      expect(violatedFields(onlyError(both))).toEqual(['input.metadataUrl', 'input.metadataXml']);
      const neither = await addApp({ projectId });
      expect(codeOf(neither)).toBe('INVALID_ARGUMENT');
      expect(violatedFields(onlyError(neither))).toEqual(['input.metadataUrl', 'input.metadataXml']);
      const ftp = await addApp({ projectId, metadataUrl: 'ftp://127.0.0.1/metadata.xml' });
      expect(violatedFields(onlyError(ftp))).toEqual(['input.metadataUrl']);
      expect((await stored(projectId)).sequence).toBe(1);
    });

    it('addSAMLApp: the name is non-empty and at most 200 characters (200 emoji pass, 201 fail)', async () => {
      const { projectId } = await addProject();
      const ok = await addApp({ projectId, name: emoji(200), metadataXml: b64(spMetadata(unique('urn:emoji:'))) });
      expect(ok.errors).toBeUndefined();
      for (const name of [emoji(201), '', '   ']) {
        const res = await addApp({ projectId, name, metadataXml: b64(spMetadata(unique('urn:emoji:'))) });
        expect(codeOf(res)).toBe('INVALID_ARGUMENT');
        expect(violatedFields(onlyError(res))).toEqual(['input.name']);
      }
      const both = await addApp({ projectId, name: emoji(201) });
      expect(violatedFields(onlyError(both))).toEqual(['input.metadataUrl', 'input.metadataXml', 'input.name']);
      expect((await stored(projectId)).sequence).toBe(2);
    });

    it('addSAMLApp: an entityID is unique in the instance, across projects and organizations', async () => {
      const first = await addProject();
      const second = await addProject();
      const orgId = await addOrg();
      const third = await addProject({ orgId });
      const entityId = unique('https://dup.example.com/sp/');
      expect((await addApp({ projectId: first.projectId, metadataXml: b64(spMetadata(entityId)) })).errors).toBeUndefined();
      for (const [projectId, opts] of [
        [second.projectId, {}],
        [third.projectId, { orgId }],
      ] as const) {
        const res = await addApp({ projectId, metadataXml: b64(spMetadata(entityId)) }, opts);
        expect(codeOf(res)).toBe('ALREADY_EXISTS');
        expectRestStatus(res, 409);
        expect(onlyError(res).message).toContain(entityId);
        expect((await stored(projectId)).sequence).toBe(1);
      }
    });

    it('addSAMLApp: an app name is unique in its project ignoring case; another project may reuse it', async () => {
      const { projectId } = await addProject();
      const other = await addProject();
      expect((await addApp({ projectId, name: 'Wiki SP', metadataXml: b64(spMetadata(unique('urn:wiki:'))) })).errors).toBeUndefined();
      const fetchesBefore = meta.connections;
      for (const input of [{ metadataXml: b64(spMetadata(unique('urn:wiki:'))) }, { metadataUrl: meta.url('/never-fetched') }]) {
        const res = await addApp({ projectId, name: 'wIKI sp', ...input });
        expect(codeOf(res)).toBe('ALREADY_EXISTS');
      }
      expect(meta.connections).toBe(fetchesBefore);
      expect((await stored(projectId)).sequence).toBe(2);
      expect(
        (await addApp({ projectId: other.projectId, name: 'wiki sp', metadataXml: b64(spMetadata(unique('urn:wiki:'))) })).errors,
      ).toBeUndefined();
    });

    it('concurrent adds: one entityID goes to one app; one name to one app, and the loser leaves no claim behind', async () => {
      const [a, b] = [await addProject(), await addProject()];
      const entityId = unique('https://race.example.com/');
      const race = await Promise.all([a, b].map((p) => addApp({ projectId: p.projectId, metadataXml: b64(spMetadata(entityId)) })));
      expect(race.map((r) => (r.errors ? codeOf(r) : 'OK')).sort()).toEqual(['ALREADY_EXISTS', 'OK']);

      const losers = [unique('urn:race:'), unique('urn:race:')];
      const sameName = await Promise.all(
        losers.map((e) => addApp({ projectId: a.projectId, name: 'Race', metadataXml: b64(spMetadata(e)) })),
      );
      expect(sameName.map((r) => (r.errors ? codeOf(r) : 'OK')).sort()).toEqual(['ALREADY_EXISTS', 'OK']);
      const lost = losers[sameName.findIndex((r) => r.errors)]!;
      expect((await addApp({ projectId: b.projectId, metadataXml: b64(spMetadata(lost)) })).errors).toBeUndefined();
      const apps = [...(await stored(a.projectId)).state.apps, ...(await stored(b.projectId)).state.apps];
      expect(apps.filter((x) => x.entityId === entityId)).toHaveLength(1);
    });

    it('addSAMLApp with the default config refuses a metadataUrl on 127.0.0.1 without connecting to it', async () => {
      const { projectId } = await addProject();
      meta.serve('/guarded.xml', spMetadata(unique('urn:guarded:')));
      const before = meta.connections;
      // Only loopback here: 10.x and 169.254.x are covered in guarded-fetch.test.ts, behind a tripwire.
      for (const url of [meta.url('/guarded.xml'), meta.url('/guarded.xml').replace('127.0.0.1', 'localhost')]) {
        const started = performance.now();
        const res = await addApp({ projectId, metadataUrl: url });
        expect(performance.now() - started, 'refused at once, not after a connection timed out').toBeLessThan(10_000);
        expect(codeOf(res), url).toBe('INVALID_ARGUMENT');
        expect(onlyError(res).message).toMatch(/address is not allowed/);
        expect(violatedFields(onlyError(res))).toEqual(['input.metadataUrl']);
      }
      expect(meta.connections).toBe(before);
      expect((await stored(projectId)).sequence).toBe(1);
    });

    it('addSAMLApp fetches metadataUrl from a local server when SAML_METADATA_ALLOW_PRIVATE=true', async () => {
      const open = await startGateway({ env: { ...env(), SAML_METADATA_ALLOW_PRIVATE: 'true', SAML_METADATA_MAX_BYTES: '8192' } });
      try {
        const res0 = await open.send(AddProjectDocument, { input: { name: unique('Fetched ') } });
        const projectId = res0.data!.addProject.projectId;
        const entityId = unique('https://fetched.example.com/');
        const doc = spMetadata(entityId);
        meta.serve('/sp.xml', doc);
        const url = meta.url('/sp.xml');
        const res = await open.send(AddSAMLAppDocument, { input: { projectId, name: 'Fetched', metadataUrl: url } });
        expect(res.errors).toBeUndefined();
        expect(res.data!.addSAMLApp.details.sequence).toBe('2');
        const read = await open.send(ProjectDocument, { id: projectId });
        expect(read.data!.project!.samlApps).toEqual([
          {
            id: res.data!.addSAMLApp.appId,
            name: 'Fetched',
            entityId: shownEntityId(entityId),
            metadataUrl: url,
            details: res.data!.addSAMLApp.details,
          },
        ]);
        const [, appAdded] = await open.gateway.deps.store.events('project', projectId);
        expect(Buffer.from((appAdded!.payload as SAMLAppAdded).metadataXml, 'base64').toString()).toBe(doc);

        const missing = await open.send(AddSAMLAppDocument, {
          input: { projectId, name: 'Missing', metadataUrl: meta.url('/missing.xml') },
        });
        expect(codeOf(missing)).toBe('INVALID_ARGUMENT');
        expect(onlyError(missing).message).toMatch(/HTTP 404/);
        meta.serve('/big.xml', doc + ' '.repeat(8192));
        const big = await open.send(AddSAMLAppDocument, { input: { projectId, name: 'Big', metadataUrl: meta.url('/big.xml') } });
        expect(onlyError(big).message).toMatch(/larger than 8192 bytes/);
        meta.serve('/doctype.xml', fixture('billion-laughs.xml'));
        const laughs = await open.send(AddSAMLAppDocument, { input: { projectId, name: 'Laughs', metadataUrl: meta.url('/doctype.xml') } });
        expect(onlyError(laughs).message).toMatch(/DOCTYPE/);
        expect(violatedFields(onlyError(laughs))).toEqual(['input.metadataUrl']);
        expect((await open.gateway.deps.store.load('project', projectId))!.sequence).toBe(2);
      } finally {
        await open.close();
      }
    });

    it('addSAMLApp refuses 100,000 nested elements fetched from metadataUrl while /health keeps answering', async () => {
      const open = await startGateway({ env: { ...env(), SAML_METADATA_ALLOW_PRIVATE: 'true' } });
      try {
        const projectId = (await open.send(AddProjectDocument, { input: { name: unique('Deep ') } })).data!.addProject.projectId;
        meta.serve('/deep.xml', deepMetadata());
        const polled = await whilePollingHealth(open.url, () =>
          open.send(AddSAMLAppDocument, { input: { projectId, name: 'Deep', metadataUrl: meta.url('/deep.xml') } }),
        );
        expect(codeOf(polled.result)).toBe('INVALID_ARGUMENT');
        expect(onlyError(polled.result).message).toMatch(/more than 64 levels deep/);
        expect(violatedFields(onlyError(polled.result))).toEqual(['input.metadataUrl']);
        expect(polled.answered).toBeGreaterThan(0);
        expect(polled.answered).toBe(polled.sent);
        expect(polled.longestGap, 'the event loop kept answering /health').toBeLessThan(LOOP_GAP_MS);
      } finally {
        await open.close();
      }
    });

    describe('permissions', () => {
      it('no token is UNAUTHENTICATED; a plain user and ORG_USER_MANAGER are PERMISSION_DENIED', async () => {
        const { projectId } = await addProject();
        const xml = b64(spMetadata(unique('urn:perm:')));
        const none = await addApp({ projectId, metadataXml: xml }, { token: null });
        expect(codeOf(none)).toBe('UNAUTHENTICATED');
        expectRestStatus(none, 401);
        expect(codeOf(await gw.send(AddProjectDocument, { input: { name: unique('P') } }, { token: null }))).toBe('UNAUTHENTICATED');
        for (const roles of [[], ['ORG_USER_MANAGER'], ['ORG_SETTINGS_MANAGER']]) {
          const { token } = await userWith(roles);
          const app = await addApp({ projectId, metadataXml: xml }, { token });
          expect(codeOf(app), roles.join()).toBe('PERMISSION_DENIED');
          expectRestStatus(app, 403);
          expect(codeOf(await gw.send(AddProjectDocument, { input: { name: unique('P') } }, { token }))).toBe('PERMISSION_DENIED');
        }
        expect((await stored(projectId)).sequence).toBe(1);
      });

      it('ORG_PROJECT_CREATOR creates projects and apps in its organization', async () => {
        const { token } = await userWith(['ORG_PROJECT_CREATOR']);
        const { projectId, details } = await addProject({ token });
        expect(details.resourceOwner).toBe(gw.defaultOrgId);
        const res = await addApp({ projectId, metadataXml: b64(spMetadata(unique('urn:creator:'))) }, { token });
        expect(res.errors).toBeUndefined();
        const read = await gw.send(ProjectDocument, { id: projectId }, { token });
        expect(read.data!.project!.samlApps).toHaveLength(1);
      });

      it('x-service-orgid of an organization where the caller holds no role is PERMISSION_DENIED; an unknown one too', async () => {
        const orgId = await addOrg();
        const { projectId } = await addProject({ orgId });
        const { token } = await userWith(['ORG_PROJECT_CREATOR']);
        const xml = b64(spMetadata(unique('urn:other-org:')));
        expect(codeOf(await addApp({ projectId, metadataXml: xml }, { token, orgId }))).toBe('PERMISSION_DENIED');
        expect(codeOf(await gw.send(AddProjectDocument, { input: { name: unique('P') } }, { token, orgId }))).toBe('PERMISSION_DENIED');
        expect(codeOf(await addApp({ projectId, metadataXml: xml }, { orgId: 'no-such-org' }))).toBe('PERMISSION_DENIED');
        // with the permission there, the same call works
        const owner = await userWith(['ORG_PROJECT_CREATOR'], orgId);
        expect((await addApp({ projectId, metadataXml: xml }, { token: owner.token, orgId })).errors).toBeUndefined();
      });

      it('an unknown project, and a project of another organization, are NOT_FOUND', async () => {
        const xml = b64(spMetadata(unique('urn:nf:')));
        const unknown = await addApp({ projectId: '123456789', metadataXml: xml });
        expect(codeOf(unknown)).toBe('NOT_FOUND');
        expectRestStatus(unknown, 404);
        const orgId = await addOrg();
        const { projectId } = await addProject({ orgId });
        // acting in the default organization, the project of orgId does not exist
        expect(codeOf(await addApp({ projectId, metadataXml: xml }))).toBe('NOT_FOUND');
        expect(codeOf(await addApp({ projectId, metadataUrl: meta.url('/unreached.xml') }))).toBe('NOT_FOUND');
        expect((await stored(projectId)).sequence).toBe(1);
      });

      it('the project query: null when not in the acting organization; any role there may read; no role is PERMISSION_DENIED', async () => {
        const { projectId } = await addProject();
        expect((await gw.send(ProjectDocument, { id: '42' })).data!.project).toBeNull();
        const orgId = await addOrg();
        const foreign = await addProject({ orgId });
        expect((await gw.send(ProjectDocument, { id: foreign.projectId })).data!.project).toBeNull();
        expect((await gw.send(ProjectDocument, { id: foreign.projectId }, { orgId })).data!.project!.id).toBe(foreign.projectId);
        const manager = await userWith(['ORG_USER_MANAGER']);
        expect((await gw.send(ProjectDocument, { id: projectId }, { token: manager.token })).data!.project!.id).toBe(projectId);
        const plain = await userWith([]);
        expect(codeOf(await gw.send(ProjectDocument, { id: projectId }, { token: plain.token }))).toBe('PERMISSION_DENIED');
        expect(codeOf(await gw.send(ProjectDocument, { id: projectId }, { token: null }))).toBe('UNAUTHENTICATED');
      });
    });
  });
}

samlSuite('projects and SAML apps on the embedded stores', () => ({}));
describeWith('mongo', 'projects and SAML apps on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    const db = `e2e_saml_${Date.now()}`;
    samlSuite('the same suite', () => ({ MONGODB_URL: mongoUrl, MONGODB_DB: db, REDIS_URL: redisUrl, CODE_HMAC_KEY: 'test-key' }));
  });
});
