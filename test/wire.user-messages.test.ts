// The user messages are complete: for a fully set-up human user, every field of ZITADEL's
// user messages (v1 User/Human/Profile/Email/Phone, v2 and v2beta User/HumanUser/HumanProfile/
// HumanEmail/HumanPhone, and their details) that the gateway knows is filled, as ZITADEL fills
// it. The fields come from the descriptors, not from a list here: a field a new @zitadel/proto
// adds, or one the gateway stops filling, fails this test until it is filled or named below
// with the reason it stays empty. Read through GetUserByID, ListUsers and GetMyUser, on the
// embedded stores and on MongoDB-wire + Redis.
import { isFieldSet, type DescMessage, type Message } from '@bufbuild/protobuf';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import { DetailsSchema as DetailsV2Schema } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { DetailsSchema as DetailsV2betaSchema } from '@zitadel/proto/zitadel/object/v2beta/object_pb.js';
import { ObjectDetailsSchema } from '@zitadel/proto/zitadel/object_pb.js';
import * as v1 from '@zitadel/proto/zitadel/user_pb.js';
import { HumanEmailSchema as HumanEmailV2Schema } from '@zitadel/proto/zitadel/user/v2/email_pb.js';
import { HumanPhoneSchema as HumanPhoneV2Schema } from '@zitadel/proto/zitadel/user/v2/phone_pb.js';
import * as v2 from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { HumanEmailSchema as HumanEmailV2betaSchema } from '@zitadel/proto/zitadel/user/v2beta/email_pb.js';
import { HumanPhoneSchema as HumanPhoneV2betaSchema } from '@zitadel/proto/zitadel/user/v2beta/phone_pb.js';
import * as v2beta from '@zitadel/proto/zitadel/user/v2beta/user_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userEvents } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { wireTransport, zitadelClients } from './support/wire-clients.ts';

const EMPTY_FOR_A_HUMAN = 'the user is human: the type oneof holds `human`';
const NO_AVATARS = 'the gateway has no avatars (ZITADEL leaves it empty too until one is uploaded)';
const NO_MFA_SKIP = 'the model has no "MFA set-up skipped": no login flow here records one (ZITADEL: HumanMFAInitSkipped)';

/** The fields left empty on purpose, by message, with why. Every other field must be filled. */
const EMPTY_ON_PURPOSE: Record<string, Record<string, string>> = {
  'zitadel.user.v1.User': { machine: EMPTY_FOR_A_HUMAN },
  'zitadel.user.v1.Profile': { avatar_url: NO_AVATARS },
  'zitadel.user.v2.User': { machine: EMPTY_FOR_A_HUMAN },
  'zitadel.user.v2.HumanUser': { mfa_init_skipped: NO_MFA_SKIP },
  'zitadel.user.v2.HumanProfile': { avatar_url: NO_AVATARS },
  'zitadel.user.v2beta.User': { machine: EMPTY_FOR_A_HUMAN },
  'zitadel.user.v2beta.HumanProfile': { avatar_url: NO_AVATARS },
};

/** The messages walked in each version, from the user down. */
const MESSAGES: Record<'v1' | 'v2' | 'v2beta', DescMessage[]> = {
  v1: [v1.UserSchema, v1.HumanSchema, v1.ProfileSchema, v1.EmailSchema, v1.PhoneSchema, ObjectDetailsSchema],
  v2: [v2.UserSchema, v2.HumanUserSchema, v2.HumanProfileSchema, HumanEmailV2Schema, HumanPhoneV2Schema, DetailsV2Schema],
  v2beta: [
    v2beta.UserSchema,
    v2beta.HumanUserSchema,
    v2beta.HumanProfileSchema,
    HumanEmailV2betaSchema,
    HumanPhoneV2betaSchema,
    DetailsV2betaSchema,
  ],
};

/** The fields set in `message` and in every walked message below it, by message type. */
function filledFields(message: Message, walked: DescMessage[], out: Record<string, string[]> = {}): Record<string, string[]> {
  const desc = walked.find((d) => d.typeName === message.$typeName)!;
  out[desc.typeName] = [];
  for (const field of desc.fields) {
    if (!isFieldSet(message as never, field)) continue;
    out[desc.typeName]!.push(field.name);
    if (field.fieldKind !== 'message') continue;
    const value = field.oneof ? (message as any)[field.oneof.localName].value : (message as any)[field.localName];
    if (walked.some((d) => d.typeName === field.message.typeName)) filledFields(value, walked, out);
  }
  return out;
}

/** What the descriptors say a complete message holds: every field, but the ones empty on purpose. */
const expectedFields = (walked: DescMessage[]) =>
  Object.fromEntries(walked.map((d) => [d.typeName, d.fields.map((f) => f.name).filter((name) => !EMPTY_ON_PURPOSE[d.typeName]?.[name])]));

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

function userMessagesSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    let userId: string;
    let username: string;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      username = unique('complete');
      const c = zitadelClients(wireTransport('connect', gw.baseUrl, gw.adminToken));
      // Fully set up: every profile field, email and phone verified, a password that must be changed.
      ({ userId } = await c.users.addHumanUser({
        username,
        profile: { givenName: 'Ada', familyName: 'Lovelace', nickName: 'ada', displayName: 'Ada L.', preferredLanguage: 'en', gender: 1 },
        email: { email: `${username}@example.com`, verification: { case: 'isVerified', value: true } },
        phone: { phone: '+41791234567', verification: { case: 'isVerified', value: true } },
        passwordType: { case: 'password', value: { password: 'Secr3t!pass', changeRequired: true } },
      }));
    });
    afterAll(async () => {
      await gw?.close();
    });

    /** The time of the last event that set the user's password. */
    const passwordSetAt = async () =>
      (await gw.gateway.deps.store.events('user', userId))
        .filter((e) => e.type === userEvents.added || e.type === userEvents.passwordChanged)
        .at(-1)!.createdAt;

    it('the names empty on purpose are fields of the descriptors', () => {
      const all = Object.values(MESSAGES).flat();
      for (const [typeName, fields] of Object.entries(EMPTY_ON_PURPOSE)) {
        const desc = all.find((d) => d.typeName === typeName);
        expect(desc, typeName).toBeDefined();
        for (const field of Object.keys(fields))
          expect(
            desc!.fields.map((f) => f.name),
            `${typeName}.${field}`,
          ).toContain(field);
      }
    });

    it('v1 (management GetUserByID and ListUsers, auth GetMyUser): every field of User, Human, Profile, Email, Phone and ObjectDetails', async () => {
      const admin = zitadelClients(wireTransport('grpc', gw.baseUrl, gw.adminToken));
      const own = zitadelClients(wireTransport('grpc', gw.baseUrl, await gw.tokenFor(userId)));
      const read = (await admin.mgmt.getUserByID({ id: userId })).user!;
      const listed = (await admin.mgmt.listUsers({ queries: [{ query: { case: 'userNameQuery', value: { userName: username } } }] }))
        .result;
      const me = (await own.auth.getMyUser({})).user!;
      expect(listed).toHaveLength(1);
      for (const user of [read, listed[0]!, me]) {
        expect(filledFields(user, MESSAGES.v1)).toEqual(expectedFields(MESSAGES.v1));
        const human = user.type.value as v1.Human;
        expect(timestampDate(human.passwordChanged!)).toEqual(await passwordSetAt());
        expect(user).toMatchObject({
          id: userId,
          userName: username,
          loginNames: [username],
          preferredLoginName: username,
          state: v1.UserState.ACTIVE,
        });
      }
    });

    for (const version of ['v2', 'v2beta'] as const) {
      it(`${version} (GetUserByID and ListUsers): every field of User, HumanUser, HumanProfile, HumanEmail, HumanPhone and Details`, async () => {
        const c = zitadelClients(wireTransport('grpc', gw.baseUrl, gw.adminToken));
        const users = version === 'v2' ? c.users : c.usersV2beta;
        const read = (await users.getUserByID({ userId })).user!;
        const listed = (await users.listUsers({ queries: [{ query: { case: 'userNameQuery', value: { userName: username } } }] })).result;
        expect(listed).toHaveLength(1);
        for (const user of [read, listed[0]!]) {
          expect(filledFields(user, MESSAGES[version])).toEqual(expectedFields(MESSAGES[version]));
          const human = user.type.value as v2.HumanUser;
          expect(timestampDate(human.passwordChanged!)).toEqual(await passwordSetAt());
          expect(human).toMatchObject({
            userId,
            username,
            loginNames: [username],
            preferredLoginName: username,
            state: v2.UserState.ACTIVE,
            passwordChangeRequired: true,
          });
        }
      });
    }

    it('password_changed follows the last password set, on every version', async () => {
      const c = zitadelClients(wireTransport('connect', gw.baseUrl, gw.adminToken));
      const before = await passwordSetAt();
      await c.mgmt.setHumanPassword({ userId, password: 'N3w!secret', noChangeRequired: true });
      const after = await passwordSetAt();
      expect(after.getTime()).toBeGreaterThanOrEqual(before.getTime());
      const v2User = (await c.users.getUserByID({ userId })).user!.type.value as v2.HumanUser;
      const betaUser = (await c.usersV2beta.getUserByID({ userId })).user!.type.value as v2beta.HumanUser;
      const v1Human = (await c.mgmt.getUserByID({ id: userId })).user!.type.value as v1.Human;
      for (const t of [v2User.passwordChanged, betaUser.passwordChanged, v1Human.passwordChanged]) expect(timestampDate(t!)).toEqual(after);
      expect(v2User.passwordChangeRequired).toBe(false);
      // A user without a password has no password time.
      const { userId: noPassword } = await c.users.addHumanUser({
        profile: { givenName: 'No', familyName: 'Password' },
        email: { email: `${unique('np')}@example.com` },
      });
      expect(((await c.users.getUserByID({ userId: noPassword })).user!.type.value as v2.HumanUser).passwordChanged).toBeUndefined();
      expect(((await c.mgmt.getUserByID({ id: noPassword })).user!.type.value as v1.Human).passwordChanged).toBeUndefined();
    });
  });
}

userMessagesSuite('user messages on the embedded stores', () => ({}));
describeWith('mongo', 'user messages on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    userMessagesSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `usermsg_${Date.now()}_${seq++}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
