// The v2beta services (zitadel.user.v2beta.UserService, zitadel.org.v2beta.OrganizationService),
// which @zitadel/node's createUserClient / createOrganizationClient and the Python SDK's users
// API call: the v2 methods the gateway serves answer on v2beta too (src/wire/users-v2beta.ts
// over twin-service.ts; CreateOrganization in orgs-v2beta.ts). Here: the twin check itself,
// REST at ZITADEL's /v2beta paths on the gateway's own port (the RPC protocols run in
// wire.clients.test.ts), the Idempotency-Key, reflection and health.
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { OrganizationService as OrganizationServiceV2 } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { OrganizationService as OrganizationServiceV2beta } from '@zitadel/proto/zitadel/org/v2beta/org_service_pb.js';
import { UserService as UserServiceV2 } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { UserService as UserServiceV2beta } from '@zitadel/proto/zitadel/user/v2beta/user_service_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../src/auth/tokens.ts';
import type { User } from '../src/model/users.ts';
import type { WireDeps } from '../src/wire/context.ts';
import { HealthService } from '../src/wire/health.ts';
import { organizationService } from '../src/wire/orgs-v2.ts';
import { organizationServiceV2beta } from '../src/wire/orgs-v2beta.ts';
import { ServerReflectionV1Service } from '../src/wire/reflection.ts';
import { twinDifferences, twinService } from '../src/wire/twin-service.ts';
import { userService } from '../src/wire/users-v2.ts';
import { userServiceV2beta } from '../src/wire/users-v2beta.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';

const ORIGIN = 'http://localhost:4000';
const PASSWORD = 'Secr3t!pass';
const ERROR_DETAIL = 'type.googleapis.com/zitadel.v1.ErrorDetail';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

let gw: TestGateway;
let wire: WireDeps;
const authenticator = createSoftAuthenticator();

