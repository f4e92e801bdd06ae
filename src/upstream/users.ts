// The user mutations over ZITADEL's API, each wired by `mutation` (src/upstream/send.ts): the
// commands' input rules, then one call (auth v1 for the caller's own profile, management v1 where
// the embedded operation is scoped to the acting organization, user v2 for the rest, as the wire
// face serves them).
import { GenderSchema } from '@zitadel/proto/zitadel/user_pb.js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { GenderSchema as GenderV2Schema } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import type { AddHumanUserRequestSchema, SetEmailRequestSchema } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import type { AddHumanUserInput } from '../commands/user-inputs.ts';
import { detailsOf, enumOf } from './convert.ts';
import type { FieldRenames } from './errors.ts';
import type { InputRules } from './inputs.ts';
import { details, mutation } from './send.ts';

/** AddHumanUser's input paths whose wire names are not their snake_case. */
const ADD_HUMAN_USER_RENAMES: FieldRenames = {
  organisation: 'organization',
  'profile.firstName': 'profile.given_name',
  'profile.lastName': 'profile.family_name',
};

type Verification = {
  sendCode?: { urlTemplate?: string | null } | boolean | null;
  returnCode?: boolean | null;
  isVerified?: boolean | null;
};

/** The email verification oneof of user v2 from the input's three fields (none: ZITADEL's default, send). */
function emailVerification(v: Verification): MessageInitShape<typeof SetEmailRequestSchema>['verification'] {
  if (v.isVerified) return { case: 'isVerified', value: true };
  if (v.returnCode) return { case: 'returnCode', value: {} };
  if (v.sendCode && typeof v.sendCode === 'object')
    return { case: 'sendCode', value: v.sendCode.urlTemplate ? { urlTemplate: v.sendCode.urlTemplate } : {} };
  return { case: undefined };
}

function phoneVerification(v: Verification): NonNullable<MessageInitShape<typeof AddHumanUserRequestSchema>['phone']>['verification'] {
  if (v.isVerified) return { case: 'isVerified', value: true };
  if (v.returnCode) return { case: 'returnCode', value: {} };
  if (v.sendCode) return { case: 'sendCode', value: {} };
  return { case: undefined };
}

const orNothing = (s: string | null | undefined) => s ?? undefined;

/** AddHumanUser's request (user v2): a new user, or one imported with its password hash. */
function addHumanUserRequest(input: AddHumanUserInput): MessageInitShape<typeof AddHumanUserRequestSchema> {
  const org = input.organisation;
  const password = input.password;
  const hashed = input.hashedPassword;
  return {
    userId: orNothing(input.userId),
    username: orNothing(input.username),
    organization: org
      ? { org: org.orgId ? { case: 'orgId', value: org.orgId } : { case: 'orgDomain', value: org.orgDomain ?? '' } }
      : undefined,
    profile: {
      givenName: input.profile.firstName,
      familyName: input.profile.lastName,
      nickName: orNothing(input.profile.nickName),
      displayName: orNothing(input.profile.displayName),
      preferredLanguage: orNothing(input.profile.preferredLanguage),
      gender: enumOf(GenderV2Schema, input.profile.gender),
    },
    email: { email: input.email.email, verification: emailVerification(input.email) },
    phone: input.phone?.phone ? { phone: input.phone.phone, verification: phoneVerification(input.phone) } : undefined,
    metadata: (input.metadata ?? []).map((m) => ({ key: m.key, value: Buffer.from(m.value, 'base64') })),
    passwordType: password
      ? { case: 'password', value: { password: password.password, changeRequired: password.changeRequired ?? false } }
      : hashed
        ? { case: 'hashedPassword', value: { hash: hashed.hash, changeRequired: hashed.changeRequired ?? false } }
        : { case: undefined },
    idpLinks: (input.idpLinks ?? []).map((l) => ({ idpId: l.idpId, userId: l.userId, userName: l.userName })),
  };
}

/** A profile as management v1 and auth v1 take it. */
const profileV1 = (i: {
  firstName: string;
  lastName: string;
  nickName?: string | null;
  displayName?: string | null;
  preferredLanguage?: string | null;
  gender?: string | null;
}) => ({
  firstName: i.firstName,
  lastName: i.lastName,
  nickName: orNothing(i.nickName),
  displayName: orNothing(i.displayName),
  preferredLanguage: orNothing(i.preferredLanguage),
  gender: enumOf(GenderSchema, i.gender),
});

export function userMutations(rules: InputRules) {
  return {
    updateMyProfile: mutation(
      'updateMyProfile',
      rules.updateMyProfile,
      'UpdateMyProfile',
      (ctx, i, o) => ctx.upstream.clients.auth.updateMyProfile({ ...profileV1(i), displayName: i.displayName }, o),
      details,
    ),
    updateHumanProfile: mutation(
      'updateHumanProfile',
      rules.updateHumanProfile,
      'UpdateHumanProfile',
      (ctx, i, o) => ctx.upstream.clients.management.updateHumanProfile({ userId: i.userId, ...profileV1(i) }, o),
      details,
    ),
    addHumanUser: mutation(
      'addHumanUser',
      rules.addHumanUser,
      'AddHumanUser',
      (ctx, i, o) => ctx.upstream.clients.users.addHumanUser(addHumanUserRequest(i), o),
      (r) => ({ userId: r.userId, details: detailsOf(r.details), emailCode: r.emailCode ?? null, phoneCode: r.phoneCode ?? null }),
      ADD_HUMAN_USER_RENAMES,
    ),
    setEmail: mutation(
      'setEmail',
      rules.setEmail,
      'SetEmail',
      (ctx, i, o) => ctx.upstream.clients.users.setEmail({ userId: i.userId, email: i.email, verification: emailVerification(i) }, o),
      (r) => ({ details: detailsOf(r.details), verificationCode: r.verificationCode ?? null }),
    ),
    updateHumanPhone: mutation(
      'updateHumanPhone',
      rules.updateHumanPhone,
      'UpdateHumanPhone',
      (ctx, i, o) =>
        ctx.upstream.clients.management.updateHumanPhone(
          { userId: i.userId, phone: i.phone, isPhoneVerified: i.isPhoneVerified ?? false },
          o,
        ),
      details,
    ),
    setHumanPassword: mutation(
      'setHumanPassword',
      rules.setHumanPassword,
      'SetHumanPassword',
      (ctx, i, o) =>
        ctx.upstream.clients.management.setHumanPassword(
          { userId: i.userId, password: i.password, noChangeRequired: i.noChangeRequired ?? false },
          o,
        ),
      details,
    ),
    verifyEmail: mutation(
      'verifyEmail',
      rules.verifyCode,
      'VerifyEmail',
      (ctx, i, o) => ctx.upstream.clients.users.verifyEmail({ userId: i.userId, verificationCode: i.verificationCode }, o),
      details,
    ),
    verifyPhone: mutation(
      'verifyPhone',
      rules.verifyCode,
      'VerifyPhone',
      (ctx, i, o) => ctx.upstream.clients.users.verifyPhone({ userId: i.userId, verificationCode: i.verificationCode }, o),
      details,
    ),
  };
}
