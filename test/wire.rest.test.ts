// REST/JSON as grpc-gateway serves it, with plain fetch at the paths and verbs of the
// google.api.http options in @zitadel/proto's descriptors (src/wire/rest.ts), end to end
// through the real service implementations, commands and stores of a running gateway.
// Until the REST handler is wired into the gateway's port (src/http listen's WireRoute), it is
// served here on its own node:http server over that gateway's deps.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect as http2Connect, createServer as createHttp2Server, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { AuthFactorState } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { AuthFactors, UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { create, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserDocument } from './generated/graphql.ts';
import { createTokenVerifier } from '../src/auth/tokens.ts';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { AppError } from '../src/errors.ts';
import { newRequestState, type RequestState } from '../src/http/request-state.ts';
import type { User } from '../src/model/users.ts';
import { requestFacts, type WireDeps } from '../src/wire/context.ts';
import { createRestHandler, restService, type RestHandler } from '../src/wire/rest.ts';
import { writeRestError } from '../src/wire/rest-errors.ts';
import { createWireRoute } from '../src/wire/rest-route.ts';
import { wireServices } from '../src/wire/index.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { h2Request } from './support/grpc-raw.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';

const ORIGIN = 'http://localhost:4000';
const PASSWORD = 'Secr3t!pass';
const SAML_XML = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url), 'utf8');
const SMALL_CAP = 1024;

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

let gw: TestGateway;
let rest: RestHandler;
let small: RestHandler;
let server: Server;
let h2: Http2Server;
let base: string;
let h2Base: string;
/** The request state handed to the handler per x-request-id, as the edge would. */
const states = new Map<string, RequestState>();
const authenticator = createSoftAuthenticator();

const listenOn = (s: Server | Http2Server) =>
  new Promise<string>((resolve) => s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));

beforeAll(async () => {
  gw = await startGateway({ env: { WEBAUTHN_ORIGINS: ORIGIN } });
  const wire: WireDeps = {
    deps: gw.gateway.deps,
    ops: gw.gateway.ops,
    tokens: createTokenVerifier(gw.config),
    logger: gw.gateway.logger,
  };
  const services = wireServices(wire);
  rest = createRestHandler(services, {
    readMaxBytes: maxRequestBodyBytes(gw.config),
    interceptors: [requestFacts],
    logger: gw.gateway.logger,
  });
  small = createRestHandler(services, {
    readMaxBytes: SMALL_CAP,
    interceptors: [requestFacts],
    logger: gw.gateway.logger,
  });
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const handler = req.headers['x-test-cap'] === 'small' ? small : rest;
    if (!handler.matchesPath(path)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not a REST path');
      return;
    }
    const id = req.headers['x-request-id'];
    let state: RequestState | undefined;
    if (typeof id === 'string') {
      state = newRequestState(id, '127.0.0.1');
      states.set(id, state);
    }
    handler.handler(req, res, state);
  });
  h2 = createHttp2Server((req, res) => rest.handler(req, res));
  base = await listenOn(server);
  h2Base = await listenOn(h2);
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await new Promise((r) => h2?.close(r));
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
  opts: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const token = opts.token === undefined ? gw.adminToken : opts.token;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...opts.headers,
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** A 200 answer's body; anything else fails with the answer in the message. */
async function ok(method: string, path: string, body?: unknown, opts?: Parameters<typeof call>[3]) {
  const a = await call(method, path, body, opts);
  if (a.status !== 200) throw new Error(`${method} ${path}: ${a.status} ${JSON.stringify(a.body)}`);
  expect(a.headers.get('content-type')).toBe('application/json');
  return a.body;
}

const ERROR_DETAIL = 'type.googleapis.com/zitadel.v1.ErrorDetail';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

