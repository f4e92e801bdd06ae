// Request fields the commands have no place for (src/wire/convert.ts refuseUnsupported): a
// request that sets one is refused with INVALID_ARGUMENT and a google.rpc.BadRequest naming it
// in the wire's names, before anything is written, instead of being dropped silently. Each
// refused field once over gRPC or Connect (ZITADEL's own clients) and once over REST with its
// proto3 JSON name, on the gateway's one port. Fields at their default, and JSON fields the
// message does not have at all, still pass.
import { readFileSync } from 'node:fs';
import { Code } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../src/model/orgs.ts';
import { idpNameClaim } from '../src/model/idps.ts';
import { projectClaims, type Project } from '../src/model/projects.ts';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { violationsOf, failure, wireTransport, zitadelClients, type WireKind } from './support/wire-clients.ts';

const SAML_XML = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url), 'utf8');
const UNSUPPORTED = 'is not supported by this gateway';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
});

const clients = (kind: WireKind) => zitadelClients(wireTransport(kind, gw.baseUrl, gw.adminToken));

async function rest(verb: string, path: string, body: unknown) {
  const res = await fetch(`${gw.baseUrl}${path}`, {
    method: verb,
    headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const restViolations = (body: any): { field: string; description: string }[] =>
  body.details.filter((d: any) => d['@type'] === BAD_REQUEST).flatMap((d: any) => d.fieldViolations);

const samlXml = () => SAML_XML.replace('https://sp.example.com/saml/metadata', `https://${unique('sp')}.example.com/saml`);

/** A project of the default organization, for AddSAMLApp. */
async function newProject(): Promise<string> {
  return (await clients('grpc').mgmt.addProject({ name: unique('project ') })).id;
}

const loadUser = (id: string) => gw.gateway.deps.store.load<User>('user', id);
const loadProject = (id: string) => gw.gateway.deps.store.load<Project>('project', id);
const lookup = (key: string) => gw.gateway.deps.store.lookup(key);

/**
 * One refused field: a request setting it over RPC (typed as ZITADEL's client takes it) and over
 * REST (the JSON body with the field's JSON name), and what must then be unwritten.
 */
interface Case {
  method: string;
  /** The violation's field, in the wire's names. */
  field: string;
  /** Over RPC: the call, and a check that nothing was written. */
  rpc(kind: WireKind): Promise<{ call: Promise<unknown>; unwritten: () => Promise<void> }>;
  /** Over REST: verb, path, body, and a check that nothing was written. */
  rest(): Promise<{ verb: string; path: string; body: Record<string, unknown>; unwritten: () => Promise<void> }>;
}

const humanUser = (userId: string) => ({
  userId,
  profile: { givenName: 'Ada', familyName: 'Lovelace' },
  email: { email: `${userId}@example.com`, verification: { case: 'isVerified' as const, value: true } },
});
const humanUserJson = (userId: string) => ({
  userId,
  profile: { givenName: 'Ada', familyName: 'Lovelace' },
  email: { email: `${userId}@example.com`, isVerified: true },
});

const userUnwritten = (userId: string) => async () => expect(await loadUser(userId)).toBeNull();
const orgUnwritten = (name: string, orgId?: string) => async () => {
  expect(await lookup(`orgName:${name.trim().toLowerCase()}`)).toBeNull();
  if (orgId) expect(await gw.gateway.deps.store.load<Org>('org', orgId)).toBeNull();
};
const idpUnwritten = (name: string) => async () => expect(await lookup(idpNameClaim(gw.defaultOrgId, name))).toBeNull();
const projectUnwritten = (name: string) => async () => expect(await lookup(projectClaims.name(gw.defaultOrgId, name))).toBeNull();
const samlUnwritten = async (projectId: string) => {
  const sequence = (await loadProject(projectId))!.sequence;
  return async () => {
    const after = (await loadProject(projectId))!;
    expect(after.sequence).toBe(sequence);
    expect(after.state.apps).toEqual([]);
  };
};

const oidcIdp = (name: string) => ({
  name,
  issuer: 'https://accounts.example.com',
  clientId: 'client',
  clientSecret: 's3cret',
  scopes: ['openid'],
});

const CASES: Case[] = [
  {
    method: 'UserService.AddHumanUser',
    field: 'totp_secret',
    async rpc(kind) {
      const userId = unique('totp');
      return {
        call: clients(kind).users.addHumanUser({ ...humanUser(userId), totpSecret: 'JBSWY3DPEHPK3PXP' }),
        unwritten: userUnwritten(userId),
      };
    },
    async rest() {
      const userId = unique('totp');
      return {
        verb: 'POST',
        path: '/v2/users/human',
        body: { ...humanUserJson(userId), totpSecret: 'JBSWY3DPEHPK3PXP' },
        unwritten: userUnwritten(userId),
      };
    },
  },
  {
    method: 'OrganizationService.AddOrganization',
    field: 'admins[0]',
    async rpc(kind) {
      const name = unique('Org ');
      const admins = [{ userType: { case: 'userId' as const, value: gw.adminId }, roles: ['ORG_OWNER'] }];
      return { call: clients(kind).orgs.addOrganization({ name, admins }), unwritten: orgUnwritten(name) };
    },
    async rest() {
      const name = unique('Org ');
      return {
        verb: 'POST',
        path: '/v2/organizations',
        body: { name, admins: [{ userId: gw.adminId, roles: ['ORG_OWNER'] }] },
        unwritten: orgUnwritten(name),
      };
    },
  },
  {
    method: 'OrganizationService.AddOrganization',
    field: 'org_id',
    async rpc(kind) {
      const name = unique('Org ');
      const orgId = unique('org');
      return { call: clients(kind).orgs.addOrganization({ name, orgId }), unwritten: orgUnwritten(name, orgId) };
    },
    async rest() {
      const name = unique('Org ');
      const orgId = unique('org');
      return { verb: 'POST', path: '/v2/organizations', body: { name, orgId }, unwritten: orgUnwritten(name, orgId) };
    },
  },
  {
    method: 'v2beta UserService.AddHumanUser',
    field: 'totp_secret',
    async rpc(kind) {
      const userId = unique('totp');
      return {
        call: clients(kind).usersV2beta.addHumanUser({ ...humanUser(userId), totpSecret: 'JBSWY3DPEHPK3PXP' }),
        unwritten: userUnwritten(userId),
      };
    },
    async rest() {
      const userId = unique('totp');
      return {
        verb: 'POST',
        path: '/v2beta/users/human',
        body: { ...humanUserJson(userId), totpSecret: 'JBSWY3DPEHPK3PXP' },
        unwritten: userUnwritten(userId),
      };
    },
  },
  {
    method: 'v2beta OrganizationService.CreateOrganization',
    field: 'admins[0]',
    async rpc(kind) {
      const name = unique('Org ');
      const admins = [{ userType: { case: 'userId' as const, value: gw.adminId }, roles: ['ORG_OWNER'] }];
      return { call: clients(kind).orgsV2beta.createOrganization({ name, admins }), unwritten: orgUnwritten(name) };
    },
    async rest() {
      const name = unique('Org ');
      return {
        verb: 'POST',
        path: '/v2beta/organizations',
        body: { name, admins: [{ userId: gw.adminId, roles: ['ORG_OWNER'] }] },
        unwritten: orgUnwritten(name),
      };
    },
  },
  {
    method: 'v2beta OrganizationService.CreateOrganization',
    field: 'id',
    async rpc(kind) {
      const name = unique('Org ');
      const id = unique('org');
      return { call: clients(kind).orgsV2beta.createOrganization({ name, id }), unwritten: orgUnwritten(name, id) };
    },
    async rest() {
      const name = unique('Org ');
      const id = unique('org');
      return { verb: 'POST', path: '/v2beta/organizations', body: { name, id }, unwritten: orgUnwritten(name, id) };
    },
  },
  {
    method: 'ManagementService.AddOrgOIDCIDP',
    field: 'styling_type',
    async rpc(kind) {
      const name = unique('idp ');
      return { call: clients(kind).mgmt.addOrgOIDCIDP({ ...oidcIdp(name), stylingType: 1 }), unwritten: idpUnwritten(name) };
    },
    async rest() {
      const name = unique('idp ');
      return {
        verb: 'POST',
        path: '/management/v1/idps/oidc',
        body: { ...oidcIdp(name), stylingType: 'STYLING_TYPE_GOOGLE' },
        unwritten: idpUnwritten(name),
      };
    },
  },
  {
    method: 'ManagementService.AddOrgOIDCIDP',
    field: 'auto_register',
    async rpc(kind) {
      const name = unique('idp ');
      return { call: clients(kind).mgmt.addOrgOIDCIDP({ ...oidcIdp(name), autoRegister: true }), unwritten: idpUnwritten(name) };
    },
    async rest() {
      const name = unique('idp ');
      return {
        verb: 'POST',
        path: '/management/v1/idps/oidc',
        body: { ...oidcIdp(name), autoRegister: true },
        unwritten: idpUnwritten(name),
      };
    },
  },
  ...(
    [
      ['project_role_assertion', { projectRoleAssertion: true }, { projectRoleAssertion: true }],
      ['project_role_check', { projectRoleCheck: true }, { projectRoleCheck: true }],
      ['has_project_check', { hasProjectCheck: true }, { hasProjectCheck: true }],
      [
        'private_labeling_setting',
        { privateLabelingSetting: 1 },
        { privateLabelingSetting: 'PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY' },
      ],
    ] as const
  ).map(([field, rpcExtra, jsonExtra]): Case => ({
    method: 'ManagementService.AddProject',
    field,
    async rpc(kind) {
      const name = unique('project ');
      return { call: clients(kind).mgmt.addProject({ name, ...rpcExtra }), unwritten: projectUnwritten(name) };
    },
    async rest() {
      const name = unique('project ');
      return { verb: 'POST', path: '/management/v1/projects', body: { name, ...jsonExtra }, unwritten: projectUnwritten(name) };
    },
  })),
  {
    method: 'ManagementService.AddSAMLApp',
    field: 'login_version',
    async rpc(kind) {
      const projectId = await newProject();
      const call = clients(kind).mgmt.addSAMLApp({
        projectId,
        name: 'sp',
        metadata: { case: 'metadataXml', value: new TextEncoder().encode(samlXml()) },
        loginVersion: { version: { case: 'loginV2', value: { baseUri: 'https://login.example.com' } } },
      });
      return { call, unwritten: await samlUnwritten(projectId) };
    },
    async rest() {
      const projectId = await newProject();
      return {
        verb: 'POST',
        path: `/management/v1/projects/${projectId}/apps/saml`,
        body: { name: 'sp', metadataXml: Buffer.from(samlXml()).toString('base64'), loginVersion: { loginV1: {} } },
        unwritten: await samlUnwritten(projectId),
      };
    },
  },
];

describe('request fields without a place in the commands are refused, not dropped', () => {
  describe.each(CASES.map((c, i) => ({ ...c, kind: (i % 2 === 0 ? 'grpc' : 'connect') as WireKind })))('$method $field', (c) => {
    it(`over ${c.kind}: INVALID_ARGUMENT naming ${c.field}, nothing written`, async () => {
      const { call, unwritten } = await c.rpc(c.kind);
      const err = await failure(call);
      expect(err.code, err.message).toBe(Code.InvalidArgument);
      expect(violationsOf(err).map(({ field, description }) => ({ field, description }))).toEqual([
        { field: c.field, description: UNSUPPORTED },
      ]);
      expect(err.rawMessage).toMatch(
        new RegExp(`^Invalid input: ${c.field.replace(/[[\]]/g, '\\$&')}: ${UNSUPPORTED} \\(INVALID_ARGUMENT-[0-9a-z]+\\)$`),
      );
      await unwritten();
    });

    it(`over REST: 400, code 3, the field violation ${c.field}, nothing written`, async () => {
      const { verb, path, body, unwritten } = await c.rest();
      const a = await rest(verb, path, body);
      expect(a.status, JSON.stringify(a.body)).toBe(400);
      expect(a.body.code).toBe(3);
      expect(restViolations(a.body)).toEqual([{ field: c.field, description: UNSUPPORTED }]);
      await unwritten();
    });
  });

  it('every refused field of a request is named at once', async () => {
    const name = unique('project ');
    const err = await failure(
      clients('grpc').mgmt.addProject({
        name,
        projectRoleAssertion: true,
        projectRoleCheck: true,
        hasProjectCheck: true,
        privateLabelingSetting: 2,
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(violationsOf(err).map((v) => v.field)).toEqual([
      'project_role_assertion',
      'project_role_check',
      'has_project_check',
      'private_labeling_setting',
    ]);
    const a = await rest('POST', '/v2/organizations', {
      name: unique('Org '),
      orgId: unique('org'),
      admins: [{ userId: gw.adminId }, { userId: gw.adminId }],
    });
    expect(a.status).toBe(400);
    expect(restViolations(a.body).map((v) => v.field)).toEqual(['admins[0]', 'org_id']);
  });

  it('refused before the input rules: an otherwise invalid request with a refused field names only that field', async () => {
    const err = await failure(
      clients('connect').users.addHumanUser({ profile: { givenName: '', familyName: '' }, totpSecret: 'JBSWY3DPEHPK3PXP' }),
    );
    expect(violationsOf(err).map((v) => v.field)).toEqual(['totp_secret']);
  });

  it('the same fields at their defaults pass (proto3 cannot tell them from absent), as do JSON fields the message does not have', async () => {
    const c = clients('grpc');
    // (Written, they are found by the same keys the refusals above check are free.)
    const projectName = unique('project ');
    const project = await c.mgmt.addProject({ name: projectName, projectRoleAssertion: false, privateLabelingSetting: 0 });
    expect((await lookup(projectClaims.name(gw.defaultOrgId, projectName)))?.aggregateId).toBe(project.id);
    const idpName = unique('idp ');
    const idp = await c.mgmt.addOrgOIDCIDP({ ...oidcIdp(idpName), stylingType: 0, autoRegister: false });
    expect((await lookup(idpNameClaim(gw.defaultOrgId, idpName)))?.aggregateId).toBe(idp.idpId);
    const orgName = unique('Org ');
    const org = await c.orgs.addOrganization({ name: orgName, admins: [] });
    expect((await lookup(`orgName:${orgName.toLowerCase()}`))?.aggregateId).toBe(org.organizationId);
    // totp_secret has explicit presence; given empty, it asks for nothing.
    const userId = unique('empty-totp');
    await c.users.addHumanUser({ ...humanUser(userId), totpSecret: '' });
    expect(await loadUser(userId)).not.toBeNull();

    const restUser = unique('rest-totp');
    const a = await rest('POST', '/v2/users/human', {
      ...humanUserJson(restUser),
      totpSecret: '',
      notAFieldOfAddHumanUserRequest: { totpSecret: 'JBSWY3DPEHPK3PXP' },
    });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(await loadUser(restUser)).not.toBeNull();
    const b = await rest('POST', '/management/v1/projects', {
      name: unique('project '),
      hasProjectCheck: false,
      privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED',
      unknownField: true,
    });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
  });

  it('after a refusal, the same request without the field succeeds (no name or id was claimed)', async () => {
    const c = clients('connect');
    const userId = unique('retry');
    await failure(c.users.addHumanUser({ ...humanUser(userId), totpSecret: 'JBSWY3DPEHPK3PXP' }));
    expect((await c.users.addHumanUser(humanUser(userId))).userId).toBe(userId);
    const name = unique('Org ');
    await failure(c.orgs.addOrganization({ name, admins: [{ userType: { case: 'userId', value: gw.adminId }, roles: ['ORG_OWNER'] }] }));
    expect((await c.orgs.addOrganization({ name })).organizationId).toMatch(/^\d+$/);
    const projectId = await newProject();
    const xml = new TextEncoder().encode(samlXml());
    await failure(c.mgmt.addSAMLApp({ projectId, name: 'sp', metadata: { case: 'metadataXml', value: xml }, loginVersion: {} }));
    expect((await c.mgmt.addSAMLApp({ projectId, name: 'sp', metadata: { case: 'metadataXml', value: xml } })).appId).toMatch(/^\d+$/);
  });
});