beforeAll(async () => {
  gw = await startGateway({ env: { WEBAUTHN_ORIGINS: ORIGIN } });
  wire = { deps: gw.gateway.deps, ops: gw.gateway.ops, tokens: createTokenVerifier(gw.config), logger: gw.gateway.logger };
});
afterAll(async () => {
  await gw?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  token: string | null = gw.adminToken,
): Promise<Answer> {
  const res = await fetch(`${gw.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A 200 answer's body; anything else fails with the answer in the message. */
async function ok(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const a = await call(method, path, body, headers);
  if (a.status !== 200) throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

const violations = (a: Answer): string[] =>
  a.body.details
    .filter((d: any) => d['@type'] === BAD_REQUEST)
    .flatMap((d: any) => d.fieldViolations.map((v: any) => v.field))
    .sort();

const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;

describe('the twins, checked at start', () => {
  it('v2beta serves exactly the methods v2 serves (UserService), and CreateOrganization for AddOrganization', () => {
    const names = (impl: object) => Object.keys(impl).sort();
    expect(names(userServiceV2beta(wire))).toEqual(names(userService(wire)));
    expect(names(userServiceV2beta(wire))).toEqual([
      'addHumanUser',
      'getUserByID',
      'listUsers',
      'registerU2F',
      'resendEmailCode',
      'resendPhoneCode',
      'setEmail',
      'verifyEmail',
      'verifyPhone',
      'verifyU2FRegistration',
    ]);
    // v2beta's OrganizationService has no AddOrganization: its CreateOrganization is that operation.
    expect(names(organizationService(wire))).toEqual(['addOrganization']);
    expect(OrganizationServiceV2beta.methods.some((m) => m.name === 'AddOrganization')).toBe(false);
    expect(names(organizationServiceV2beta(wire))).toEqual(['createOrganization']);
  });

  it("the one field v2's answers carry that v2beta's have no place for: HumanUser.mfa_init_skipped (the gateway leaves it empty)", () => {
    expect(twinDifferences(UserServiceV2, UserServiceV2beta, userService(wire))).toEqual(['zitadel.user.v2.HumanUser.mfa_init_skipped']);
  });

  it('a service whose messages are no twins is refused when the service is built, naming the difference', () => {
    // management v1's GetUserByID takes `id`, v2's `user_id`: a request would lose its id.
    const getUser = { getUserByID: userService(wire).getUserByID };
    expect(() => twinService(UserServiceV2, ManagementService, getUser as never)).toThrow(
      /zitadel\.management\.v1\.GetUserByIDRequest\.id: no such field in zitadel\.user\.v2\.GetUserByIDRequest/,
    );
    expect(() => twinService(OrganizationServiceV2, OrganizationServiceV2beta, organizationService(wire))).toThrow(
      /has no twin of zitadel\.org\.v2\.OrganizationService\.AddOrganization/,
    );
  });
});

describe("REST at ZITADEL's /v2beta paths, on the gateway's port", () => {
  it('POST /v2beta/organizations, then every v2 UserService method at its /v2beta path, answering as /v2 does', async () => {
    const org = await ok('POST', '/v2beta/organizations', { name: unique('Beta REST ') });
    expect(org.id).toMatch(/^\d+$/);
    expect(Date.parse(org.creationDate)).toBeGreaterThan(0);

    const username = unique('rest');
    const added = await ok('POST', '/v2beta/users/human', {
      username,
      organization: { orgId: org.id },
      profile: { givenName: 'Grace', familyName: 'Hopper', gender: 'GENDER_FEMALE' },
      email: { email: `${username}@example.com`, returnCode: {} },
      phone: { phone: '+41791234567', returnCode: {} },
      password: { password: PASSWORD, changeRequired: false },
    });
    const userId: string = added.userId;
    expect(added.details.resourceOwner).toBe(org.id);
    const email = await ok('POST', `/v2beta/users/${userId}/email`, { email: `${username}.2@example.com`, returnCode: {} });
    await ok('POST', `/v2beta/users/${userId}/email/verify`, { verificationCode: email.verificationCode });
    await ok('POST', `/v2beta/users/${userId}/phone/verify`, { verificationCode: added.phoneCode });
    const registered = await ok('POST', `/v2beta/users/${userId}/u2f`, {});
    const options = registered.publicKeyCredentialCreationOptions;
    const cred = authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id });
    const verified = await ok('POST', `/v2beta/users/${userId}/u2f/${registered.u2fId}`, {
      publicKeyCredential: cred.response,
      tokenName: 'REST key',
    });
    expect(verified.details.sequence).toBe('6');
    expect((await stored(userId)).state.u2fTokens).toMatchObject([{ id: registered.u2fId, state: 'U2F_STATE_READY' }]);

    const beta = await ok('GET', `/v2beta/users/${userId}`);
    expect(beta).toEqual(await ok('GET', `/v2/users/${userId}`));
    expect(beta.user.human).toMatchObject({
      profile: { givenName: 'Grace', familyName: 'Hopper', gender: 'GENDER_FEMALE' },
      email: { email: `${username}.2@example.com`, isVerified: true },
      phone: { phone: '+41791234567', isVerified: true },
    });
    const query = { queries: [{ userNameQuery: { userName: username } }] };
    const listed = await ok('POST', '/v2beta/users', query, { 'x-zitadel-orgid': org.id });
    expect(listed.details.totalResult).toBe('1');
    expect(listed.result).toEqual([beta.user]);
    expect(listed.result).toEqual((await ok('POST', '/v2/users', query, { 'x-zitadel-orgid': org.id })).result);
  });

  it("errors in grpc-gateway's shape, as on /v2: 404, 400 with the fields, 403, 401, 501 for a method not served, 404 code 5 for no route", async () => {
    const missing = await call('GET', '/v2beta/users/999999999');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe(Code.NotFound);
    expect(missing.body.details.map((d: any) => d['@type'])).toContain(ERROR_DETAIL);

    const bad = { profile: { givenName: '', familyName: '' }, email: { email: 'nope' } };
    const [beta, v2] = [await call('POST', '/v2beta/users/human', bad), await call('POST', '/v2/users/human', bad)];
    expect(beta.status).toBe(400);
    expect(violations(beta)).toEqual(violations(v2));
    expect(violations(beta)).toEqual(['email.email', 'profile.family_name', 'profile.given_name']);
    // A field the gateway has no place for is refused as on v2, and nothing is written.
    const totpId = unique('totp');
    const totp = await call('POST', '/v2beta/users/human', {
      userId: totpId,
      profile: { givenName: 'A', familyName: 'B' },
      email: { email: `${totpId}@example.com` },
      totpSecret: 'JBSWY3DPEHPK3PXP',
    });
    expect(totp.status).toBe(400);
    expect(violations(totp)).toEqual(['totp_secret']);
    expect(await gw.gateway.deps.store.load('user', totpId)).toBeNull();

    const plainId = (
      await ok('POST', '/v2beta/users/human', {
        profile: { givenName: 'P', familyName: 'Lain' },
        email: { email: `${unique('p')}@example.com` },
      })
    ).userId;
    const denied = await call('POST', '/v2beta/organizations', { name: unique('Nope ') }, {}, await gw.tokenFor(plainId));
    expect(denied.status).toBe(403);
    expect((await call('GET', `/v2beta/users/${plainId}`, undefined, {}, null)).status).toBe(401);

    const unserved = await call('DELETE', `/v2beta/users/${plainId}`);
    expect(unserved.status).toBe(501);
    expect(unserved.body.code).toBe(Code.Unimplemented);
    expect((await stored(plainId)).state.state).not.toBe('USER_STATE_DELETED');
    const noRoute = await call('GET', '/v2beta/no/such/path');
    expect(noRoute.status).toBe(404);
    expect(noRoute.body).toMatchObject({ code: Code.NotFound, message: 'Not Found' });
  });

  it('an Idempotency-Key on /v2beta replays the first answer; the same key on /v2 is another request', async () => {
    const key = unique('beta-key-');
    const body = { profile: { givenName: 'Idem', familyName: 'Potent' }, email: { email: `${unique('i')}@example.com` } };
    const first = await call('POST', '/v2beta/users/human', body, { 'idempotency-key': key });
    const again = await call('POST', '/v2beta/users/human', body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    const other = await call('POST', '/v2/users/human', body, { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(other.body.message).toMatch(/already used with another request/);
  });
});

describe('before the wire is loaded', () => {
  it("a fresh gateway's first request on a /v2beta path is the wire's: grpc-gateway's 404 for no route, then the routes answer", async () => {
    const fresh = await startGateway();
    try {
      const headers = { authorization: `Bearer ${fresh.adminToken}`, 'content-type': 'application/json' };
      const first = await fetch(`${fresh.baseUrl}/v2beta/no-such-resource`, { headers });
      expect(first.status).toBe(404);
      expect(await first.json()).toEqual({ code: Code.NotFound, message: 'Not Found', details: [] });
      const known = await fetch(`${fresh.baseUrl}/v2beta/users/${fresh.adminId}`, { headers });
      expect(known.status).toBe(200);
      expect((await known.json()).user.userId).toBe(fresh.adminId);
    } finally {
      await fresh.close();
    }
  });
});

describe('reflection and health', () => {
  it('reflection lists the v2beta services and resolves their methods; health knows them', async () => {
    const transport = createGrpcTransport({ baseUrl: gw.baseUrl });
    const reflection: any = createClient(ServerReflectionV1Service, transport);
    async function* requests() {
      yield { host: 'localhost', messageRequest: { case: 'listServices', value: '*' } };
      yield { host: 'localhost', messageRequest: { case: 'fileContainingSymbol', value: 'zitadel.user.v2beta.UserService.GetUserByID' } };
      yield {
        host: 'localhost',
        messageRequest: { case: 'fileContainingSymbol', value: 'zitadel.org.v2beta.OrganizationService.CreateOrganization' },
      };
    }
    const answers: any[] = [];
    for await (const res of reflection.serverReflectionInfo(requests())) answers.push(res);
    const services = answers[0].messageResponse.value.service.map((s: any) => s.name);
    expect(services).toEqual(
      expect.arrayContaining(['zitadel.user.v2beta.UserService', 'zitadel.org.v2beta.OrganizationService', 'zitadel.user.v2.UserService']),
    );
    expect(answers[1].messageResponse.case).toBe('fileDescriptorResponse');
    expect(answers[2].messageResponse.case).toBe('fileDescriptorResponse');

    const health: any = createClient(HealthService, transport);
    for (const service of ['zitadel.user.v2beta.UserService', 'zitadel.org.v2beta.OrganizationService']) {
      expect((await health.check({ service })).status).toBe(1); // SERVING
    }
    const unknown = await health.check({ service: 'zitadel.user.v3.UserService' }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(unknown?.code).toBe(Code.NotFound);
  });
});
