// The wire methods a gateway in front of a ZITADEL-compatible API calls upstream, with ZITADEL's
// own clients (@zitadel/client) over gRPC and Connect on the embedded stores: user v2
// ResendEmailCode / ResendPhoneCode (and their v2beta twins), management ListUserMetadata,
// ListHumanLinkedIDPs, ListHumanAuthFactors, GetMyOrg, ListApps, and Healthz on the auth and
// management services. Each read's values, NOT_FOUND for unknown ids, PERMISSION_DENIED for a
// caller without roles; a resent code verifies (the deliveries are caught by a notifier of the
// test's own); one REST call each for ResendEmailCode, ListUserMetadata and Healthz.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { JsonObject } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../src/model/orgs.ts';
import type { DeliveryJob, Notifier } from '../src/notify/port.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';
import { failure, violationsOf, wireTransport, zitadelClients, type WireKind } from './support/wire-clients.ts';

const ORIGIN = 'http://localhost:4000';
const PASSWORD = 'Secr3t!pass';
const SAML_XML = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url), 'utf8');
const KINDS: WireKind[] = ['grpc', 'connect'];

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const spMetadata = (entityId: string) => SAML_XML.replace('https://sp.example.com/saml/metadata', entityId);
const bytes = (s: string) => new TextEncoder().encode(s);

/** Every delivery job the gateway hands over, code in clear (no queue, no sender). */
function catchingNotifier() {
  const jobs: DeliveryJob[] = [];
  const notifier: Notifier = {
    enqueue: async (job) => void jobs.push(job),
    canDeliver: () => true,
    close: async () => undefined,
  };
  return { jobs, notifier };
}

