// The user operations end to end over HTTP, on the embedded stores and on MongoDB-wire + Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  MeDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanPhoneDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UserDocument,
  VerifyEmailDocument,
  VerifyPhoneDocument,
} from './generated/graphql.ts';
import { describeWith } from './support/servers.ts';
import { expectRestStatus, onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { verifyImportedHash } from '../src/model/passwords.ts';
import type { User } from '../src/model/users.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Ada', lastName: 'Lovelace' };

function userSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const addUser = async (extra: Record<string, unknown> = {}, opts = {}) => {
      const res = await gw.send(
        AddHumanUserDocument,
        { input: { profile, email: { email: `${unique('u')}@example.com`, returnCode: true }, ...extra } as any },
        opts,
      );
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser;
    };
    const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;
    const deliveries = (userId: string) =>
      gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg.startsWith('delivery job') && l.userId === userId);

    it('me answers the caller with its details', async () => {
      const res = await gw.send(MeDocument, {});
      expect(res.errors).toBeUndefined();
      expect(res.data!.me.id).toBe(gw.adminId);
      expect(res.data!.me.resourceOwner).toBe(gw.defaultOrgId);
      expect(res.data!.me.details.sequence).toMatch(/^\d+$/);
    });

    it('addHumanUser creates a user; its details have no creationDate and name the organization', async () => {
      const email = `${unique('grace')}@example.com`;
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          profile: {
            firstName: 'Grace',
            lastName: 'Hopper',
            nickName: 'amazing',
            displayName: 'Grace H.',
            preferredLanguage: 'en',
            gender: 'GENDER_FEMALE',
          },
          email: { email, isVerified: true },
          phone: { phone: '+41 79 123 45 67', isVerified: true },
          metadata: [{ key: 'team', value: Buffer.from('compilers').toString('base64') }],
          password: { password: 'Secr3t!pass', changeRequired: true },
        },
      });
      expect(res.errors).toBeUndefined();
      const { userId, details, emailCode, phoneCode } = res.data!.addHumanUser;
      expect(userId).toMatch(/^\d+$/);
      expect(details.sequence).toBe('1');
      expect(details.creationDate).toBeNull();
      expect(details.resourceOwner).toBe(gw.defaultOrgId);
      expect(new Date(details.changeDate).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(emailCode).toBeNull();
      expect(phoneCode).toBeNull();

      const read = await gw.send(UserDocument, { id: userId });
      const user = read.data!.user!;
      expect(user.username).toBe(email);
      expect(user.profile).toEqual({
        firstName: 'Grace',
        lastName: 'Hopper',
        nickName: 'amazing',
        displayName: 'Grace H.',
        preferredLanguage: 'en',
        gender: 'GENDER_FEMALE',
      });
      expect(user.email).toEqual({ email, isVerified: true });
      expect(user.phone).toEqual({ phone: '+41791234567', isVerified: true });
      expect(user.metadata).toEqual([{ key: 'team', value: Buffer.from('compilers').toString('base64') }]);
      expect(user.hasPassword).toBe(true);
      expect(user.passwordChangeRequired).toBe(true);
      expect(user.state).toBe('USER_STATE_ACTIVE');
      expect(read.text).not.toContain('Secr3t!pass');
      expect(read.text).not.toMatch(/\$2[aby]\$|\$argon2/);
      expect(deliveries(userId)).toEqual([]);
      expect(await verifyImportedHash('Secr3t!pass', (await stored(userId)).state.passwordHash!)).toBe(true);
    });

    it('addHumanUser keeps a given userId and username, and refuses them a second time', async () => {
      const userId = unique('own-');
      const username = unique('Name');
      const first = await addUser({ userId, username: `  ${username} ` });
      expect(first.userId).toBe(userId);
      expect((await gw.send(UserDocument, { id: userId })).data!.user!.username).toBe(username);
      const sameId = await gw.send(AddHumanUserDocument, { input: { userId, profile, email: { email: 'x@example.com' } } });
      expect(onlyError(sameId).extensions?.code).toBe('ALREADY_EXISTS');
      const sameName = await gw.send(AddHumanUserDocument, {
        input: { username: username.toUpperCase(), profile, email: { email: 'x@example.com' } },
      });
      expect(onlyError(sameName).extensions?.code).toBe('ALREADY_EXISTS');
      expectRestStatus(sameName, 409);
    });

    it('rule 1: a user whose email is neither verified nor returned gets a verification mail, without the code in any log', async () => {
      const email = `${unique('mail')}@example.com`;
      const sent = await gw.send(AddHumanUserDocument, {
        input: { profile, email: { email, sendCode: { urlTemplate: 'https://app.example/verify?u={{.UserID}}&c={{.Code}}' } } },
      });
      const plain = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `x${email}` } } });
      const returned = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `y${email}`, returnCode: true } } });
      const verified = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `z${email}`, isVerified: true } } });
      const ids = [sent, plain, returned, verified].map((r) => r.data!.addHumanUser.userId);
      expect(deliveries(ids[0]!).map((d) => [d.kind, d.urlTemplate])).toEqual([
        ['verify-email-on-create', 'https://app.example/verify?u={{.UserID}}&c={{.Code}}'],
      ]);
      expect(deliveries(ids[1]!).map((d) => d.kind)).toEqual(['verify-email-on-create']);
      expect(deliveries(ids[2]!)).toEqual([]);
      expect(deliveries(ids[3]!)).toEqual([]);
      const code = returned.data!.addHumanUser.emailCode!;
      expect(code).toMatch(/^[A-Z0-9]{6}$/);
      expect(gw.logs.join('\n')).not.toContain(code);

      const verify = await gw.send(VerifyEmailDocument, { input: { userId: ids[2]!, verificationCode: code.toLowerCase() } });
      expect(verify.errors).toBeUndefined();
      expect(verify.data!.verifyEmail.details.sequence).toBe('2');
      expect((await stored(ids[2]!)).state.email.isVerified).toBe(true);
      const again = await gw.send(VerifyEmailDocument, { input: { userId: ids[2]!, verificationCode: code } });
      expect(onlyError(again).extensions?.code).toBe('FAILED_PRECONDITION');
    });

    it('returns the phone code when asked and verifyPhone accepts it; a wrong code is INVALID_ARGUMENT', async () => {
      const user = await addUser({ phone: { phone: '+41 44 668 18 00', returnCode: true } });
      expect(user.phoneCode).toMatch(/^[A-Z0-9]{6}$/);
      const wrong = await gw.send(VerifyPhoneDocument, {
        input: { userId: user.userId, verificationCode: 'ZZZZZZ' === user.phoneCode ? 'YYYYYY' : 'ZZZZZZ' },
      });
      expect(onlyError(wrong).extensions?.code).toBe('INVALID_ARGUMENT');
      const ok = await gw.send(VerifyPhoneDocument, { input: { userId: user.userId, verificationCode: user.phoneCode! } });
      expect(ok.errors).toBeUndefined();
      expect((await stored(user.userId)).state.phone).toEqual({ phone: '+41446681800', isVerified: true });
    });

    it('updateMyProfile changes the caller, sets creationDate, and a second identical call is FAILED_PRECONDITION', async () => {
      const user = await addUser();
      const token = await gw.tokenFor(user.userId);
      const input = {
        firstName: 'Ada',
        lastName: 'King',
        nickName: 'Countess',
        displayName: 'Ada King',
        preferredLanguage: 'en-GB',
        gender: 'GENDER_FEMALE' as const,
      };
      const res = await gw.send(UpdateMyProfileDocument, { input }, { token });
      expect(res.errors).toBeUndefined();
      const d = res.data!.updateMyProfile.details;
      expect(d.sequence).toBe('2');
      expect(d.creationDate).toBe(d.changeDate);
      expect(d.resourceOwner).toBe(gw.defaultOrgId);
      expect((await stored(user.userId)).state.profile).toEqual(input);
      const same = await gw.send(UpdateMyProfileDocument, { input }, { token });
      expect(onlyError(same).extensions?.code).toBe('FAILED_PRECONDITION');
      expect((await stored(user.userId)).sequence).toBe(2);
    });

    it('updateHumanProfile replaces the profile: left-out optional fields are cleared', async () => {
      const user = await addUser({
        profile: { ...profile, nickName: 'nick', displayName: 'Ada L', preferredLanguage: 'de', gender: 'GENDER_FEMALE' },
      });
      const res = await gw.send(UpdateHumanProfileDocument, { input: { userId: user.userId, firstName: 'Ada', lastName: 'Byron' } });
      expect(res.errors).toBeUndefined();
      expect(res.data!.updateHumanProfile.details.creationDate).not.toBeNull();
      expect((await stored(user.userId)).state.profile).toEqual({
        firstName: 'Ada',
        lastName: 'Byron',
        nickName: null,
        displayName: null,
        preferredLanguage: null,
        gender: 'GENDER_UNSPECIFIED',
      });
      const missing = await gw.send(UpdateHumanProfileDocument, { input: { userId: 'no-such-user', firstName: 'A', lastName: 'B' } });
      expect(onlyError(missing).extensions?.code).toBe('NOT_FOUND');
      expectRestStatus(missing, 404);
    });

    it('rule 2: setEmail returns the code or sends it; the new address is unverified; the same address is FAILED_PRECONDITION', async () => {
      const user = await addUser({ email: { email: `${unique('old')}@example.com`, isVerified: true } });
      const newEmail = `${unique('New')}@Example.com`;
      const returned = await gw.send(SetEmailDocument, { input: { userId: user.userId, email: newEmail, returnCode: true } });
      expect(returned.errors).toBeUndefined();
      const { verificationCode, details } = returned.data!.setEmail;
      expect(verificationCode).toMatch(/^[A-Z0-9]{6}$/);
      expect(details.creationDate).toBeNull();
      expect(details.resourceOwner).toBe(gw.defaultOrgId);
      expect((await stored(user.userId)).state.email).toEqual({ email: newEmail, isVerified: false });
      expect(deliveries(user.userId)).toEqual([]);

      const same = await gw.send(SetEmailDocument, { input: { userId: user.userId, email: newEmail } });
      expect(onlyError(same).extensions?.code).toBe('FAILED_PRECONDITION');

      const other = `${unique('sent')}@example.com`;
      const sent = await gw.send(SetEmailDocument, { input: { userId: user.userId, email: other } });
      expect(sent.data!.setEmail.verificationCode).toBeNull();
      expect(deliveries(user.userId).map((d) => [d.kind, d.to.includes('***')])).toEqual([['verify-email-on-change', true]]);
      // the code returned for the earlier address no longer verifies
      const stale = await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: verificationCode! } });
      expect(['FAILED_PRECONDITION', 'INVALID_ARGUMENT']).toContain(onlyError(stale).extensions?.code);
      expect((await stored(user.userId)).state.email.isVerified).toBe(false);
    });

    it('setEmail: the user itself may change its email but neither mark it verified nor take its code', async () => {
      const user = await addUser();
      const token = await gw.tokenFor(user.userId);
      const own = await gw.send(SetEmailDocument, { input: { userId: user.userId, email: `${unique('self')}@example.com` } }, { token });
      expect(own.errors).toBeUndefined();
      expect(own.data!.setEmail.verificationCode).toBeNull();
      const before = (await stored(user.userId)).sequence;
      const verified = await gw.send(
        SetEmailDocument,
        { input: { userId: user.userId, email: `${unique('self')}@example.com`, isVerified: true } },
        { token },
      );
      expect(onlyError(verified).extensions?.code).toBe('PERMISSION_DENIED');
      const returned = await gw.send(
        SetEmailDocument,
        { input: { userId: user.userId, email: `${unique('self')}@example.com`, returnCode: true } },
        { token },
      );
      expect(onlyError(returned).extensions?.code).toBe('PERMISSION_DENIED');
      expect((await stored(user.userId)).sequence).toBe(before);
    });

    it('updateHumanPhone normalizes, compares after normalizing, and is FAILED_PRECONDITION when nothing changes', async () => {
      const user = await addUser();
      const res = await gw.send(UpdateHumanPhoneDocument, {
        input: { userId: user.userId, phone: '+41 79 765 43 21', isPhoneVerified: true },
      });
      expect(res.errors).toBeUndefined();
      expect(res.data!.updateHumanPhone.details.creationDate).not.toBeNull();
      expect((await stored(user.userId)).state.phone).toEqual({ phone: '+41797654321', isVerified: true });
      const same = await gw.send(UpdateHumanPhoneDocument, {
        input: { userId: user.userId, phone: '+41797654321', isPhoneVerified: true },
      });
      expect(onlyError(same).extensions?.code).toBe('FAILED_PRECONDITION');
      // rule 3: no SMS provider is configured, so no SMS job and no code
      const unverified = await gw.send(UpdateHumanPhoneDocument, { input: { userId: user.userId, phone: '+41797654321' } });
      expect(unverified.errors).toBeUndefined();
      expect((await stored(user.userId)).state.phone).toEqual({ phone: '+41797654321', isVerified: false });
      expect(deliveries(user.userId)).toEqual([]);
    });

    it('rule 4: setHumanPassword requires a change at next login unless noChangeRequired', async () => {
      const user = await addUser();
      const first = await gw.send(SetHumanPasswordDocument, { input: { userId: user.userId, password: 'Str0ng!pass' } });
      expect(first.errors).toBeUndefined();
      expect(first.data!.setHumanPassword.details.creationDate).not.toBeNull();
      let state = (await stored(user.userId)).state;
      expect(state.passwordChangeRequired).toBe(true);
      expect(await verifyImportedHash('Str0ng!pass', state.passwordHash!)).toBe(true);
      const same = await gw.send(SetHumanPasswordDocument, {
        input: { userId: user.userId, password: 'Str0ng!pass', noChangeRequired: true },
      });
      expect(same.errors).toBeUndefined();
      state = (await stored(user.userId)).state;
      expect(state.passwordChangeRequired).toBe(false);
      expect(same.text).not.toContain('Str0ng!pass');
      const read = await gw.send(UserDocument, { id: user.userId });
      expect(read.data!.user!.passwordChangeRequired).toBe(false);
      expect(read.data!.user!.state).toBe('USER_STATE_ACTIVE');
    });

    it('imports a bcrypt hash that then verifies the password', async () => {
      const { hash } = await import('@node-rs/bcrypt');
      const imported = await hash('Imp0rted!', 4);
      const user = await addUser({ hashedPassword: { hash: imported, changeRequired: false } });
      expect(await verifyImportedHash('Imp0rted!', (await stored(user.userId)).state.passwordHash!)).toBe(true);
    });

    it('addOrganization and addOrgMember let an organization owner manage only its own users', async () => {
      const org = await gw.send(AddOrganizationDocument, { input: { name: unique('Acme ') } });
      expect(org.errors).toBeUndefined();
      const orgId = org.data!.addOrganization.orgId;
      const owner = await addUser({ organisation: { orgId } });
      expect((await stored(owner.userId)).resourceOwner).toBe(orgId);
      const grant = await gw.send(AddOrgMemberDocument, { input: { userId: owner.userId, roles: ['ORG_OWNER'] } }, { orgId });
      expect(grant.errors).toBeUndefined();
      const token = await gw.tokenFor(owner.userId);
      const inOwnOrg = await addUser({}, { token });
      expect((await stored(inOwnOrg.userId)).resourceOwner).toBe(orgId);
      const elsewhere = await gw.send(
        AddHumanUserDocument,
        { input: { profile, email: { email: 'e@example.com' }, organisation: { orgId: gw.defaultOrgId } } },
        { token },
      );
      expect(onlyError(elsewhere).extensions?.code).toBe('PERMISSION_DENIED');
      expectRestStatus(elsewhere, 403);
    });
  });
}

userSuite('user operations on the embedded stores', () => ({}));
describeWith('mongo', 'user operations on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    userSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `e2e_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
