// docs/wire-api.md's @zitadel/client examples run as written against a real gateway: the three-call
// example over gRPC, and the nine operations with @zitadel/client over gRPC, gRPC-web and Connect
// (examples/nine-operations.mjs) and with curl over REST (examples/nine-operations.sh), each
// checked against what the gateway's store holds afterwards.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityProvider } from '../src/model/idps.ts';
import type { Org } from '../src/model/orgs.ts';
import type { Project } from '../src/model/projects.ts';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const run = promisify(execFile);

/** Not the gateway's default origin, so the U2F step passes only when ORIGIN reaches the authenticator. */
const ORIGIN = 'http://localhost:5173';

const NINE = [
  'UpdateMyProfile',
  'AddHumanUser',
  'UpdateHumanProfile',
  'SetEmail',
  'UpdateHumanPhone',
  'SetHumanPassword',
  'VerifyU2FRegistration',
  'UpdateOrgIDPOIDCConfig',
  'AddSAMLApp',
];

describe('examples against a running gateway', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { WEBAUTHN_ORIGINS: ORIGIN } });
  });
  afterAll(async () => gw?.close());

  const env = () => ({
    ...process.env,
    // `node` in the shell script is the Node running these tests.
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    GATEWAY: gw.baseUrl,
    TOKEN: gw.adminToken,
    ORIGIN,
  });

  describe('examples/zitadel-client.mjs', () => {
    it('creates, verifies, updates and reads back a user with ZITADEL client code, over gRPC', async () => {
      const { stdout } = await run(process.execPath, ['examples/zitadel-client.mjs'], {
        env: { ...process.env, GATEWAY: gw.baseUrl, TOKEN: gw.adminToken },
      });
      const out = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(out.displayName).toBe('Ada King');
      const stored = await gw.gateway.deps.store.load<User>('user', out.userId);
      expect(stored!.state.profile.lastName).toBe('King');
      expect(stored!.state.email.isVerified).toBe(true);
      expect(String(stored!.sequence)).toBe(out.sequence);
    });
  });

  /** The printed lines: one per operation, in order, then the summary; each checked against the store. */
  async function expectNineDone(stdout: string, transport: string) {
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(NINE.length + 1);
    const byOp = Object.fromEntries(lines.slice(0, -1).map((l) => [l.op, l]));
    expect(lines.slice(0, -1).map((l) => l.op)).toEqual(NINE);
    for (const l of lines.slice(0, -1)) expect(l.sequence, l.op).toMatch(/^[1-9]\d*$/);
    const summary = lines.at(-1);
    expect(summary).toMatchObject({ summary: true, transport, operations: 9, done: NINE });
    const { store } = gw.gateway.deps;

    // The run's own organization holds the user, the IdP and the project.
    const org = await store.load<Org>('org', summary.orgId);
    expect(org).not.toBeNull();

    // UpdateMyProfile changed the token's own user.
    const admin = (await store.load<User>('user', gw.adminId))!;
    expect(byOp.UpdateMyProfile).toMatchObject({ userId: gw.adminId, displayName: admin.state.profile.displayName });
    expect(admin.state.profile).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', gender: 'GENDER_FEMALE' });
    expect(String(admin.sequence)).toBe(byOp.UpdateMyProfile.sequence);

    // AddHumanUser .. VerifyU2FRegistration: one user, its events one after the other.
    const user = (await store.load<User>('user', summary.userId))!;
    expect(user.resourceOwner).toBe(summary.orgId);
    expect(byOp.AddHumanUser).toMatchObject({
      userId: summary.userId,
      orgId: summary.orgId,
      username: user.state.username,
      emailCode: true,
    });
    expect(user.state.profile).toMatchObject({ firstName: 'Augusta Ada', lastName: 'King', displayName: 'Ada King' });
    expect(user.state.email).toEqual({ email: byOp.SetEmail.email, isVerified: true });
    expect(byOp.SetEmail.isVerified).toBe(true);
    expect(user.state.phone).toEqual({ phone: '+41791234567', isVerified: true });
    expect(byOp.UpdateHumanPhone).toMatchObject({ phone: '+41791234567', isPhoneVerified: true });
    expect(user.state.passwordChangeRequired).toBe(false);
    expect(byOp.SetHumanPassword.passwordChangeRequired).toBe(false);
    expect(user.state.u2fTokens).toMatchObject([
      { id: byOp.VerifyU2FRegistration.u2fId, name: byOp.VerifyU2FRegistration.tokenName, state: 'U2F_STATE_READY' },
    ]);
    expect(user.state.u2fTokens[0]!.publicKey).toMatch(/\S/);
    const first = BigInt(byOp.AddHumanUser.sequence);
    // AddHumanUser, UpdateHumanProfile, SetEmail, VerifyEmail, UpdateHumanPhone, SetHumanPassword, RegisterU2F, VerifyU2FRegistration.
    expect([
      byOp.UpdateHumanProfile.sequence,
      byOp.SetEmail.sequence,
      byOp.SetEmail.verifiedSequence,
      byOp.UpdateHumanPhone.sequence,
    ]).toEqual([1n, 2n, 3n, 4n].map((d) => String(first + d)));
    expect([byOp.SetHumanPassword.sequence, byOp.VerifyU2FRegistration.sequence]).toEqual([5n, 7n].map((d) => String(first + d)));
    expect(String(user.sequence)).toBe(byOp.VerifyU2FRegistration.sequence);
    expect(byOp.VerifyU2FRegistration.userSequence).toBe(String(user.sequence));

    // UpdateOrgIDPOIDCConfig replaced the config AddOrgOIDCIDP wrote.
    const idp = (await store.load<IdentityProvider>('idp', summary.idpId))!;
    expect(idp.resourceOwner).toBe(summary.orgId);
    expect(idp.state).toMatchObject({
      issuer: 'https://login.example.org',
      clientId: byOp.UpdateOrgIDPOIDCConfig.clientId,
      scopes: ['openid', 'profile'],
      displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
      usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
    });
    expect(idp.state.clientSecret).not.toBeNull(); // an empty client_secret keeps the stored one
    expect(byOp.UpdateOrgIDPOIDCConfig).toMatchObject({
      idpId: summary.idpId,
      issuer: 'https://login.example.org',
      scopes: ['openid', 'profile'],
    });
    expect(String(idp.sequence)).toBe(byOp.UpdateOrgIDPOIDCConfig.sequence);

    // AddSAMLApp added the app, with the entityID of the embedded metadata, to the new project.
    const project = (await store.load<Project>('project', summary.projectId))!;
    expect(project.resourceOwner).toBe(summary.orgId);
    expect(project.state.name).toBe(byOp.AddSAMLApp.projectName);
    expect(project.state.apps).toHaveLength(1);
    expect(project.state.apps[0]).toMatchObject({ id: summary.appId, metadataUrl: null });
    expect(project.state.apps[0]!.entityId).toMatch(/^https:\/\/sp-[0-9a-z]+\.example\.com\/saml\/metadata$/);
    expect(byOp.AddSAMLApp.appId).toBe(summary.appId);
    expect(String(project.sequence)).toBe(byOp.AddSAMLApp.sequence);
    return summary;
  }

  describe('examples/nine-operations.mjs: the nine operations with @zitadel/client', () => {
    const seen = new Set<string>();
    it.each(['grpc', 'grpc-web', 'connect'])('over %s, each read back', async (transport) => {
      const { stdout } = await run(process.execPath, ['examples/nine-operations.mjs'], { env: { ...env(), TRANSPORT: transport } });
      const summary = await expectNineDone(stdout, transport);
      // Fresh names per run: every run has its own organization and user.
      expect(seen.has(summary.userId)).toBe(false);
      seen.add(summary.userId);
    });

    it('stops with exit code 1 and the failing operation on stderr when the gateway refuses', async () => {
      const err = await run(process.execPath, ['examples/nine-operations.mjs'], { env: { ...env(), TOKEN: 'not-a-token' } }).then(
        () => null,
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(err?.code).toBe(1);
      expect(err!.stdout).toBe('');
      expect(JSON.parse(err!.stderr.trim())).toMatchObject({
        op: 'AddOrganization',
        transport: 'grpc',
        error: { code: 'Unauthenticated' },
      });
    });
  });

  describe('examples/nine-operations.sh: the nine operations with curl over REST', () => {
    it('runs them at the google.api.http paths, each read back', async () => {
      const { stdout } = await run('bash', ['examples/nine-operations.sh'], { env: env() });
      await expectNineDone(stdout, 'rest');
      const logged = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      expect(logged.some((l) => /^\/v2\/users\/\d+\/u2f\/\d+$/.test(l.path))).toBe(true);
      expect(logged.some((l) => /^\/management\/v1\/idps\/\d+\/oidc_config$/.test(l.path))).toBe(true);
    });

    it('stops with exit code 1 and the refused request on stderr', async () => {
      const err = await run('bash', ['examples/nine-operations.sh'], { env: { ...env(), TOKEN: 'not-a-token' } }).then(
        () => null,
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(err?.code).toBe(1);
      expect(err!.stdout).toBe('');
      expect(err!.stderr).toMatch(/^AddOrganization: POST \/v2\/organizations answered 401: \{"code":16,/);
    });
  });
});
