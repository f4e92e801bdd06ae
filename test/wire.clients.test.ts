// The wire API with the real clients: @zitadel/client's service clients over connect-node's
// gRPC (HTTP/2 cleartext), gRPC-web and Connect (binary and JSON) transports (HTTP/1.1), on
// the gateway's one port beside /graphql. The nine SPEC.md operations succeed and read back;
// the representative failures carry the right code and details; one user is written over
// gRPC and Connect and read through GraphQL; the v2beta services answer the v2 methods as v2
// does. All of it on the embedded stores and on MongoDB-wire + Redis.
import { readFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { toJson, type JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { createAuthServiceClient, createManagementServiceClient } from '@zitadel/client/v1';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { UserSchema as UserV2betaSchema } from '@zitadel/proto/zitadel/user/v2beta/user_pb.js';
import {
  GetUserByIDResponseSchema as GetUserByIDResponseV2Schema,
  ListUsersResponseSchema as ListUsersResponseV2Schema,
} from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import {
  GetUserByIDResponseSchema as GetUserByIDResponseV2betaSchema,
  ListUsersResponseSchema as ListUsersResponseV2betaSchema,
} from '@zitadel/proto/zitadel/user/v2beta/user_service_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import type { User } from '../src/model/users.ts';
import { BadRequestSchema, type BadRequest } from '../src/proto/error-details.ts';
import { UserDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { h2Request } from './support/grpc-raw.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';
import { failure, bearer, WIRE_KINDS, wireTransport, zitadelClients, type WireKind } from './support/wire-clients.ts';

const ORIGIN = 'http://localhost:4000';
const PASSWORD = 'Secr3t!pass';
const SAML_XML = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url), 'utf8');

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

type Kind = WireKind;
const KINDS = WIRE_KINDS;

/** The whole suite against one gateway started with `env()` (the embedded stores, or MongoDB-wire + Redis). */
function wireSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    const authenticator = createSoftAuthenticator();

    beforeAll(async () => {
      gw = await startGateway({ env: { ...env(), WEBAUTHN_ORIGINS: ORIGIN } });
    });
    afterAll(async () => {
      await gw?.close();
    });

    const clients = (kind: Kind, token: string | null = gw.adminToken) => zitadelClients(wireTransport(kind, gw.baseUrl, token));

    const fieldsOf = (err: ConnectError) =>
      err
        .findDetails(BadRequestSchema)
        .flatMap((d) => (d as unknown as BadRequest).fieldViolations.map((v) => v.field))
        .sort();

    const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;

    /** A SAML SP metadata document with its own entityID (entityIDs are unique in the instance). */
    const samlXml = () =>
      new TextEncoder().encode(SAML_XML.replace('https://sp.example.com/saml/metadata', `https://${unique('sp')}.example.com/saml`));

    const addUser = async (c: ReturnType<typeof clients>, extra: Record<string, unknown> = {}) =>
      c.users.addHumanUser({
        profile: { givenName: 'Ada', familyName: 'Lovelace', displayName: 'Ada L.' },
        email: { email: `${unique('u')}@example.com`, verification: { case: 'isVerified', value: true } },
        passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: false } },
        ...extra,
      });

    describe.each(KINDS)('wire API over %s', (kind) => {
      it('UpdateMyProfile, then GetMyUser reads it back', async () => {
        const c = clients(kind);
        const displayName = unique('Admin ');
        const before = (await c.auth.getMyUser({})).user!;
        const res = await c.auth.updateMyProfile({ firstName: 'Grace', lastName: 'Hopper', nickName: 'amazing', displayName, gender: 1 });
        expect(res.details!.sequence).toBe(before.details!.sequence + 1n);
        expect(res.details!.resourceOwner).toBe(gw.defaultOrgId);
        expect(res.details!.changeDate!.seconds).toBeGreaterThan(0n);
        const me = (await c.auth.getMyUser({})).user!;
        expect(me.id).toBe(gw.adminId);
        expect(me.details!.sequence).toBe(res.details!.sequence);
        expect(me.type.case).toBe('human');
        const human = me.type.value as any;
        expect(human.profile).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', nickName: 'amazing', displayName, gender: 1 });
      });

      it('AddHumanUser, then GetUserByID (v2 and v1); UpdateHumanProfile; SetEmail with return_code, VerifyEmail; UpdateHumanPhone; SetHumanPassword', async () => {
        const c = clients(kind);
        const email = `${unique('ada')}@example.com`;
        const added = await c.users.addHumanUser({
          username: unique('ada'),
          organization: { org: { case: 'orgId', value: gw.defaultOrgId } },
          profile: { givenName: 'Ada', familyName: 'Lovelace', preferredLanguage: 'en', gender: 1 },
          email: { email, verification: { case: 'returnCode', value: {} } },
          metadata: [{ key: 'team', value: new TextEncoder().encode('analytical engine') }],
          passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: true } },
        });
        const userId = added.userId;
        expect(userId).toMatch(/^\d+$/);
        expect(added.emailCode).toMatch(/\S/);
        expect(added.details!.resourceOwner).toBe(gw.defaultOrgId);
        expect(added.details!.creationDate).toBeUndefined(); // addHumanUser's Details has no creationDate
        let sequence = added.details!.sequence;

        const read = await c.users.getUserByID({ userId });
        expect(read.user!.userId).toBe(userId);
        expect(read.details!.sequence).toBe(sequence);
        expect(read.details!.creationDate).toBeDefined();
        expect(read.user!.type.case).toBe('human');
        const human = read.user!.type.value as any;
        expect(human.profile).toMatchObject({ givenName: 'Ada', familyName: 'Lovelace', preferredLanguage: 'en', gender: 1 });
        expect(human.email).toMatchObject({ email, isVerified: false });
        expect(human.passwordChangeRequired).toBe(true);
        expect((await stored(userId)).state.metadata).toEqual([
          { key: 'team', value: Buffer.from('analytical engine').toString('base64') },
        ]);

        const v1 = (await c.mgmt.getUserByID({ id: userId })).user!;
        expect(v1.id).toBe(userId);
        expect((v1.type.value as any).email).toMatchObject({ email, isEmailVerified: false });

        const profile = await c.mgmt.updateHumanProfile({
          userId,
          firstName: 'Augusta Ada',
          lastName: 'King',
          displayName: 'Countess',
          gender: 1,
        });
        expect(profile.details!.sequence).toBe(++sequence);
        expect(profile.details!.creationDate).toBeDefined();
        expect(((await c.users.getUserByID({ userId })).user!.type.value as any).profile).toMatchObject({
          givenName: 'Augusta Ada',
          familyName: 'King',
          displayName: 'Countess',
        });

        const newEmail = `${unique('king')}@example.com`;
        const set = await c.users.setEmail({ userId, email: newEmail, verification: { case: 'returnCode', value: {} } });
        expect(set.details!.sequence).toBe(++sequence);
        expect(set.verificationCode).toMatch(/\S/);
        const verified = await c.users.verifyEmail({ userId, verificationCode: set.verificationCode! });
        expect(verified.details!.sequence).toBe(++sequence);
        expect(((await c.users.getUserByID({ userId })).user!.type.value as any).email).toMatchObject({
          email: newEmail,
          isVerified: true,
        });

        const phone = await c.mgmt.updateHumanPhone({ userId, phone: '+41791234567', isPhoneVerified: true });
        expect(phone.details!.sequence).toBe(++sequence);
        expect(((await c.mgmt.getUserByID({ id: userId })).user!.type.value as any).phone).toMatchObject({
          phone: '+41791234567',
          isPhoneVerified: true,
        });

        const password = await c.mgmt.setHumanPassword({ userId, password: 'N3w!secret', noChangeRequired: true });
        expect(password.details!.sequence).toBe(++sequence);
        const after = (await c.users.getUserByID({ userId })).user!;
        expect((after.type.value as any).passwordChangeRequired).toBe(false);
        expect(after.details!.sequence).toBe(sequence);
        expect(await gw.gateway.deps.hasher.verify('N3w!secret', (await stored(userId)).state.passwordHash!)).toBe(true);
      });

      it('AddOrgOIDCIDP, then UpdateOrgIDPOIDCConfig (deprecated), then GetOrgIDPByID', async () => {
        const c = clients(kind);
        const added = await c.mgmt.addOrgOIDCIDP({
          name: unique('idp'),
          issuer: 'https://accounts.example.com',
          clientId: 'client-1',
          clientSecret: 's3cret',
          scopes: ['openid', 'email'],
          displayNameMapping: 2,
        });
        expect(added.idpId).toMatch(/^\d+$/);
        expect(added.details!.resourceOwner).toBe(gw.defaultOrgId);
        const updated = await c.mgmt.updateOrgIDPOIDCConfig({
          idpId: added.idpId,
          issuer: 'https://login.example.org',
          clientId: 'client-2',
          scopes: ['openid', 'profile'],
          displayNameMapping: 1,
          usernameMapping: 2,
        });
        expect(updated.details!.sequence).toBe(added.details!.sequence + 1n);
        const idp = (await c.mgmt.getOrgIDPByID({ id: added.idpId })).idp!;
        expect(idp.id).toBe(added.idpId);
        expect(idp.details!.sequence).toBe(updated.details!.sequence);
        expect(idp.config.case).toBe('oidcConfig');
        expect(idp.config.value).toMatchObject({
          issuer: 'https://login.example.org',
          clientId: 'client-2',
          scopes: ['openid', 'profile'],
          displayNameMapping: 1,
          usernameMapping: 2,
        });
      });

      it('AddProject, then AddSAMLApp with metadata_xml, then GetProjectByID', async () => {
        const c = clients(kind);
        const name = unique('project');
        const project = await c.mgmt.addProject({ name });
        expect(project.id).toMatch(/^\d+$/);
        const app = await c.mgmt.addSAMLApp({ projectId: project.id, name: 'sp', metadata: { case: 'metadataXml', value: samlXml() } });
        expect(app.appId).toMatch(/^\d+$/);
        expect(app.details!.sequence).toBe(project.details!.sequence + 1n);
        const read = (await c.mgmt.getProjectByID({ id: project.id })).project!;
        expect(read).toMatchObject({ id: project.id, name });
        expect(read.details!.sequence).toBe(app.details!.sequence);
      });

      it('RegisterU2F, then VerifyU2FRegistration with a software authenticator', async () => {
        const c = clients(kind);
        const { userId } = await addUser(c);
        const registered = await c.users.registerU2F({ userId });
        expect(registered.u2fId).toMatch(/^\d+$/);
        const options = registered.publicKeyCredentialCreationOptions as any;
        expect(options.rp.id).toBe('localhost');
        const cred = authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id });
        const verified = await c.users.verifyU2FRegistration({
          userId,
          u2fId: registered.u2fId,
          publicKeyCredential: cred.response as unknown as JsonObject,
          tokenName: 'YubiKey',
        });
        expect(verified.details!.sequence).toBe(registered.details!.sequence + 1n);
        expect((await stored(userId)).state.u2fTokens).toMatchObject([{ id: registered.u2fId, name: 'YubiKey', state: 'U2F_STATE_READY' }]);
      });

      it('v2beta answers every v2 UserService method the gateway serves as v2 does, and CreateOrganization as v2 AddOrganization', async () => {
        const c = clients(kind);
        const org = await c.orgsV2beta.createOrganization({ name: unique('Beta org ') });
        expect(org.id).toMatch(/^\d+$/);
        expect(org.creationDate!.seconds).toBeGreaterThan(0n);
        expect(org.organizationAdmins).toEqual([]);
        expect((await gw.gateway.deps.store.load('org', org.id))!.resourceOwner).toBe(org.id);

        const username = unique('beta');
        const added = await c.usersV2beta.addHumanUser({
          username,
          organization: { org: { case: 'orgId', value: org.id } },
          profile: { givenName: 'Ada', familyName: 'Lovelace', nickName: 'ada', displayName: 'Ada L.', preferredLanguage: 'en', gender: 1 },
          email: { email: `${username}@example.com`, verification: { case: 'returnCode', value: {} } },
          phone: { phone: '+41791234567', verification: { case: 'returnCode', value: {} } },
          metadata: [{ key: 'team', value: new TextEncoder().encode('engine') }],
          passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: true } },
        });
        const userId = added.userId;
        expect(added.details!.resourceOwner).toBe(org.id);
        expect(added.emailCode).toMatch(/\S/);
        expect(added.phoneCode).toMatch(/\S/);
        expect((await stored(userId)).state.metadata).toEqual([{ key: 'team', value: Buffer.from('engine').toString('base64') }]);
        let sequence = added.details!.sequence;

        const set = await c.usersV2beta.setEmail({
          userId,
          email: `${username}.new@example.com`,
          verification: { case: 'returnCode', value: {} },
        });
        expect(set.details!.sequence).toBe(++sequence);
        expect((await c.usersV2beta.verifyEmail({ userId, verificationCode: set.verificationCode! })).details!.sequence).toBe(++sequence);
        expect((await c.usersV2beta.verifyPhone({ userId, verificationCode: added.phoneCode! })).details!.sequence).toBe(++sequence);
        const registered = await c.usersV2beta.registerU2F({ userId });
        const options = registered.publicKeyCredentialCreationOptions as any;
        const cred = authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id });
        const u2f = await c.usersV2beta.verifyU2FRegistration({
          userId,
          u2fId: registered.u2fId,
          publicKeyCredential: cred.response as unknown as JsonObject,
          tokenName: 'Beta key',
        });
        sequence += 2n;
        expect(u2f.details!.sequence).toBe(sequence);
        expect((await stored(userId)).state.u2fTokens).toMatchObject([
          { id: registered.u2fId, name: 'Beta key', state: 'U2F_STATE_READY' },
        ]);

        // The same user, read on both versions: the same message, field for field (v2's mfa_init_skipped, which v2beta lacks, is empty).
        const beta = await c.usersV2beta.getUserByID({ userId });
        const v2 = await c.users.getUserByID({ userId });
        expect(beta.details!.sequence).toBe(sequence);
        expect(toJson(GetUserByIDResponseV2betaSchema, beta)).toEqual(toJson(GetUserByIDResponseV2Schema, v2));
        expect(beta.user!.type.case).toBe('human');
        expect(beta.user!.type.value).toMatchObject({
          profile: { givenName: 'Ada', familyName: 'Lovelace', nickName: 'ada', displayName: 'Ada L.', preferredLanguage: 'en', gender: 1 },
          email: { email: `${username}.new@example.com`, isVerified: true },
          phone: { phone: '+41791234567', isVerified: true },
          passwordChangeRequired: true,
        });
        const query = { queries: [{ query: { case: 'userNameQuery' as const, value: { userName: username } } }] };
        const headers = { 'x-zitadel-orgid': org.id };
        const listed = await c.usersV2beta.listUsers(query, { headers });
        expect(listed.details!.totalResult).toBe(1n);
        expect(listed.result.map((u) => toJson(UserV2betaSchema, u))).toEqual([toJson(UserV2betaSchema, beta.user!)]);
        const listedV2 = await c.users.listUsers(query, { headers });
        expect(toJson(ListUsersResponseV2betaSchema, listed).result).toEqual(toJson(ListUsersResponseV2Schema, listedV2).result);

        // Failures carry the same codes and details as on v2.
        const missing = await failure(c.usersV2beta.getUserByID({ userId: '999999999' }));
        expect(missing.code).toBe(Code.NotFound);
        expect(missing.findDetails(ErrorDetailSchema)[0]!.id).toMatch(/^NOT_FOUND-/);
        const bad = { profile: { givenName: '', familyName: '' }, email: { email: 'not-an-email' } };
        const [badBeta, badV2] = [await failure(c.usersV2beta.addHumanUser(bad)), await failure(c.users.addHumanUser(bad))];
        expect(badBeta.code).toBe(Code.InvalidArgument);
        expect(fieldsOf(badBeta)).toEqual(fieldsOf(badV2));
        expect(fieldsOf(badBeta)).toEqual(['email.email', 'profile.family_name', 'profile.given_name']);
        const plain = clients(kind, await gw.tokenFor(userId));
        expect(
          (
            await failure(
              plain.usersV2beta.addHumanUser({
                profile: { givenName: 'A', familyName: 'B' },
                email: { email: `${unique('p')}@example.com` },
              }),
            )
          ).code,
        ).toBe(Code.PermissionDenied);
        expect((await failure(c.usersV2beta.deleteUser({ userId }))).code).toBe(Code.Unimplemented);
        expect((await failure(c.orgsV2beta.listOrganizations({}))).code).toBe(Code.Unimplemented);
      });

      it('UNAUTHENTICATED without a token and with a forged one', async () => {
        expect((await failure(clients(kind, null).auth.getMyUser({}))).code).toBe(Code.Unauthenticated);
        const forged = gw.adminToken.slice(0, -4) + (gw.adminToken.endsWith('AAAA') ? 'BBBB' : 'AAAA');
        const err = await failure(clients(kind, forged).mgmt.updateHumanProfile({ userId: gw.adminId, firstName: 'X', lastName: 'Y' }));
        expect(err.code).toBe(Code.Unauthenticated);
      });

      it('PERMISSION_DENIED for x-zitadel-orgid of an organization where the caller has no role', async () => {
        const admin = clients(kind);
        const other = await admin.orgs.addOrganization({ name: unique('Other org ') });
        expect(other.organizationId).toMatch(/^\d+$/);
        expect(other.details!.creationDate).toBeDefined();
        const { userId: ownerId } = await addUser(admin);
        await admin.mgmt.addOrgMember({ userId: ownerId, roles: ['ORG_OWNER'] });
        const owner = clients(kind, await gw.tokenFor(ownerId));
        const { userId: target } = await addUser(admin);
        // An owner of the default organization may change its users...
        await owner.mgmt.updateHumanProfile({ userId: target, firstName: 'Changed', lastName: 'ByOwner' });
        // ...but not act in an organization where it holds no role, by either header name.
        for (const header of ['x-zitadel-orgid', 'x-service-orgid']) {
          const err = await failure(
            owner.mgmt.updateHumanProfile(
              { userId: target, firstName: 'No', lastName: 'Way' },
              { headers: { [header]: other.organizationId } },
            ),
          );
          expect(err.code).toBe(Code.PermissionDenied);
        }
        // The instance administrator acts in the other organization through the header.
        const { userId: elsewhere } = await addUser(admin, { organization: { org: { case: 'orgId', value: other.organizationId } } });
        const there = (await admin.mgmt.getUserByID({ id: elsewhere }, { headers: { 'x-zitadel-orgid': other.organizationId } })).user!;
        expect(there.details!.resourceOwner).toBe(other.organizationId);
        expect((await failure(admin.mgmt.getUserByID({ id: elsewhere }))).code).toBe(Code.NotFound);
        // Both headers, naming two organizations: which one was meant cannot be told. The same one twice is fine.
        const both = await failure(
          admin.mgmt.getUserByID(
            { id: elsewhere },
            { headers: { 'x-zitadel-orgid': other.organizationId, 'x-service-orgid': gw.defaultOrgId } },
          ),
        );
        expect(both.code).toBe(Code.InvalidArgument);
        expect(both.rawMessage).toMatch(/x-zitadel-orgid: names another organization than x-service-orgid/);
        const same = (
          await admin.mgmt.getUserByID(
            { id: elsewhere },
            { headers: { 'x-zitadel-orgid': other.organizationId, 'x-service-orgid': other.organizationId } },
          )
        ).user!;
        expect(same.details!.resourceOwner).toBe(other.organizationId);
        // A plain user (no role anywhere) may not add users.
        const { userId: plainId } = await addUser(admin);
        const plain = clients(kind, await gw.tokenFor(plainId));
        expect((await failure(addUser(plain))).code).toBe(Code.PermissionDenied);
      });

      it("NOT_FOUND, ALREADY_EXISTS and FAILED_PRECONDITION, with ZITADEL's ErrorDetail", async () => {
        const c = clients(kind);
        const missing = await failure(c.mgmt.updateHumanProfile({ userId: '999999999', firstName: 'A', lastName: 'B' }));
        expect(missing.code).toBe(Code.NotFound);
        const [detail] = missing.findDetails(ErrorDetailSchema);
        expect(detail!.id).toMatch(/^NOT_FOUND-[0-9a-z]+$/);
        expect(detail!.message).toBe(`${missing.rawMessage}`);
        expect(detail!.message.endsWith(`(${detail!.id})`)).toBe(true);
        expect((await failure(c.mgmt.getUserByID({ id: '999999999' }))).code).toBe(Code.NotFound);
        expect((await failure(c.users.getUserByID({ userId: '999999999' }))).code).toBe(Code.NotFound);

        const userId = unique('fixed');
        await addUser(c, { userId });
        expect((await failure(addUser(c, { userId }))).code).toBe(Code.AlreadyExists);

        const profile = { userId, firstName: 'Same', lastName: 'Profile' };
        await c.mgmt.updateHumanProfile(profile);
        const same = await failure(c.mgmt.updateHumanProfile(profile));
        expect(same.code).toBe(Code.FailedPrecondition);
        // The same site gives the same id each time.
        const again = await failure(c.mgmt.updateHumanProfile(profile));
        expect(again.findDetails(ErrorDetailSchema)[0]!.id).toBe(same.findDetails(ErrorDetailSchema)[0]!.id);
      });

      it('INVALID_ARGUMENT lists every violated field as google.rpc.BadRequest in snake_case wire names', async () => {
        const c = clients(kind);
        const profile = await failure(
          c.mgmt.updateHumanProfile({ userId: gw.adminId, firstName: ' ', lastName: '', preferredLanguage: 'x'.repeat(11) }),
        );
        expect(profile.code).toBe(Code.InvalidArgument);
        expect(fieldsOf(profile)).toEqual(['first_name', 'last_name', 'preferred_language']);
        expect(profile.rawMessage).toContain('first_name');

        const add = await failure(
          c.users.addHumanUser({
            profile: { givenName: '', familyName: '' },
            email: { email: 'not-an-email', verification: { case: 'sendCode', value: { urlTemplate: '' } } },
            metadata: [{ key: 'k', value: new Uint8Array() }],
            passwordType: { case: 'password', value: { password: 'weak' } },
            organization: { org: { case: 'orgDomain', value: ' ' } },
          }),
        );
        expect(add.code).toBe(Code.InvalidArgument);
        expect(fieldsOf(add)).toEqual(
          expect.arrayContaining([
            'email.email',
            'metadata[0].value',
            'organization.org_domain',
            'password.password',
            'profile.family_name',
            'profile.given_name',
          ]),
        );
        expect(fieldsOf(add).every((f) => !/[A-Z]/.test(f) && !f.startsWith('input'))).toBe(true);

        const saml = await failure(c.mgmt.addSAMLApp({ projectId: '1', name: 'x' }));
        expect(fieldsOf(saml)).toEqual(['metadata_url', 'metadata_xml']);
      });

      it('an unexpected failure is INTERNAL "Unexpected error.", logged, with nothing of the cause', async () => {
        const c = clients(kind);
        const { hasher } = gw.gateway.deps;
        const hash = hasher.hash;
        // A cause of its own for each kind: one gateway logs all four.
        const cause = unique(`driver said: connection reset ${kind} `);
        const logged = gw.logs.length;
        hasher.hash = async () => {
          throw new Error(cause);
        };
        try {
          const err = await failure(c.mgmt.setHumanPassword({ userId: gw.adminId, password: 'An0ther!secret' }));
          expect(err.code).toBe(Code.Internal);
          expect(err.rawMessage).toBe('Unexpected error.');
          expect(JSON.stringify(err.details)).not.toContain('connection reset');
          expect(err.findDetails(ErrorDetailSchema)[0]!.id).toBe('INTERNAL');
        } finally {
          hasher.hash = hash;
        }
        expect(
          gw.logs.slice(logged).filter((l) => l.includes('unexpected error') && l.includes('SetHumanPassword') && l.includes(cause)),
        ).toHaveLength(1);
      });

      it('goes through the HTTP edge: request id, one log line with the method and the code (never the body), metrics', async () => {
        const c = clients(kind);
        const requestId = unique(`wire-${kind}-`);
        const secret = unique('Sup3r!secret');
        const err = await failure(
          c.mgmt.setHumanPassword({ userId: '999999999', password: secret }, { headers: { 'x-request-id': requestId } }),
        );
        expect(err.code).toBe(Code.NotFound);
        const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
        expect(line).toMatchObject({
          path: '/zitadel.management.v1.ManagementService/SetHumanPassword',
          protocol: kind === 'connect-json' ? 'connect' : kind,
          operationName: 'SetHumanPassword',
          operationType: 'mutation',
          rootField: 'zitadel.management.v1.ManagementService/SetHumanPassword',
          caller: gw.adminId,
          errors: ['NOT_FOUND'],
        });
        expect(gw.logs.some((l) => l.includes(secret))).toBe(false);
        const metrics = await (await fetch(`${gw.baseUrl}/metrics`)).text();
        const protocol = kind === 'connect-json' ? 'connect' : kind;
        expect(metrics).toMatch(
          new RegExp(
            `gateway_http_requests_total\\{protocol="${protocol}",operation_type="mutation",root_field="zitadel\\.management\\.v1\\.ManagementService/SetHumanPassword",status="\\d+"\\} \\d+`,
          ),
        );
      });

      it('a method the gateway does not implement answers UNIMPLEMENTED', async () => {
        const c = clients(kind);
        expect((await failure(c.mgmt.getIAM({}))).code).toBe(Code.Unimplemented);
        expect((await failure(c.users.deleteUser({ userId: gw.adminId }))).code).toBe(Code.Unimplemented);
      });
    });

    describe('one state, several faces', () => {
      it('a user created over gRPC is updated over Connect and read through GraphQL, its sequence one higher per write', async () => {
        const grpc = clients('grpc');
        const json = clients('connect-json');
        const added = await addUser(grpc);
        const first = added.details!.sequence;
        const updated = await json.mgmt.updateHumanProfile({ userId: added.userId, firstName: 'Cross', lastName: 'Face' });
        expect(updated.details!.sequence).toBe(first + 1n);
        const phone = await grpc.mgmt.updateHumanPhone({ userId: added.userId, phone: '+41791234568' });
        expect(phone.details!.sequence).toBe(first + 2n);
        const res = await gw.send(UserDocument, { id: added.userId });
        expect(res.errors).toBeUndefined();
        expect(res.data!.user).toMatchObject({
          id: added.userId,
          profile: { firstName: 'Cross', lastName: 'Face' },
          phone: { phone: '+41791234568' },
        });
        expect(res.data!.user!.details.sequence).toBe(String(first + 2n));
      });

      it('GraphQL, /health and a wire call share one HTTP/2 cleartext connection', async () => {
        const session = http2Connect(gw.baseUrl);
        try {
          const request = (headers: Record<string, string>, body?: string) => h2Request(session, headers, body);
          const health = await request({ ':path': '/health', ':method': 'GET' });
          expect(health).toMatchObject({ status: 200 });
          const graphql = await request(
            { ':path': '/graphql', ':method': 'POST', 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
            JSON.stringify({ query: '{ me { id } }' }),
          );
          expect(graphql.status).toBe(200);
          expect(JSON.parse(graphql.text)).toEqual({ data: { me: { id: gw.adminId } } });
          const wire = await request(
            {
              ':path': '/zitadel.auth.v1.AuthService/GetMyUser',
              ':method': 'POST',
              'content-type': 'application/json',
              authorization: `Bearer ${gw.adminToken}`,
            },
            '{}',
          );
          expect(wire.status).toBe(200);
          expect(JSON.parse(wire.text).user.id).toBe(gw.adminId);
        } finally {
          session.close();
        }
      });
    });

    describe('edge limits on the wire', () => {
      it('a body over the unauthenticated cap without a token is refused before it is read (HTTP/1.1)', async () => {
        const res = await fetch(`${gw.baseUrl}/zitadel.management.v1.ManagementService/AddProject`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'x'.repeat(70 * 1024) }),
        });
        expect(res.status).toBe(401);
      });

      it.each(KINDS)('a message over the body cap is refused over %s with RESOURCE_EXHAUSTED; one just under it is read', async (kind) => {
        // node's HTTP/2 client keeps at most 10 MB per session by default (maxSessionMemory): a
        // 13 MB message the server refuses unread stays queued there and the client resets the
        // stream (ENHANCE_YOUR_CALM, INTERNAL at the caller). A client that sends messages this
        // large raises its limit.
        const c =
          kind === 'grpc'
            ? {
                mgmt: createManagementServiceClient(
                  createGrpcTransport({
                    baseUrl: gw.baseUrl,
                    interceptors: [bearer(gw.adminToken)],
                    nodeOptions: { maxSessionMemory: 64 },
                  }),
                ),
              }
            : clients(kind);
        const cap = maxRequestBodyBytes(gw.config);
        const over = await failure(c.mgmt.addProject({ name: 'x'.repeat(cap + 1) }));
        expect(over.code).toBe(Code.ResourceExhausted);
        const under = await failure(c.mgmt.addProject({ name: 'x'.repeat(cap - 100) }));
        expect(under.code).toBe(Code.InvalidArgument);
        expect(fieldsOf(under)).toEqual(['name']);
        expect((await c.mgmt.getUserByID({ id: gw.adminId })).user!.id).toBe(gw.adminId);
      });
    });

    describe('one port', () => {
      it('an HTTP/1.1 request whose first bytes arrive one at a time still reaches the edge', async () => {
        const socket = netConnect(Number(new URL(gw.baseUrl).port), '127.0.0.1');
        await new Promise((r) => socket.once('connect', r));
        const answer = new Promise<string>((resolve) => socket.once('data', (d) => resolve(String(d))));
        for (const part of ['P', 'O', 'S', 'T /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
          socket.write(part);
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(await answer).toMatch(/^HTTP\/1\.1 405/); // the probe answers GET and HEAD only
        socket.destroy();
      });

      it('an HTTP/2 client preface split across writes is recognized', async () => {
        const port = Number(new URL(gw.baseUrl).port);
        const session = http2Connect(gw.baseUrl, {
          createConnection: () => {
            const socket = netConnect(port, '127.0.0.1');
            const write = socket.write.bind(socket);
            let first = true;
            socket.write = ((chunk: any, ...rest: any[]) => {
              if (!first) return write(chunk, ...rest);
              first = false;
              const bytes = Buffer.from(chunk);
              write(bytes.subarray(0, 3));
              setTimeout(() => write(bytes.subarray(3), ...rest), 20);
              return true;
            }) as typeof socket.write;
            return socket;
          },
        });
        try {
          const status = await new Promise<number>((resolve, reject) => {
            const stream = session.request({ ':path': '/health', ':method': 'GET' });
            stream.on('response', (h) => resolve(Number(h[':status'])));
            stream.on('error', reject);
            stream.end();
          });
          expect(status).toBe(200);
        } finally {
          session.close();
        }
      });
    });

    describe('graceful stop', () => {
      it('shutdown with open gRPC (HTTP/2), gRPC-web and idle keep-alive (HTTP/1.1) connections is clean and prompt, closes them, and the port is closed afterwards', async () => {
        const own = await startGateway({ env: { ...env(), SHUTDOWN_TIMEOUT_MS: '5000' } });
        const ownClients = (kind: Kind) => {
          const t =
            kind === 'grpc'
              ? createGrpcTransport({ baseUrl: own.baseUrl, interceptors: [bearer(own.adminToken)] })
              : createGrpcWebTransport({ baseUrl: own.baseUrl, httpVersion: '1.1', interceptors: [bearer(own.adminToken)] });
          return createAuthServiceClient(t);
        };
        const grpc = ownClients('grpc');
        const web = ownClients('grpc-web');
        expect((await grpc.getMyUser({})).user!.id).toBe(own.adminId);
        expect((await web.getMyUser({})).user!.id).toBe(own.adminId);
        // An idle HTTP/1.1 keep-alive connection (the edge's drain closes it).
        const keepAlive = netConnect(Number(new URL(own.baseUrl).port), '127.0.0.1');
        const keepAliveClosed = new Promise<void>((resolve) => keepAlive.once('close', () => resolve()));
        const answered = new Promise<string>((resolve) => keepAlive.once('data', (d) => resolve(String(d))));
        keepAlive.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
        expect(await answered).toMatch(/^HTTP\/1\.1 200/);
        const started = Date.now();
        expect(await own.gateway.shutdown()).toBe(true);
        await keepAliveClosed;
        // Closed by the drain, not left to SHUTDOWN_TIMEOUT_MS (10 s; clean says nothing was cut).
        expect(Date.now() - started).toBeLessThan(8000);
        await expect(fetch(`${own.baseUrl}/health`)).rejects.toThrow();
        await own.close();
      });
    });
  });
}

wireSuite('wire API on the embedded stores', () => ({}));
describeWith('mongo', 'wire API on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    wireSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `wire_${Date.now()}_${seq++}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
