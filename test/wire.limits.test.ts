// SPEC.md's Limits table over gRPC with @zitadel/client's service clients: every limit at
// its boundary in Unicode code points (emoji: 2 UTF-16 units, 4 UTF-8 bytes each, so any
// other count fails). The value at the limit passes; one code point more is INVALID_ARGUMENT
// with a google.rpc.BadRequest naming exactly that field in its wire name, and writes
// nothing (the stored sequence does not move, nothing is created). On the embedded stores
// and on MongoDB-wire + Redis.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyImportedHash } from '../src/model/passwords.ts';
import type { User } from '../src/model/users.ts';
import type { AggregateType } from '../src/store/port.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { argon2OfLength, codePoints, E, emailOf, fill, urlTemplateOf } from './support/limits.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';
import { violationsOf, failure, wireTransport, zitadelClients } from './support/wire-clients.ts';

const ORIGIN = 'http://localhost:4000';
const SAML_XML = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url), 'utf8');

let seq = 0;
const tag = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

/** The suite against one gateway started with `env()` (the embedded stores, or MongoDB-wire + Redis). */
function limitsSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    const authenticator = createSoftAuthenticator();

    beforeAll(async () => {
      gw = await startGateway({ env: { ...env(), WEBAUTHN_ORIGINS: ORIGIN } });
    });
    afterAll(async () => {
      await gw?.close();
    });

    const grpc = (token = gw.adminToken) => zitadelClients(wireTransport('grpc', gw.baseUrl, token));

    const violations = violationsOf;

    /** INVALID_ARGUMENT with a BadRequest naming exactly `field`; the description is returned. */
    function expectInvalid(err: ConnectError, field: string): string {
      expect(err.code, err.message).toBe(Code.InvalidArgument);
      const found = violations(err);
      expect(
        found.map((v) => v.field),
        err.message,
      ).toEqual([field]);
      return found[0]!.description;
    }

    /** Aggregate sequence in the store (null: no such aggregate). */
    const sequenceOf = async (type: AggregateType, id: string) => (await gw.gateway.deps.store.load<unknown>(type, id))?.sequence ?? null;
    const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;

    /** `call` must be refused naming `field`, and aggregate `type`/`id` must not move. */
    async function refused(type: AggregateType, id: string, field: string, call: () => Promise<unknown>): Promise<string> {
      const before = await sequenceOf(type, id);
      expect(before).not.toBeNull();
      const description = expectInvalid(await failure(call()), field);
      expect(await sequenceOf(type, id)).toBe(before);
      return description;
    }

    const newUser = async () =>
      (
        await grpc().users.addHumanUser({
          profile: { givenName: 'Ada', familyName: 'Lovelace' },
          email: { email: `${tag('u')}@example.com`, verification: { case: 'isVerified', value: true } },
        })
      ).userId;

    /** AddHumanUser with a fixed user_id and username, so a refusal can be shown to have created nothing. */
    const createRequest = (extra: Record<string, unknown> = {}) => ({
      userId: tag('never-'),
      username: tag('never-'),
      profile: { givenName: 'Ada', familyName: 'Lovelace' },
      email: { email: `${tag('c')}@example.com`, verification: { case: 'returnCode' as const, value: {} } },
      ...extra,
    });
    async function expectNoUser(req: { userId: string; username: string }) {
      expect(await gw.gateway.deps.store.load<User>('user', req.userId)).toBeNull();
      expect(await gw.gateway.deps.store.lookup(`username:${req.username.trim().toLowerCase()}`)).toBeNull();
    }
    /** AddHumanUser must be refused naming `field`, and create nothing. */
    async function rejectedCreate(extra: Record<string, unknown>, field: string): Promise<string> {
      const req = createRequest(extra);
      const description = expectInvalid(await failure(grpc().users.addHumanUser(req as never)), field);
      await expectNoUser(req);
      return description;
    }
    async function created(extra: Record<string, unknown>) {
      const req = createRequest(extra);
      const res = await grpc().users.addHumanUser(req as never);
      expect(res.userId).toBe(req.userId);
      return stored(req.userId);
    }

    const profileLimits = [
      ['firstName', 'first_name', 200],
      ['lastName', 'last_name', 200],
      ['nickName', 'nick_name', 200],
      ['displayName', 'display_name', 200],
      ['preferredLanguage', 'preferred_language', 10],
    ] as const;

    describe('SPEC.md limits over gRPC, in code points', () => {
      it('the emoji make code points, UTF-16 units and UTF-8 bytes differ', () => {
        expect(codePoints(E(200))).toBe(200);
        expect(E(200).length).toBe(400);
        expect(Buffer.byteLength(E(200))).toBe(800);
      });

      it('UpdateMyProfile: names at 200 and preferred_language at 10 pass; one more, or a blank required name, is refused and writes nothing', async () => {
        const userId = await newUser();
        const me = grpc(await gw.tokenFor(userId)).auth;
        const base = { firstName: 'Ada', lastName: 'Lovelace', nickName: 'ada', displayName: 'Ada L' };
        for (const [field, wire, max] of profileLimits) {
          const description = await refused('user', userId, wire, () => me.updateMyProfile({ ...base, [field]: E(max + 1) }));
          expect(description).toBe(`must be at most ${max} characters`);
          const before = (await stored(userId)).sequence;
          const ok = await me.updateMyProfile({ ...base, [field]: E(max) });
          expect(ok.details!.sequence).toBe(BigInt(before) + 1n);
          expect((await stored(userId)).state.profile[field]).toBe(E(max));
        }
        // first_name, last_name and display_name are required (proto3 "" is "not given");
        // nick_name is optional but non-empty when given, so a blank one is refused.
        for (const [field, wire, value] of [
          ['firstName', 'first_name', ''],
          ['lastName', 'last_name', ''],
          ['displayName', 'display_name', ''],
          ['firstName', 'first_name', '  '],
          ['lastName', 'last_name', '\u2003'],
          ['displayName', 'display_name', ' '],
          ['nickName', 'nick_name', '   '],
        ] as const) {
          await refused('user', userId, wire, () => me.updateMyProfile({ ...base, [field]: value }));
        }
      });

      it('UpdateHumanProfile: names at 200 and preferred_language at 10 pass, one more is refused and writes nothing', async () => {
        const userId = await newUser();
        const { mgmt } = grpc();
        const base = { userId, firstName: 'Ada', lastName: 'Lovelace' };
        for (const [field, wire, max] of profileLimits) {
          await refused('user', userId, wire, () => mgmt.updateHumanProfile({ ...base, [field]: E(max + 1) }));
          await mgmt.updateHumanProfile({ ...base, [field]: E(max) });
          expect((await stored(userId)).state.profile[field]).toBe(E(max));
        }
      });

      it('AddHumanUser profile: names at 200 and preferred_language at 10 pass, one more creates nothing', async () => {
        const wireProfile = {
          firstName: 'givenName',
          lastName: 'familyName',
          nickName: 'nickName',
          displayName: 'displayName',
          preferredLanguage: 'preferredLanguage',
        } as const;
        for (const [field, wire, max] of profileLimits) {
          const protoField = wireProfile[field];
          const wireName = { first_name: 'given_name', last_name: 'family_name' }[wire as string] ?? wire;
          await rejectedCreate({ profile: { givenName: 'Ada', familyName: 'Lovelace', [protoField]: E(max + 1) } }, `profile.${wireName}`);
          const user = await created({ profile: { givenName: 'Ada', familyName: 'Lovelace', [protoField]: E(max) } });
          expect(user.state.profile[field]).toBe(E(max));
        }
      });

      it('AddHumanUser user_id and username: 200 pass, 201 fail', async () => {
        await rejectedCreate({ userId: fill(tag('id'), 201) }, 'user_id');
        const overName = createRequest({ username: fill(tag('name'), 201) });
        expectInvalid(await failure(grpc().users.addHumanUser(overName as never)), 'username');
        await expectNoUser(overName);
        const userId = fill(tag('id'), 200);
        const username = fill(tag('name'), 200);
        const res = await grpc().users.addHumanUser(createRequest({ userId, username }) as never);
        expect(res.userId).toBe(userId);
        expect((await stored(userId)).state.username).toBe(username);
      });

      it('proto3 optional fields sent empty (user_id, username, url_template) are refused as GraphQL refuses them, not taken as absent', async () => {
        expect(await rejectedCreate({ userId: '' }, 'user_id')).toBe('must not be empty');
        expect(await rejectedCreate({ username: '' }, 'username')).toBe('must not be empty');
        const sendCode = { case: 'sendCode' as const, value: { urlTemplate: '' } };
        await rejectedCreate({ email: { email: `${tag('t')}@example.com`, verification: sendCode } }, 'email.send_code.url_template');
        const userId = await newUser();
        await refused('user', userId, 'send_code.url_template', () =>
          grpc().users.setEmail({ userId, email: `${tag('t')}@example.com`, verification: sendCode }),
        );
      });

      it('AddHumanUser email.email and SetEmail email: 200 pass, 201 fail', async () => {
        const at200 = emailOf(200, tag('e'));
        expect(at200.length).toBeGreaterThan(200);
        await rejectedCreate({ email: { email: emailOf(201, tag('e')), verification: { case: 'returnCode', value: {} } } }, 'email.email');
        const user = await created({ email: { email: at200, verification: { case: 'returnCode', value: {} } } });
        expect(user.state.email).toEqual({ email: at200, isVerified: false });

        const userId = await newUser();
        const { users } = grpc();
        await refused('user', userId, 'email', () =>
          users.setEmail({ userId, email: emailOf(201, tag('f')), verification: { case: 'returnCode', value: {} } }),
        );
        const other = emailOf(200, tag('f'));
        await users.setEmail({ userId, email: other, verification: { case: 'returnCode', value: {} } });
        expect((await stored(userId)).state.email).toEqual({ email: other, isVerified: false });
      });

      it('AddHumanUser email.send_code.url_template and SetEmail send_code.url_template: 200 pass, 201 fail', async () => {
        const sendCode = (urlTemplate: string) => ({ case: 'sendCode' as const, value: { urlTemplate } });
        await rejectedCreate(
          { email: { email: `${tag('t')}@example.com`, verification: sendCode(urlTemplateOf(201)) } },
          'email.send_code.url_template',
        );
        const user = await created({ email: { email: `${tag('t')}@example.com`, verification: sendCode(urlTemplateOf(200)) } });
        const jobs = () =>
          gw.logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('delivery job') && l.userId === user.id);
        expect(jobs().map((j) => j.urlTemplate)).toEqual([urlTemplateOf(200)]);

        const { users } = grpc();
        await refused('user', user.id, 'send_code.url_template', () =>
          users.setEmail({ userId: user.id, email: `${tag('t')}@example.com`, verification: sendCode(urlTemplateOf(201)) }),
        );
        const email = `${tag('t')}@example.com`;
        await users.setEmail({ userId: user.id, email, verification: sendCode(urlTemplateOf(200)) });
        expect((await stored(user.id)).state.email.email).toBe(email);
      });

      it('AddHumanUser phone.phone: 200 pass (a number padded with spaces), 201 fail', async () => {
        const isVerified = { case: 'isVerified' as const, value: true };
        await rejectedCreate({ phone: { phone: '+41 79 123 45 69'.padEnd(201, ' '), verification: isVerified } }, 'phone.phone');
        const user = await created({ phone: { phone: '+41 79 123 45 68'.padEnd(200, ' '), verification: isVerified } });
        expect(user.state.phone).toEqual({ phone: '+41791234568', isVerified: true });
      });

      it('AddHumanUser metadata key 200 passes, 201 fails; value 500000 bytes passes, 500001 fails', async () => {
        const v = new TextEncoder().encode('v');
        await rejectedCreate({ metadata: [{ key: E(201), value: v }] }, 'metadata[0].key');
        expect((await created({ metadata: [{ key: E(200), value: v }] })).state.metadata).toEqual([{ key: E(200), value: 'dg==' }]);
        const over = randomBytes(500_001);
        await rejectedCreate({ metadata: [{ key: 'blob', value: over }] }, 'metadata[0].value');
        const at = randomBytes(500_000);
        expect((await created({ metadata: [{ key: 'blob', value: at }] })).state.metadata).toEqual([
          { key: 'blob', value: at.toString('base64') },
        ]);
      });

      it('AddHumanUser password.password: 200 passes, 201 fails; hashed_password.hash: 200 passes, 201 fails', async () => {
        const password = { case: 'password' as const, value: { password: fill('Bb2?', 201), changeRequired: false } };
        await rejectedCreate({ passwordType: password }, 'password.password');
        const at = fill('Aa1!', 200);
        const user = await created({ passwordType: { case: 'password', value: { password: at, changeRequired: false } } });
        expect(await verifyImportedHash(at, user.state.passwordHash!)).toBe(true);

        const plain = 'Imp0rted!hash';
        const over = await argon2OfLength(plain, 201);
        await rejectedCreate(
          { passwordType: { case: 'hashedPassword', value: { hash: over, changeRequired: true } } },
          'hashed_password.hash',
        );
        const hash = await argon2OfLength(plain, 200);
        const imported = await created({ passwordType: { case: 'hashedPassword', value: { hash, changeRequired: true } } });
        expect(imported.state.passwordHash).toBe(hash);
        expect(await verifyImportedHash(plain, imported.state.passwordHash!)).toBe(true);
      });

      it('AddHumanUser idp_links idp_id, user_id, user_name: 200 pass the rules, 201 fail', async () => {
        const { idpId } = await grpc().mgmt.addOrgOIDCIDP({
          name: tag('idp'),
          issuer: 'https://accounts.example.com',
          clientId: 'c',
          clientSecret: 's',
          scopes: ['openid'],
        });
        const link = { idpId, userId: tag('ext'), userName: tag('extname') };
        const wire = { idpId: 'idp_id', userId: 'user_id', userName: 'user_name' } as const;
        for (const field of ['idpId', 'userId', 'userName'] as const) {
          await rejectedCreate({ idpLinks: [{ ...link, [field]: E(201) }] }, `idp_links[0].${wire[field]}`);
        }
        // user_id and user_name at 200 with a real IDP: created with the link.
        const user = await created({ idpLinks: [{ ...link, userId: E(200), userName: E(200) }] });
        expect(user.state.idpLinks).toEqual([{ idpId, userId: E(200), userName: E(200) }]);
        // An IDP id of 200 code points passes the rules and then names no IDP.
        const req = createRequest({ idpLinks: [{ ...link, idpId: E(200), userId: tag('ext') }] });
        expect((await failure(grpc().users.addHumanUser(req as never))).code).toBe(Code.NotFound);
        await expectNoUser(req);
      });

      it('UpdateHumanPhone phone: 50 passes (a valid number padded with spaces), 51 fails', async () => {
        const userId = await newUser();
        const { mgmt } = grpc();
        const description = await refused('user', userId, 'phone', () =>
          mgmt.updateHumanPhone({ userId, phone: '+41 79 555 12 35'.padEnd(51, ' ') }),
        );
        expect(description).toBe('must be at most 50 characters');
        await mgmt.updateHumanPhone({ userId, phone: '+41 79 555 12 34'.padEnd(50, ' '), isPhoneVerified: true });
        expect((await stored(userId)).state.phone).toEqual({ phone: '+41795551234', isVerified: true });
      });

      it('SetHumanPassword password: 72 passes, 73 fails', async () => {
        const userId = await newUser();
        const { mgmt } = grpc();
        const description = await refused('user', userId, 'password', () => mgmt.setHumanPassword({ userId, password: fill('Dd4%', 73) }));
        expect(description).toBe('must be at most 72 characters');
        const at = fill('Cc3#', 72);
        await mgmt.setHumanPassword({ userId, password: at, noChangeRequired: true });
        expect(await verifyImportedHash(at, (await stored(userId)).state.passwordHash!)).toBe(true);
      });

      it('UpdateOrgIDPOIDCConfig issuer, client_id, client_secret: 200 pass, 201 fail', async () => {
        const { mgmt } = grpc();
        const { idpId } = await mgmt.addOrgOIDCIDP({
          name: tag('idp'),
          issuer: 'https://accounts.example.com',
          clientId: 'c',
          clientSecret: 's',
          scopes: ['openid'],
        });
        const base = { idpId, issuer: 'https://login.example.org', clientId: 'client', scopes: ['openid'] };
        for (const [field, wire] of [
          ['issuer', 'issuer'],
          ['clientId', 'client_id'],
          ['clientSecret', 'client_secret'],
        ] as const) {
          await refused('idp', idpId, wire, () => mgmt.updateOrgIDPOIDCConfig({ ...base, [field]: E(201) }));
          const before = (await sequenceOf('idp', idpId))!;
          const ok = await mgmt.updateOrgIDPOIDCConfig({ ...base, [field]: E(200) });
          expect(ok.details!.sequence).toBe(BigInt(before) + 1n);
        }
        const idp = (await mgmt.getOrgIDPByID({ id: idpId })).idp!;
        expect(idp.config.value).toMatchObject({ issuer: base.issuer, clientId: base.clientId });
      });

      it('AddSAMLApp name: 200 passes, 201 fails and the project does not move', async () => {
        const { mgmt } = grpc();
        const project = await mgmt.addProject({ name: tag('project') });
        const xml = () =>
          new TextEncoder().encode(SAML_XML.replace('https://sp.example.com/saml/metadata', `https://${tag('sp')}.example.com/saml`));
        await refused('project', project.id, 'name', () =>
          mgmt.addSAMLApp({ projectId: project.id, name: E(201), metadata: { case: 'metadataXml', value: xml() } }),
        );
        const app = await mgmt.addSAMLApp({ projectId: project.id, name: E(200), metadata: { case: 'metadataXml', value: xml() } });
        expect(app.details!.sequence).toBe(project.details!.sequence + 1n);
      });

      it('VerifyU2FRegistration token_name: 201 is refused and leaves the registration pending; 200 then passes', async () => {
        const { users } = grpc();
        const userId = await newUser();
        const registered = await users.registerU2F({ userId });
        const options = registered.publicKeyCredentialCreationOptions as any;
        const cred = authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id });
        const verify = (tokenName: string) =>
          users.verifyU2FRegistration({
            userId,
            u2fId: registered.u2fId,
            publicKeyCredential: cred.response as unknown as JsonObject,
            tokenName,
          });
        await refused('user', userId, 'token_name', () => verify(E(201)));
        const ok = await verify(E(200));
        expect(ok.details!.sequence).toBe(registered.details!.sequence + 1n);
        expect((await stored(userId)).state.u2fTokens).toMatchObject([{ id: registered.u2fId, name: E(200), state: 'U2F_STATE_READY' }]);
      });
      it('VerifyU2FRegistration public_key_credential: 55 to 1048576 code points of JSON pass the length rule, 54 and 1048577 do not', async () => {
        const { users } = grpc();
        const userId = await newUser();
        const registered = await users.registerU2F({ userId });
        // {"x":"…"} is 8 code points around the value.
        const credentialOf = (n: number) => ({ x: n - 8 > 20 ? E(n - 8) : 'a'.repeat(n - 8) });
        expect(codePoints(JSON.stringify(credentialOf(1_048_577)))).toBe(1_048_577);
        expect(JSON.stringify(credentialOf(1_048_577)).length).toBeGreaterThan(2_000_000);
        const lengthRule = 'must be 55 to 1048576 characters as JSON';
        const verify = (n: number) =>
          users.verifyU2FRegistration({ userId, u2fId: registered.u2fId, publicKeyCredential: credentialOf(n), tokenName: 'key' });
        for (const n of [54, 1_048_577]) {
          expect(await refused('user', userId, 'public_key_credential', () => verify(n))).toBe(lengthRule);
        }
        // At the limits the length rule passes; the credential is then no WebAuthn response.
        for (const n of [55, 1_048_576]) {
          expect(await refused('user', userId, 'public_key_credential', () => verify(n))).not.toBe(lengthRule);
        }
      });

      it('VerifyU2FRegistration public_key_credential shape over binary gRPC: 16 levels and 1000 members pass the shape rule, 17 and 1001 do not, as on GraphQL', async () => {
        const { users } = grpc();
        const userId = await newUser();
        const registered = await users.registerU2F({ userId });
        const nested = (levels: number): JsonObject => {
          let v: JsonObject = { pad: 'p'.repeat(60) };
          for (let i = 1; i < levels; i++) v = { n: v };
          return v;
        };
        const members = (n: number): JsonObject => ({ list: Array.from({ length: n - 1 }, () => 0) });
        const verify = (credential: JsonObject) =>
          users.verifyU2FRegistration({ userId, u2fId: registered.u2fId, publicKeyCredential: credential, tokenName: 'key' });
        expect(await refused('user', userId, 'public_key_credential', () => verify(nested(17)))).toBe(
          'must not nest deeper than 16 levels',
        );
        expect(await refused('user', userId, 'public_key_credential', () => verify(members(1001)))).toBe(
          'must hold at most 1000 members and elements',
        );
        // Within the rule the transport lets them through; the credential is then no WebAuthn response.
        for (const credential of [nested(16), members(1000)]) {
          expect(await refused('user', userId, 'public_key_credential', () => verify(credential))).toMatch(/could not be parsed/);
        }
      });
    });
  });
}

limitsSuite('wire limits on the embedded stores', () => ({}));
describeWith('mongo', 'wire limits on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    limitsSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `wire_limits_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