/** grpc-gateway's error body: {code, message, details: [Any JSON]} and the status of its table. */
function expectError(a: Answer, status: number, code: number) {
  expect(a.status, JSON.stringify(a.body)).toBe(status);
  expect(a.headers.get('content-type')).toBe('application/json');
  expect(Object.keys(a.body).sort()).toEqual(['code', 'details', 'message']);
  expect(a.body.code).toBe(code);
  expect(typeof a.body.message).toBe('string');
  expect(Array.isArray(a.body.details)).toBe(true);
  for (const d of a.body.details) expect(d['@type']).toMatch(/^type\.googleapis\.com\//);
}

const violations = (a: Answer): string[] =>
  a.body.details
    .filter((d: any) => d['@type'] === BAD_REQUEST)
    .flatMap((d: any) => d.fieldViolations.map((v: any) => v.field))
    .sort();

const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;

/** A SAML SP metadata document with its own entityID (entityIDs are unique in the instance), base64 as proto3 JSON bytes. */
const samlXmlBase64 = () =>
  Buffer.from(SAML_XML.replace('https://sp.example.com/saml/metadata', `https://${unique('sp')}.example.com/saml`)).toString('base64');

const addUser = async (extra: Record<string, unknown> = {}, token?: string | null) =>
  call(
    'POST',
    '/v2/users/human',
    {
      profile: { givenName: 'Ada', familyName: 'Lovelace' },
      email: { email: `${unique('u')}@example.com`, isVerified: true },
      password: { password: PASSWORD, changeRequired: false },
      ...extra,
    },
    { token },
  );

describe('REST routes from the descriptors', () => {
  it('compiles the google.api.http rules with the base_path prefix of v1 files and the absolute v2 paths', () => {
    const byMethod = new Map(rest.routes.map((r) => [r.method, `${r.verb} ${r.template}`]));
    expect(byMethod.get('zitadel.auth.v1.AuthService.UpdateMyProfile')).toBe('PUT /auth/v1/users/me/profile');
    expect(byMethod.get('zitadel.management.v1.ManagementService.UpdateHumanProfile')).toBe('PUT /management/v1/users/{user_id}/profile');
    expect(byMethod.get('zitadel.management.v1.ManagementService.UpdateOrgIDPOIDCConfig')).toBe(
      'PUT /management/v1/idps/{idp_id}/oidc_config',
    );
    expect(byMethod.get('zitadel.management.v1.ManagementService.AddSAMLApp')).toBe('POST /management/v1/projects/{project_id}/apps/saml');
    expect(byMethod.get('zitadel.user.v2.UserService.AddHumanUser')).toBe('POST /v2/users/human');
    expect(byMethod.get('zitadel.user.v2.UserService.VerifyU2FRegistration')).toBe('POST /v2/users/{user_id}/u2f/{u2f_id}');
    expect(byMethod.get('zitadel.user.v2.UserService.GetUserByID')).toBe('GET /v2/users/{user_id}');
    expect(byMethod.get('zitadel.org.v2.OrganizationService.AddOrganization')).toBe('POST /v2/organizations');
    // Every rule of the four services, including {name=**} forms.
    expect(rest.routes.length).toBeGreaterThan(350);
    expect(rest.routes.some((r) => r.template.includes('=**}'))).toBe(true);
  });

  it('matches by verb and path; a literal segment wins over a variable', () => {
    expect(rest.matches('PUT', '/management/v1/users/123/profile')).toBe(true);
    expect(rest.matches('POST', '/management/v1/users/123/profile')).toBe(false);
    expect(rest.matchesPath('/management/v1/users/123/profile')).toBe(true);
    expect(rest.matches('POST', '/v2/users/human')).toBe(true);
    expect(rest.matchesPath('/graphql')).toBe(false);
    expect(rest.matchesPath('/zitadel.auth.v1.AuthService/GetMyUser')).toBe(false);
    expect(rest.matchesPath('/management/v1/nothing/here')).toBe(false);
    expect(rest.matchesPath('/health')).toBe(false);
  });
});

describe('the nine operations over REST, read back over REST', () => {
  it('PUT /auth/v1/users/me/profile, then GET /auth/v1/users/me', async () => {
    const before = await ok('GET', '/auth/v1/users/me');
    const displayName = unique('Admin ');
    const res = await ok('PUT', '/auth/v1/users/me/profile', {
      firstName: 'Grace',
      lastName: 'Hopper',
      nickName: 'amazing',
      displayName,
      gender: 'GENDER_FEMALE',
    });
    // uint64 as a string, timestamps in RFC 3339.
    expect(res.details.sequence).toBe(String(BigInt(before.user.details.sequence) + 1n));
    expect(res.details.resourceOwner).toBe(gw.defaultOrgId);
    expect(res.details.changeDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const me = (await ok('GET', '/auth/v1/users/me')).user;
    expect(me.id).toBe(gw.adminId);
    expect(me.details.sequence).toBe(res.details.sequence);
    expect(me.human.profile).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      nickName: 'amazing',
      displayName,
      gender: 'GENDER_FEMALE',
    });
  });

  it('POST /v2/users/human (with an unknown field and proto field names), then the v1 and v2 user methods', async () => {
    const email = `${unique('ada')}@example.com`;
    const added = await ok('POST', '/v2/users/human', {
      username: unique('ada'),
      organization: { org_id: gw.defaultOrgId },
      profile: {
        given_name: 'Ada',
        familyName: 'Lovelace',
        preferredLanguage: 'en',
        gender: 'GENDER_FEMALE',
      },
      email: { email, returnCode: {} },
      metadata: [
        {
          key: 'team',
          value: Buffer.from('analytical engine').toString('base64'),
        },
      ],
      password: { password: PASSWORD, changeRequired: true },
      notAFieldOfAddHumanUserRequest: { anything: [1, 2, 3] },
    });
    const userId: string = added.userId;
    expect(userId).toMatch(/^\d+$/);
    expect(added.emailCode).toMatch(/\S/);
    expect(added.details.resourceOwner).toBe(gw.defaultOrgId);
    let sequence = BigInt(added.details.sequence);

    const read = await ok('GET', `/v2/users/${userId}`);
    expect(read.user.userId).toBe(userId);
    expect(read.details.sequence).toBe(String(sequence));
    expect(read.details.creationDate).toMatch(/Z$/);
    expect(read.user.human.profile).toMatchObject({
      givenName: 'Ada',
      familyName: 'Lovelace',
      preferredLanguage: 'en',
      gender: 'GENDER_FEMALE',
    });
    expect(read.user.human.email).toEqual({ email });
    expect(read.user.human.passwordChangeRequired).toBe(true);
    expect((await stored(userId)).state.metadata).toEqual([
      {
        key: 'team',
        value: Buffer.from('analytical engine').toString('base64'),
      },
    ]);

    // Unknown fields are dropped, as with protojson's DiscardUnknown; an enum name the enum does not
    // have is not (protojson would drop it too, and the field then reads as UNSPECIFIED): refused, nothing written.
    const refused = await call('PUT', `/management/v1/users/${userId}/profile`, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      gender: 'NOT_A_GENDER',
      extra: true,
    });
    expectError(refused, 400, 3);
    const unchanged = (await ok('GET', `/v2/users/${userId}`)).user;
    expect(unchanged.human.profile.gender).toBe('GENDER_FEMALE');
    expect(unchanged.details.sequence).toBe(String(sequence));

    // PUT /management/v1/users/{user_id}/profile: the path variable wins over a user_id in the body.
    const profile = await ok('PUT', `/management/v1/users/${userId}/profile`, {
      userId: gw.adminId,
      firstName: 'Augusta Ada',
      lastName: 'King',
      displayName: 'Countess',
      gender: 'GENDER_FEMALE',
    });
    expect(profile.details.sequence).toBe(String(++sequence));
    expect(profile.details.creationDate).toMatch(/Z$/);
    const v1 = (await ok('GET', `/management/v1/users/${userId}`)).user;
    expect(v1.id).toBe(userId);
    expect(v1.human.profile).toMatchObject({
      firstName: 'Augusta Ada',
      lastName: 'King',
      displayName: 'Countess',
    });
    expect((await ok('GET', '/auth/v1/users/me')).user.human.profile.firstName).not.toBe('Augusta Ada');

    // POST /v2/users/{user_id}/email with return_code, then verify.
    const newEmail = `${unique('king')}@example.com`;
    const set = await ok('POST', `/v2/users/${userId}/email`, {
      email: newEmail,
      returnCode: {},
    });
    expect(set.details.sequence).toBe(String(++sequence));
    expect(set.verificationCode).toMatch(/\S/);
    const verified = await ok('POST', `/v2/users/${userId}/email/verify`, {
      verificationCode: set.verificationCode,
    });
    expect(verified.details.sequence).toBe(String(++sequence));
    expect((await ok('GET', `/v2/users/${userId}`)).user.human.email).toEqual({
      email: newEmail,
      isVerified: true,
    });

    // PUT /management/v1/users/{user_id}/phone
    const phone = await ok('PUT', `/management/v1/users/${userId}/phone`, {
      phone: '+41791234567',
      isPhoneVerified: true,
    });
    expect(phone.details.sequence).toBe(String(++sequence));
    expect((await ok('GET', `/management/v1/users/${userId}`)).user.human.phone).toMatchObject({
      phone: '+41791234567',
      isPhoneVerified: true,
    });

    // POST /management/v1/users/{user_id}/password
    const password = await ok('POST', `/management/v1/users/${userId}/password`, { password: 'N3w!secret', noChangeRequired: true });
    expect(password.details.sequence).toBe(String(++sequence));
    const after = await ok('GET', `/v2/users/${userId}`);
    expect(after.user.human.passwordChangeRequired).toBeUndefined(); // false: proto3 JSON leaves it out
    expect(after.details.sequence).toBe(String(sequence));
    expect(await gw.gateway.deps.hasher.verify('N3w!secret', (await stored(userId)).state.passwordHash!)).toBe(true);
  });

  it('POST /management/v1/idps/oidc, then PUT /management/v1/idps/{idp_id}/oidc_config, then GET /management/v1/idps/{id}', async () => {
    const added = await ok('POST', '/management/v1/idps/oidc', {
      name: unique('idp'),
      issuer: 'https://accounts.example.com',
      clientId: 'client-1',
      clientSecret: 's3cret',
      scopes: ['openid', 'email'],
      displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
    });
    expect(added.idpId).toMatch(/^\d+$/);
    expect(added.details.resourceOwner).toBe(gw.defaultOrgId);
    const updated = await ok('PUT', `/management/v1/idps/${added.idpId}/oidc_config`, {
      issuer: 'https://login.example.org',
      client_id: 'client-2',
      scopes: ['openid', 'profile'],
      displayNameMapping: 1,
      usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
    });
    expect(updated.details.sequence).toBe(String(BigInt(added.details.sequence) + 1n));
    const idp = (await ok('GET', `/management/v1/idps/${added.idpId}`)).idp;
    expect(idp.id).toBe(added.idpId);
    expect(idp.details.sequence).toBe(updated.details.sequence);
    expect(idp.oidcConfig).toMatchObject({
      issuer: 'https://login.example.org',
      clientId: 'client-2',
      scopes: ['openid', 'profile'],
      displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
      usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
    });
  });

  it('POST /management/v1/projects, then POST /management/v1/projects/{project_id}/apps/saml with metadata_xml, then GET the project', async () => {
    const name = unique('project');
    const project = await ok('POST', '/management/v1/projects', { name });
    expect(project.id).toMatch(/^\d+$/);
    const app = await ok('POST', `/management/v1/projects/${project.id}/apps/saml`, { name: 'sp', metadataXml: samlXmlBase64() });
    expect(app.appId).toMatch(/^\d+$/);
    expect(app.details.sequence).toBe(String(BigInt(project.details.sequence) + 1n));
    const read = (await ok('GET', `/management/v1/projects/${project.id}`)).project;
    expect(read).toMatchObject({ id: project.id, name });
    expect(read.details.sequence).toBe(app.details.sequence);
  });

  it('POST /v2/users/{user_id}/u2f, then POST /v2/users/{user_id}/u2f/{u2f_id} with a software authenticator', async () => {
    const { body: user } = await addUser();
    const userId: string = user.userId;
    const registered = await ok('POST', `/v2/users/${userId}/u2f`, {});
    expect(registered.u2fId).toMatch(/^\d+$/);
    const options = registered.publicKeyCredentialCreationOptions;
    expect(options.rp.id).toBe('localhost');
    const cred = authenticator.create({
      challenge: options.challenge,
      origin: ORIGIN,
      rpId: options.rp.id,
    });
    const verified = await ok('POST', `/v2/users/${userId}/u2f/${registered.u2fId}`, {
      publicKeyCredential: cred.response,
      tokenName: 'YubiKey',
    });
    expect(verified.details.sequence).toBe(String(BigInt(registered.details.sequence) + 1n));
    expect((await stored(userId)).state.u2fTokens).toMatchObject([{ id: registered.u2fId, name: 'YubiKey', state: 'U2F_STATE_READY' }]);
  });
});