/** A local HTTP server for a SAML app's metadata_url. */
async function metadataServer(doc: string) {
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(doc));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sp.xml`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('upstream reads and resends over the wire (embedded stores)', () => {
  let gw: TestGateway;
  const { jobs, notifier } = catchingNotifier();
  const authenticator = createSoftAuthenticator();

  beforeAll(async () => {
    gw = await startGateway({ env: { WEBAUTHN_ORIGINS: ORIGIN, SAML_METADATA_ALLOW_PRIVATE: 'true' }, notifier });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const clients = (kind: WireKind, token: string | null = gw.adminToken) => zitadelClients(wireTransport(kind, gw.baseUrl, token));
  const orgHeader = (orgId: string) => ({ headers: { 'x-zitadel-orgid': orgId } });
  const jobFor = (userId: string, kind: DeliveryJob['kind'], after: number) =>
    jobs.slice(after).find((j) => j.userId === userId && j.kind === kind);

  /** A user without any role, and a token for it. */
  const plainCaller = async (kind: WireKind) => {
    const added = await clients(kind).users.addHumanUser({
      profile: { givenName: 'Plain', familyName: 'Caller' },
      email: { email: `${unique('plain')}@example.com`, verification: { case: 'isVerified', value: true } },
      passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: false } },
    });
    return { userId: added.userId, token: await gw.tokenFor(added.userId) };
  };

  describe.each(KINDS)('over %s', (kind) => {
    /** A user with two metadata entries, an identity provider link and two U2F tokens (one pending, one verified). */
    const richUser = async () => {
      const c = clients(kind);
      const idp = await c.mgmt.addOrgOIDCIDP({
        name: unique('idp'),
        issuer: 'https://accounts.example.com',
        clientId: 'client-1',
        clientSecret: 's3cret',
        scopes: ['openid'],
      });
      const added = await c.users.addHumanUser({
        profile: { givenName: 'Ada', familyName: 'Lovelace' },
        email: { email: `${unique('ada')}@example.com`, verification: { case: 'isVerified', value: true } },
        metadata: [
          { key: 'team', value: bytes('analytical engine') },
          { key: 'raw', value: new Uint8Array([0, 255, 1]) },
        ],
        idpLinks: [{ idpId: idp.idpId, userId: 'ext-1', userName: 'ada@idp.example.com' }],
        passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: false } },
      });
      const userId = added.userId;
      const pending = await c.users.registerU2F({ userId });
      const ready = await c.users.registerU2F({ userId });
      const options = ready.publicKeyCredentialCreationOptions as any;
      const cred = authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id });
      await c.users.verifyU2FRegistration({
        userId,
        u2fId: ready.u2fId,
        publicKeyCredential: cred.response as unknown as JsonObject,
        tokenName: 'YubiKey',
      });
      return { userId, idpId: idp.idpId, pendingId: pending.u2fId, readyId: ready.u2fId };
    };

    it('ListUserMetadata, ListHumanLinkedIDPs, ListHumanAuthFactors read what the user holds', async () => {
      const c = clients(kind);
      const u = await richUser();
      const sequence = (await c.mgmt.getUserByID({ id: u.userId })).user!.details!.sequence;

      const metadata = await c.mgmt.listUserMetadata({ id: u.userId });
      expect(metadata.details!.totalResult).toBe(2n);
      expect(metadata.result.map((m) => [m.key, [...m.value]])).toEqual([
        ['team', [...bytes('analytical engine')]],
        ['raw', [0, 255, 1]],
      ]);
      expect(metadata.result[0]!.details).toMatchObject({ sequence, resourceOwner: gw.defaultOrgId });
      const second = await c.mgmt.listUserMetadata({ id: u.userId, query: { offset: 1n, limit: 1 } });
      expect(second.details!.totalResult).toBe(2n);
      expect(second.result.map((m) => m.key)).toEqual(['raw']);

      const links = await c.mgmt.listHumanLinkedIDPs({ userId: u.userId });
      expect(links.details!.totalResult).toBe(1n);
      expect(links.result).toHaveLength(1);
      expect(links.result[0]).toMatchObject({
        userId: u.userId,
        idpId: u.idpId,
        idpName: '',
        providedUserId: 'ext-1',
        providedUserName: 'ada@idp.example.com',
      });

      const factors = await c.mgmt.listHumanAuthFactors({ userId: u.userId });
      expect(factors.result.map((f) => ({ state: f.state, case: f.type.case, value: { ...f.type.value } }))).toEqual([
        { state: 1, case: 'u2f', value: expect.objectContaining({ id: u.pendingId, name: '' }) }, // AUTH_FACTOR_STATE_NOT_READY
        { state: 2, case: 'u2f', value: expect.objectContaining({ id: u.readyId, name: 'YubiKey' }) }, // AUTH_FACTOR_STATE_READY
      ]);
    });

    it('the user reads: NOT_FOUND for an unknown user, PERMISSION_DENIED for a caller without roles; queries are refused', async () => {
      const c = clients(kind);
      const u = await richUser();
      // Thunks, not promises: a call made before the previous one is awaited could reject unobserved.
      for (const call of [
        () => c.mgmt.listUserMetadata({ id: '404404' }),
        () => c.mgmt.listHumanLinkedIDPs({ userId: '404404' }),
        () => c.mgmt.listHumanAuthFactors({ userId: '404404' }),
      ])
        expect((await failure(call())).code).toBe(Code.NotFound);

      const plain = clients(kind, (await plainCaller(kind)).token);
      for (const call of [
        () => plain.mgmt.listUserMetadata({ id: u.userId }),
        () => plain.mgmt.listHumanLinkedIDPs({ userId: u.userId }),
        () => plain.mgmt.listHumanAuthFactors({ userId: u.userId }),
      ])
        expect((await failure(call())).code).toBe(Code.PermissionDenied);

      const filtered = await failure(
        c.mgmt.listUserMetadata({ id: u.userId, queries: [{ query: { case: 'keyQuery', value: { key: 'team' } } }] }),
      );
      expect(filtered.code).toBe(Code.InvalidArgument);
      expect(violationsOf(filtered).map((v) => v.field)).toEqual(['queries[0]']);
    });

    it('GetMyOrg: the caller’s organization, or the header’s; NOT_FOUND for an unknown one, PERMISSION_DENIED for another’s', async () => {
      const c = clients(kind);
      const stored = (await gw.gateway.deps.store.load<Org>('org', gw.defaultOrgId))!;
      const own = (await c.mgmt.getMyOrg({})).org!;
      expect(own).toMatchObject({ id: gw.defaultOrgId, name: stored.state.name, primaryDomain: stored.state.domain, state: 1 });
      expect(own.details).toMatchObject({ sequence: BigInt(stored.sequence), resourceOwner: gw.defaultOrgId });

      const name = unique('Other org ');
      const other = await c.orgs.addOrganization({ name });
      const named = (await c.mgmt.getMyOrg({}, orgHeader(other.organizationId))).org!;
      expect(named).toMatchObject({ id: other.organizationId, name, state: 1 });
      expect(named.primaryDomain).toMatch(/\S/);

      expect((await failure(c.mgmt.getMyOrg({}, orgHeader('404404')))).code).toBe(Code.NotFound);

      const plain = clients(kind, (await plainCaller(kind)).token);
      expect((await plain.mgmt.getMyOrg({})).org!.id).toBe(gw.defaultOrgId);
      expect((await failure(plain.mgmt.getMyOrg({}, orgHeader(other.organizationId)))).code).toBe(Code.PermissionDenied);
      expect((await failure(clients(kind, null).mgmt.getMyOrg({}))).code).toBe(Code.Unauthenticated);
    });

    it('ListApps: the project’s SAML apps, metadata_url as stored; NOT_FOUND for an unknown project, PERMISSION_DENIED without a role', async () => {
      const c = clients(kind);
      const project = await c.mgmt.addProject({ name: unique('project') });
      const xml = await c.mgmt.addSAMLApp({
        projectId: project.id,
        name: 'from xml',
        metadata: { case: 'metadataXml', value: bytes(spMetadata(unique('https://xml-sp.example.com/'))) },
      });
      // Each app needs its own entityID (unique in the instance): a document of this run's own.
      const urlServer = await metadataServer(spMetadata(unique('https://url-sp.example.com/')));
      try {
        const url = await c.mgmt.addSAMLApp({
          projectId: project.id,
          name: 'from url',
          metadata: { case: 'metadataUrl', value: urlServer.url },
        });
        const apps = await c.mgmt.listApps({ projectId: project.id });
        expect(apps.details!.totalResult).toBe(2n);
        expect(apps.result.map((a) => ({ id: a.id, name: a.name, state: a.state, config: a.config.case }))).toEqual([
          { id: xml.appId, name: 'from xml', state: 1, config: 'samlConfig' },
          { id: url.appId, name: 'from url', state: 1, config: 'samlConfig' },
        ]);
        expect((apps.result[0]!.config.value as any).metadata.case).toBeUndefined();
        expect((apps.result[1]!.config.value as any).metadata).toEqual({ case: 'metadataUrl', value: urlServer.url });
        expect(apps.result[0]!.details).toMatchObject({ sequence: xml.details!.sequence, resourceOwner: gw.defaultOrgId });
        expect(apps.result[1]!.details).toMatchObject({ sequence: url.details!.sequence, resourceOwner: gw.defaultOrgId });
        const page = await c.mgmt.listApps({ projectId: project.id, query: { offset: 0n, limit: 1 } });
        expect(page.result.map((a) => a.id)).toEqual([xml.appId]);
      } finally {
        await urlServer.close();
      }

      expect((await failure(c.mgmt.listApps({ projectId: '404404' }))).code).toBe(Code.NotFound);
      const plain = clients(kind, (await plainCaller(kind)).token);
      expect((await failure(plain.mgmt.listApps({ projectId: project.id }))).code).toBe(Code.PermissionDenied);
    });

    it('Healthz on the auth and management services answers {} with no token, and with a bad one', async () => {
      for (const token of [null, 'not-a-token']) {
        const c = clients(kind, token);
        expect(await c.mgmt.healthz({})).toMatchObject({});
        expect(await c.auth.healthz({})).toMatchObject({});
        expect((await failure(c.auth.getMyUser({}))).code).toBe(Code.Unauthenticated);
      }
    });

    it('ResendEmailCode sends a fresh code that verifies (the earlier one no longer does); v2beta too; return_code is refused', async () => {
      const c = clients(kind);
      const added = await c.users.addHumanUser({
        profile: { givenName: 'Re', familyName: 'Send' },
        email: { email: `${unique('re')}@example.com`, verification: { case: 'returnCode', value: {} } },
      });
      const userId = added.userId;
      const first = added.emailCode!;
      expect(first).toMatch(/\S/);

      const before = jobs.length;
      const template = 'https://resend.example/v?u={{.UserID}}&c={{.Code}}';
      const res = await c.users.resendEmailCode({ userId, verification: { case: 'sendCode', value: { urlTemplate: template } } });
      expect(res.details).toMatchObject({ sequence: added.details!.sequence, resourceOwner: gw.defaultOrgId });
      expect(res.verificationCode).toBeUndefined();
      const job = jobFor(userId, 'verify-email-on-change', before)!;
      expect(job).toMatchObject({ urlTemplate: template, orgId: gw.defaultOrgId });

      const refused = await failure(c.users.resendEmailCode({ userId, verification: { case: 'returnCode', value: {} } }));
      expect(refused.code).toBe(Code.InvalidArgument);
      expect(violationsOf(refused).map((v) => v.field)).toEqual(['return_code']);

      // v2beta, without a verification: the default link, and the code of this send replaces the last.
      const beforeBeta = jobs.length;
      await c.usersV2beta.resendEmailCode({ userId });
      const beta = jobFor(userId, 'verify-email-on-change', beforeBeta)!;
      expect(beta.urlTemplate).toBeUndefined();
      const refusedBeta = await failure(c.usersV2beta.resendEmailCode({ userId, verification: { case: 'returnCode', value: {} } }));
      expect(violationsOf(refusedBeta).map((v) => v.field)).toEqual(['return_code']);

      for (const stale of new Set([first, job.code].filter((code) => code !== beta.code)))
        expect((await failure(c.users.verifyEmail({ userId, verificationCode: stale }))).code).toBe(Code.InvalidArgument);
      await c.users.verifyEmail({ userId, verificationCode: beta.code });
      expect((await c.users.getUserByID({ userId })).user!.type.value).toMatchObject({ email: { isVerified: true } });
      expect((await failure(c.users.resendEmailCode({ userId }))).code).toBe(Code.FailedPrecondition);
    });

    it('ResendPhoneCode sends a fresh code that verifies; return_code is refused', async () => {
      const c = clients(kind);
      const added = await c.users.addHumanUser({
        profile: { givenName: 'Re', familyName: 'Phone' },
        email: { email: `${unique('ph')}@example.com`, verification: { case: 'isVerified', value: true } },
        phone: { phone: '+41 79 555 00 11', verification: { case: 'sendCode', value: {} } },
      });
      const userId = added.userId;
      const refused = await failure(c.users.resendPhoneCode({ userId, verification: { case: 'returnCode', value: {} } }));
      expect(refused.code).toBe(Code.InvalidArgument);
      expect(violationsOf(refused).map((v) => v.field)).toEqual(['return_code']);

      const before = jobs.length;
      const res = await c.users.resendPhoneCode({ userId, verification: { case: 'sendCode', value: {} } });
      expect(res.details).toMatchObject({ sequence: added.details!.sequence, resourceOwner: gw.defaultOrgId });
      const job = jobFor(userId, 'verify-phone', before)!;
      expect(job.to).toMatch(/^\+41/);
      await c.users.verifyPhone({ userId, verificationCode: job.code });
      expect((await c.users.getUserByID({ userId })).user!.type.value).toMatchObject({ phone: { isVerified: true } });
    });

    it('the resends: NOT_FOUND for an unknown user, PERMISSION_DENIED for a caller without roles', async () => {
      const c = clients(kind);
      expect((await failure(c.users.resendEmailCode({ userId: '404404' }))).code).toBe(Code.NotFound);
      expect((await failure(c.users.resendPhoneCode({ userId: '404404' }))).code).toBe(Code.NotFound);
      const { userId } = await c.users.addHumanUser({
        profile: { givenName: 'Not', familyName: 'Yours' },
        email: { email: `${unique('ny')}@example.com` },
      });
      const plain = clients(kind, (await plainCaller(kind)).token);
      expect((await failure(plain.users.resendEmailCode({ userId }))).code).toBe(Code.PermissionDenied);
      expect((await failure(plain.users.resendPhoneCode({ userId }))).code).toBe(Code.PermissionDenied);
    });
  });

  describe('REST at ZITADEL’s paths', () => {
    const rest = async (method: string, path: string, body?: unknown, token: string | null = gw.adminToken) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(`${gw.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as any };
    };

    it('POST /v2/users/{user_id}/email/resend sends a code', async () => {
      const c = clients('grpc');
      const { userId } = await c.users.addHumanUser({
        profile: { givenName: 'Rest', familyName: 'Resend' },
        email: { email: `${unique('rest')}@example.com` },
      });
      const before = jobs.length;
      const res = await rest('POST', `/v2/users/${userId}/email/resend`, { sendCode: { urlTemplate: 'https://r.example/{{.Code}}' } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.details).toMatchObject({ resourceOwner: gw.defaultOrgId });
      expect(jobFor(userId, 'verify-email-on-change', before)).toMatchObject({ urlTemplate: 'https://r.example/{{.Code}}' });
      const refused = await rest('POST', `/v2/users/${userId}/email/resend`, { returnCode: {} });
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe(Code.InvalidArgument);
    });

    it('POST /management/v1/users/{id}/metadata/_search lists the metadata, values as base64', async () => {
      const c = clients('grpc');
      const { userId } = await c.users.addHumanUser({
        profile: { givenName: 'Rest', familyName: 'Meta' },
        email: { email: `${unique('meta')}@example.com` },
        metadata: [{ key: 'team', value: bytes('analytical engine') }],
      });
      const res = await rest('POST', `/management/v1/users/${userId}/metadata/_search`, {});
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.details.totalResult).toBe('1');
      expect(res.json.result).toEqual([
        expect.objectContaining({ key: 'team', value: Buffer.from('analytical engine').toString('base64') }),
      ]);
      expect((await rest('POST', '/management/v1/users/404404/metadata/_search', {})).status).toBe(404);
    });

    it('GET /management/v1/healthz and /auth/v1/healthz answer {} without a token', async () => {
      expect(await rest('GET', '/management/v1/healthz', undefined, null)).toEqual({ status: 200, json: {} });
      expect(await rest('GET', '/auth/v1/healthz', undefined, null)).toEqual({ status: 200, json: {} });
    });
  });
});