describe('REST errors as grpc-gateway writes them', () => {
  it('malformed JSON, a body that is not an object, and a body that does not fit the message: 400, code 3', async () => {
    const path = `/management/v1/users/${gw.adminId}/profile`;
    const malformed = await call('PUT', path, '{"firstName": "A", ');
    expectError(malformed, 400, 3);
    expect(malformed.body.message).toMatch(/^invalid JSON body/);
    const secret = await call('PUT', path, '{"firstName": "Sup3rSecret!" oops}');
    expectError(secret, 400, 3);
    expect(secret.body.message).not.toContain('Sup3rSecret'); // V8's parser quotes the body; the answer does not
    expectError(await call('PUT', path, '[1, 2]'), 400, 3);
    const wrongType = await call('PUT', path, { firstName: 5, lastName: 'X' });
    expectError(wrongType, 400, 3);
    expect(wrongType.body.message).toMatch(/first_name.*from JSON/);
    expect(wrongType.body.details).toEqual([]);
    expectError(await call('PUT', path, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) as never), 400, 3);
  });

  it('UNAUTHENTICATED without a token and with a forged one: 401, code 16', async () => {
    const none = await call('GET', '/auth/v1/users/me', undefined, {
      token: null,
    });
    expectError(none, 401, 16);
    expect(none.body.details.map((d: any) => d['@type'])).toContain(ERROR_DETAIL);
    const forged = gw.adminToken.slice(0, -4) + (gw.adminToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expectError(
      await call('PUT', `/management/v1/users/${gw.adminId}/profile`, { firstName: 'X', lastName: 'Y' }, { token: forged }),
      401,
      16,
    );
  });

  it('PERMISSION_DENIED: 403, code 7, for x-zitadel-orgid / x-service-orgid of an organization without a role, and a plain user', async () => {
    const other = await ok('POST', '/v2/organizations', {
      name: unique('Other org '),
    });
    expect(other.organizationId).toMatch(/^\d+$/);
    const { body: owner } = await addUser();
    await ok('POST', '/management/v1/orgs/me/members', {
      userId: owner.userId,
      roles: ['ORG_OWNER'],
    });
    const ownerToken = await gw.tokenFor(owner.userId);
    const { body: target } = await addUser();
    await ok('PUT', `/management/v1/users/${target.userId}/profile`, { firstName: 'Changed', lastName: 'ByOwner' }, { token: ownerToken });
    for (const header of ['x-zitadel-orgid', 'x-service-orgid']) {
      const denied = await call(
        'PUT',
        `/management/v1/users/${target.userId}/profile`,
        { firstName: 'No', lastName: 'Way' },
        { token: ownerToken, headers: { [header]: other.organizationId } },
      );
      expectError(denied, 403, 7);
    }
    const { body: plain } = await addUser();
    expectError(await addUser({}, await gw.tokenFor(plain.userId)), 403, 7);
  });

  it('NOT_FOUND (404, 5), ALREADY_EXISTS (409, 6), FAILED_PRECONDITION (409, 9: SPEC.md\'s "409 precondition failed"), with ZITADEL\'s ErrorDetail', async () => {
    const missing = await call('PUT', '/management/v1/users/999999999/profile', { firstName: 'A', lastName: 'B' });
    expectError(missing, 404, 5);
    const [detail] = missing.body.details.filter((d: any) => d['@type'] === ERROR_DETAIL);
    expect(detail.id).toMatch(/^NOT_FOUND-[0-9a-z]+$/);
    expect(detail.message).toBe(missing.body.message);
    expect(detail.message.endsWith(`(${detail.id})`)).toBe(true);
    expectError(await call('GET', '/management/v1/users/999999999'), 404, 5);
    expectError(await call('GET', '/v2/users/999999999'), 404, 5);

    const userId = unique('fixed');
    expect((await addUser({ userId })).status).toBe(200);
    expectError(await addUser({ userId }), 409, 6);

    const profile = { firstName: 'Same', lastName: 'Profile' };
    await ok('PUT', `/management/v1/users/${userId}/profile`, profile);
    const same = await call('PUT', `/management/v1/users/${userId}/profile`, profile);
    expectError(same, 409, 9);
    expect(same.body.details.map((d: any) => d['@type'])).toEqual([ERROR_DETAIL]);
  });

  it('INVALID_ARGUMENT: 400, code 3, with google.rpc.BadRequest naming every violated field in snake_case', async () => {
    const profile = await call('PUT', `/management/v1/users/${gw.adminId}/profile`, {
      firstName: ' ',
      lastName: '',
      preferredLanguage: 'x'.repeat(11),
    });
    expectError(profile, 400, 3);
    expect(violations(profile)).toEqual(['first_name', 'last_name', 'preferred_language']);
    expect(profile.body.details.find((d: any) => d['@type'] === BAD_REQUEST).fieldViolations[0]).toEqual({
      field: expect.any(String),
      description: expect.any(String),
    });

    const add = await call('POST', '/v2/users/human', {
      profile: { givenName: '', familyName: '' },
      email: { email: 'not-an-email', sendCode: { urlTemplate: '' } },
      metadata: [{ key: 'k', value: '' }],
      password: { password: 'weak' },
      organization: { orgDomain: ' ' },
    });
    expectError(add, 400, 3);
    expect(violations(add)).toEqual(
      expect.arrayContaining([
        'email.email',
        'metadata[0].value',
        'organization.org_domain',
        'password.password',
        'profile.family_name',
        'profile.given_name',
      ]),
    );

    const saml = await call('POST', '/management/v1/projects/1/apps/saml', {
      name: 'x',
    });
    expect(violations(saml)).toEqual(['metadata_url', 'metadata_xml']);
  });

  it('a method with a REST rule that the gateway does not implement: 501, code 12; a wrong verb on a known path: 405 with code 12 "Method Not Allowed"', async () => {
    const getIAM = await call('GET', '/management/v1/iam');
    expectError(getIAM, 501, 12);
    expect(getIAM.body.message).toContain('GetIAM');
    expectError(await call('DELETE', `/v2/users/${gw.adminId}`), 501, 12);
    // grpc-gateway's routing error: HTTP 405, UNIMPLEMENTED's body.
    const wrongVerb = await call('PATCH', '/management/v1/users/1/profile', {});
    expectError(wrongVerb, 405, 12);
    expect(wrongVerb.body).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
  });

  it('a body over readMaxBytes: 413 with code 8 (RESOURCE_EXHAUSTED), declared or chunked; the server keeps serving', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(SMALL_CAP * 2) });
    const declared = await call('POST', '/management/v1/projects', big, {
      headers: { 'x-test-cap': 'small' },
    });
    expectError(declared, 413, 8);
    const chunks = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const chunked = await fetch(`${base}/management/v1/projects`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${gw.adminToken}`,
        'x-test-cap': 'small',
      },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await chunked.json()).code).toBe(8);
    const fits = await call('POST', '/management/v1/projects', { name: unique('p') }, { headers: { 'x-test-cap': 'small' } });
    expect(fits.status).toBe(200);
  });

  it('an unexpected failure is INTERNAL (500, 13) "Unexpected error.", logged, with nothing of the cause', async () => {
    const { hasher } = gw.gateway.deps;
    const hash = hasher.hash;
    hasher.hash = async () => {
      throw new Error('driver said: mongodb://user:hunter2@db');
    };
    try {
      const err = await call('POST', `/management/v1/users/${gw.adminId}/password`, { password: 'An0ther!secret' });
      expectError(err, 500, 13);
      expect(err.body.message).toBe('Unexpected error.');
      expect(JSON.stringify(err.body)).not.toContain('hunter2');
    } finally {
      hasher.hash = hash;
    }
    expect(gw.logs.some((l) => l.includes('unexpected error') && l.includes('SetHumanPassword') && l.includes('hunter2'))).toBe(true);
  });
});

describe("REST with the edge's request state and over HTTP/2", () => {
  it("the method and the error codes go on the request state (for the edge's log line and metrics), as over the other transports", async () => {
    const okId = unique('rest-ok-');
    await ok('GET', '/auth/v1/users/me', undefined, {
      headers: { 'x-request-id': okId },
    });
    expect(states.get(okId)).toMatchObject({
      operationName: 'GetMyUser',
      operationType: 'query',
      rootField: 'zitadel.auth.v1.AuthService/GetMyUser',
      errorCodes: [],
    });
    const failId = unique('rest-fail-');
    await call('PUT', '/management/v1/users/999999999/profile', { firstName: 'A', lastName: 'B' }, { headers: { 'x-request-id': failId } });
    expect(states.get(failId)).toMatchObject({
      operationName: 'UpdateHumanProfile',
      operationType: 'mutation',
      errorCodes: ['NOT_FOUND'],
    });
    const badId = unique('rest-bad-');
    await call('PUT', '/management/v1/users/1/profile', '{', {
      headers: { 'x-request-id': badId },
    });
    expect(states.get(badId)).toMatchObject({
      operationName: 'UpdateHumanProfile',
      errorCodes: ['INVALID_ARGUMENT'],
    });
  });

  it("the edge's meter sees every body chunk before it is kept; its refusal stops the read and is the answer, and the command does not run", async () => {
    /** A meter as the edge's would be: refuses once more than `budget` bytes came. */
    const metered = (budget: number, refusal: AppError) => {
      const seen: number[] = [];
      const meter = (bytes: number) => {
        seen.push(bytes);
        return seen.reduce((a, b) => a + b, 0) > budget ? refusal : null;
      };
      return { seen, meter };
    };
    let current: ReturnType<typeof metered> | undefined;
    const lastState: { state?: RequestState } = {};
    const s = createServer((req, res) => {
      const state = newRequestState(null, '127.0.0.1');
      state.meter = current!.meter;
      lastState.state = state;
      rest.handler(req, res, state);
    });
    const url = await listenOn(s);
    /** A chunked body (no Content-Length), in pieces of at most 256 bytes. */
    const chunked = async (path: string, text: string) => {
      const bytes = new TextEncoder().encode(text);
      const res = await fetch(`${url}${path}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
        body: new ReadableStream({
          start(c) {
            for (let i = 0; i < bytes.length; i += 256) c.enqueue(bytes.slice(i, i + 256));
            c.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      return { status: res.status, headers: res.headers, body: await res.json() } as Answer;
    };
    try {
      const { body: user } = await addUser();
      const userId: string = user.userId;
      const before = await stored(userId);
      const path = `/management/v1/users/${userId}/profile`;
      const body = JSON.stringify({ firstName: 'Metered', lastName: 'Out', padding: 'x'.repeat(4000) });

      current = metered(
        1000,
        new AppError('RESOURCE_EXHAUSTED', 'Too many request-body bytes in flight from this client address; retry after 1 s.'),
      );
      const refused = await chunked(path, body);
      expectError(refused, 429, 8);
      expect(refused.body.message).toMatch(/^Too many request-body bytes in flight/);
      expect(refused.body.details.map((d: any) => d['@type'])).toEqual([ERROR_DETAIL]);
      // Reading stopped at the chunk that went over: nothing after it was metered.
      const sum = current.seen.reduce((a, b) => a + b, 0);
      expect(sum).toBeGreaterThan(1000);
      expect(sum - current.seen[current.seen.length - 1]!).toBeLessThanOrEqual(1000);
      expect(sum).toBeLessThan(Buffer.byteLength(body));
      expect(lastState.state).toMatchObject({ operationName: 'UpdateHumanProfile', errorCodes: ['RESOURCE_EXHAUSTED'] });
      const after = await stored(userId);
      expect(after.sequence).toBe(before.sequence);
      expect(after.state.profile.firstName).toBe(before.state.profile.firstName);

      current = metered(1000, new AppError('UNAVAILABLE', 'The gateway is receiving too many request bodies; retry after 1 s.'));
      expectError(await chunked(path, body), 503, 14);
      expect((await stored(userId)).sequence).toBe(before.sequence);

      // Within the meter's budget: every byte is metered once and the call goes through.
      current = metered(1_000_000, new AppError('RESOURCE_EXHAUSTED', 'never'));
      const passed = await chunked(path, body);
      expect(passed.status, JSON.stringify(passed.body)).toBe(200);
      expect(current.seen.reduce((a, b) => a + b, 0)).toBe(Buffer.byteLength(body));
      expect((await stored(userId)).state.profile.firstName).toBe('Metered');
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('serves Http2ServerRequest / Http2ServerResponse too', async () => {
    const session = http2Connect(h2Base);
    try {
      const request = async (headers: Record<string, string>, body?: string) => {
        const { status, text } = await h2Request(session, headers, body);
        return { status, json: JSON.parse(text) };
      };
      const me = await request({
        ':path': '/auth/v1/users/me',
        ':method': 'GET',
        authorization: `Bearer ${gw.adminToken}`,
      });
      expect(me.status).toBe(200);
      expect(me.json.user.id).toBe(gw.adminId);
      const bad = await request(
        {
          ':path': `/management/v1/users/${gw.adminId}/profile`,
          ':method': 'PUT',
          'content-type': 'application/json',
          authorization: `Bearer ${gw.adminToken}`,
        },
        '{oops',
      );
      expect(bad.status).toBe(400);
      expect(bad.json.code).toBe(3);
    } finally {
      session.close();
    }
  });
});

describe('request mapping and error details, against stub implementations', () => {
  let stubServer: Server;
  let stubBase: string;
  const seen: Record<string, any> = {};

  beforeAll(async () => {
    const stub = createRestHandler(
      [
        restService(ManagementService, {
          isUserUnique: (req) => ((seen.isUserUnique = req), { isUnique: req.userName === 'ada' }),
          listGrantedProjectRoles: (req) => ((seen.listGrantedProjectRoles = req), {}),
          updateProjectRole: (req) => ((seen.updateProjectRole = req), {}),
          getIAM: () => {
            throw new Error('plain failure');
          },
        }),
        restService(UserService, {
          listAuthenticationFactors: (req) => ((seen.listAuthenticationFactors = req), {}),
        }),
      ],
      { readMaxBytes: 4096 },
    );
    stubServer = createServer((req, res) => stub.handler(req, res));
    stubBase = await listenOn(stubServer);
  });
  afterAll(async () => {
    stubServer?.closeAllConnections();
    await new Promise((r) => stubServer?.close(r));
  });

  const stubCall = async (method: string, path: string, body?: string) => {
    const res = await fetch(`${stubBase}${path}`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
    });
    return {
      status: res.status,
      headers: res.headers,
      body: await res.json(),
    } as Answer;
  };

  it('GET: the query string fills the fields (proto or JSON names); /users/_is_unique wins over /users/{id}', async () => {
    const a = await stubCall('GET', '/management/v1/users/_is_unique?user_name=ada&email=a%40b.example&unknown=1');
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ isUnique: true });
    expect(seen.isUserUnique).toMatchObject({
      userName: 'ada',
      email: 'a@b.example',
    });
    const b = await stubCall('GET', '/management/v1/users/_is_unique?userName=bob');
    expect(b.body).toEqual({});
    expect(seen.isUserUnique.userName).toBe('bob');
  });

  it('nested query fields with numbers and booleans; path variables are not taken from the query', async () => {
    const a = await stubCall(
      'GET',
      '/management/v1/granted_projects/p1/grants/g1/roles/_search?query.offset=5&query.limit=10&query.asc=true&project_id=evil',
    );
    expect(a.status).toBe(200);
    expect(seen.listGrantedProjectRoles).toMatchObject({
      projectId: 'p1',
      grantId: 'g1',
      query: { offset: 5n, limit: 10, asc: true },
    });
    expectError(await stubCall('GET', '/management/v1/granted_projects/p1/grants/g1/roles/_search?query.limit=many'), 400, 3);
  });

  it('a rule without body "*": repeated enums from the query (names or numbers), the body ignored', async () => {
    const a = await stubCall(
      'POST',
      `/v2/users/u1/authentication_factors/_search?authFactors=U2F&auth_factors=${AuthFactors.OTP_EMAIL}&states=AUTH_FACTOR_STATE_READY`,
      '{"userId": "ignored"',
    );
    expect(a.status).toBe(200);
    expect(seen.listAuthenticationFactors).toMatchObject({
      userId: 'u1',
      authFactors: [AuthFactors.U2F, AuthFactors.OTP_EMAIL],
      states: [AuthFactorState.READY],
    });
  });

  it('{role_key=**} takes the rest of the path, %-decoded; path variables win over the body', async () => {
    const a = await stubCall(
      'PUT',
      '/management/v1/projects/p1/roles/team%20a/b/c',
      JSON.stringify({
        projectId: 'other',
        role_key: 'other',
        displayName: 'Team A',
      }),
    );
    expect(a.status).toBe(200);
    expect(seen.updateProjectRole).toMatchObject({
      projectId: 'p1',
      roleKey: 'team a/b/c',
      displayName: 'Team A',
    });
  });

  it("details arriving as bytes (another service's error) are rendered from the registry; an unknown type keeps its bytes", async () => {
    // As a proxied call's error arrives: details as type name and bytes.
    const errorDetail = toBinary(ErrorDetailSchema, create(ErrorDetailSchema, { id: 'X-1', message: 'from elsewhere (X-1)' }));
    const err = new ConnectError('from elsewhere', Code.Aborted);
    err.details.push({ type: 'zitadel.v1.ErrorDetail', value: errorDetail }, { type: 'example.Unknown', value: new Uint8Array([1, 2, 3]) });
    const handler = createRestHandler([restService(ManagementService, { getMyOrg: () => Promise.reject(err) })], { readMaxBytes: 100 });
    const s = createServer((req, res) => handler.handler(req, res));
    const url = await listenOn(s);
    try {
      const res = await fetch(`${url}/management/v1/orgs/me`);
      const body = await res.json();
      expect(res.status).toBe(409); // ABORTED
      expect(body).toEqual({
        code: 10,
        message: 'from elsewhere',
        details: [
          { '@type': ERROR_DETAIL, id: 'X-1', message: 'from elsewhere (X-1)' },
          { '@type': 'type.googleapis.com/example.Unknown', value: 'AQID' },
        ],
      });
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('writeRestError (for refusals before the body is read): the status of the code, the JSON body, the extra headers; no Connection header on HTTP/2', async () => {
    const refusal = () =>
      new ConnectError(
        'Too many request-body bytes in flight from this client address; retry after 1 s. (RESOURCE_EXHAUSTED-x)',
        Code.ResourceExhausted,
        undefined,
        [{ desc: ErrorDetailSchema, value: { id: 'RESOURCE_EXHAUSTED-x', message: 'Too many … (RESOURCE_EXHAUSTED-x)' } }],
      );
    const headers = { 'retry-after': '1', connection: 'close' };
    const s1 = createServer((req, res) => writeRestError(req, res, refusal(), headers));
    const s2 = createHttp2Server((req, res) => writeRestError(req, res, refusal(), headers));
    const [url1, url2] = await Promise.all([listenOn(s1), listenOn(s2)]);
    const session = http2Connect(url2);
    try {
      const res = await fetch(`${url1}/v2/users/human`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({
        code: 8,
        message: refusal().rawMessage,
        details: [{ '@type': ERROR_DETAIL, id: 'RESOURCE_EXHAUSTED-x', message: 'Too many … (RESOURCE_EXHAUSTED-x)' }],
      });
      const h2res = await h2Request(session, { ':path': '/v2/users/human', ':method': 'POST' }, '{}');
      expect(h2res.status).toBe(429);
      expect(JSON.parse(h2res.text).code).toBe(8);
    } finally {
      session.close();
      s1.closeAllConnections();
      await new Promise((r) => s1.close(r));
      await new Promise((r) => s2.close(r));
    }
  });

  it('an error that is not a ConnectError is INTERNAL "Unexpected error." (500) without a logger too', async () => {
    const a = await stubCall('GET', '/management/v1/iam');
    expectError(a, 500, 13);
    expect(a.body.message).toBe('Unexpected error.');
    expect(JSON.stringify(a.body)).not.toContain('plain failure');
  });
});

describe('createWireRoute: the route to hand to the edge', () => {
  it('sends RPC paths to connect-node and REST paths to the REST handler, over the same implementations', async () => {
    const route = createWireRoute({
      deps: gw.gateway.deps,
      ops: gw.gateway.ops,
      tokens: createTokenVerifier(gw.config),
      logger: gw.gateway.logger,
      readMaxBytes: maxRequestBodyBytes(gw.config),
    });
    expect(route.matches('/zitadel.auth.v1.AuthService/GetMyUser')).toBe(true);
    expect(route.matches('/auth/v1/users/me')).toBe(true);
    expect(route.matches('/graphql')).toBe(false);
    const s = createServer((req, res) =>
      route.matches((req.url ?? '/').split('?')[0]!) ? route.handler(req, res) : res.writeHead(404).end(),
    );
    const url = await listenOn(s);
    try {
      const headers = {
        'content-type': 'application/json',
        authorization: `Bearer ${gw.adminToken}`,
      };
      const connect = await fetch(`${url}/zitadel.auth.v1.AuthService/GetMyUser`, { method: 'POST', headers, body: '{}' });
      expect(connect.status).toBe(200);
      expect((await connect.json()).user.id).toBe(gw.adminId);
      const restMe = await fetch(`${url}/auth/v1/users/me`, { headers });
      expect(restMe.status).toBe(200);
      expect((await restMe.json()).user.id).toBe(gw.adminId);
      expect((await fetch(`${url}/graphql`)).status).toBe(404);
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
});

describe('on the gateway’s own port, beside /graphql', () => {
  const at = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${gw.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any, requestId: res.headers.get('x-request-id') };
  };

  it('a user created over REST is updated over REST and read through GraphQL, one sequence step per write', async () => {
    const name = `port-${Date.now().toString(36)}`;
    const created = await at('POST', '/v2/users/human', {
      username: name,
      profile: { givenName: 'Port', familyName: 'One' },
      email: { email: `${name}@example.com`, isVerified: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.requestId).toBeTruthy(); // it came through the edge
    const userId = created.body.userId as string;
    const updated = await at('PUT', `/management/v1/users/${userId}/profile`, { firstName: 'Port', lastName: 'Two' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.details.sequence).toBe(String(Number(created.body.details.sequence) + 1));
    const read = await gw.send(UserDocument, { id: userId });
    expect(read.data!.user!.profile.lastName).toBe('Two');
  });

  it('an enum name the enum does not have is INVALID_ARGUMENT over REST and Connect JSON, as over GraphQL, and changes nothing', async () => {
    const name = `enum-${Date.now().toString(36)}`;
    const created = await at('POST', '/v2/users/human', {
      username: name,
      profile: { givenName: 'Enum', familyName: 'Names', gender: 'GENDER_FEMALE' },
      email: { email: `${name}@example.com`, isVerified: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const userId = created.body.userId as string;
    const gender = async () => (await at('GET', `/v2/users/${userId}`)).body.user.human.profile.gender;

    const rest = await at('PUT', `/management/v1/users/${userId}/profile`, { firstName: 'Enum', lastName: 'Names', gender: 'GENDER_FOO' });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({
      code: 3,
      message: expect.stringMatching(/gender: "GENDER_FOO" is not a value of zitadel\.user\.v1\.Gender/),
    });
    const connect = await at('POST', '/zitadel.management.v1.ManagementService/UpdateHumanProfile', {
      userId,
      firstName: 'Enum',
      lastName: 'Names',
      gender: 'GENDER_FOO',
    });
    expect(connect.status).toBe(400);
    expect(connect.body).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/gender/) });
    const nested = await at('POST', '/v2/users/human', {
      username: `${name}-2`,
      profile: { givenName: 'E', familyName: 'N', gender: 'GENDER_FOO' },
      email: { email: `${name}-2@example.com` },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.message).toMatch(/profile\.gender/);
    expect(await gender()).toBe('GENDER_FEMALE');

    // Names the enum has still work, and unknown fields are still ignored, as grpc-gateway does.
    expect(
      (
        await at('PUT', `/management/v1/users/${userId}/profile`, {
          firstName: 'Enum',
          lastName: 'Names',
          gender: 'GENDER_MALE',
          notAField: 1,
        })
      ).status,
    ).toBe(200);
    expect(await gender()).toBe('GENDER_MALE');
  });

  it('a value of the wrong type is refused without being quoted back (a numeric password, over REST and Connect JSON)', async () => {
    const secret = 123456789012;
    const rest = await at('POST', `/management/v1/users/${gw.adminId}/password`, { password: secret, noChangeRequired: true });
    expect(rest.status).toBe(400);
    expect(rest.body.message).toMatch(/password from JSON: expected string$/);
    const connect = await at('POST', '/zitadel.management.v1.ManagementService/SetHumanPassword', { userId: gw.adminId, password: secret });
    expect(connect.status).toBe(400);
    expect(connect.body).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/password from JSON: expected string$/),
    });
    for (const answer of [rest, connect]) expect(JSON.stringify(answer.body)).not.toContain(String(secret));
  });

  it('errors in grpc-gateway’s shape and status through the edge', async () => {
    const missing = await at('PUT', '/management/v1/users/404404/profile', { firstName: 'A', lastName: 'B' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 5, message: expect.any(String), details: expect.any(Array) });
    const noToken = await fetch(`${gw.baseUrl}/auth/v1/users/me`);
    expect(noToken.status).toBe(401);
  });
});
