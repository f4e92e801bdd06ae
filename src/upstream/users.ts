// The user mutations over ZITADEL's API: each checks its input with the commands' rules, then is
// one call (auth v1 for the caller's own profile, management v1 where the embedded operation is
// scoped to the acting organization, user v2 for the rest, as the wire face serves them).
import { GenderSchema } from '@zitadel/proto/zitadel/user_pb.js';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { GenderSchema as GenderV2Schema } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import type { AddHumanUserRequestSchema, SetEmailRequestSchema } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import type { AddHumanUserResult, Details } from '../operations.ts';
import type { UpstreamContext } from './context.ts';
import { detailsOf, enumOf } from './convert.ts';
import type { FieldRenames } from './errors.ts';
import { checked, type InputRules } from './inputs.ts';
import { write } from './send.ts';

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

/** AddHumanUser (user v2): a new user, or one imported with its password hash. */
async function addHumanUser(rules: InputRules, ctx: UpstreamContext, raw: unknown): Promise<AddHumanUserResult> {
  const input = await checked(rules.addHumanUser, raw);
  const org = input.organisation;
  const r = await write(
    ctx,
    'AddHumanUser',
    (o) =>
      ctx.upstream.clients.users.addHumanUser(
        {
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
          passwordType: input.password
            ? { case: 'password', value: { password: input.password.password, changeRequired: input.password.changeRequired ?? false } }
            : input.hashedPassword
              ? {
                  case: 'hashedPassword',
                  value: { hash: input.hashedPassword.hash, changeRequired: input.hashedPassword.changeRequired ?? false },
                }
              : { case: undefined },
          idpLinks: (input.idpLinks ?? []).map((l) => ({ idpId: l.idpId, userId: l.userId, userName: l.userName })),
        },
        o,
      ),
    ADD_HUMAN_USER_RENAMES,
  );
  return { userId: r.userId, details: detailsOf(r.details), emailCode: r.emailCode ?? null, phoneCode: r.phoneCode ?? null };
}

export function userMutations(rules: InputRules) {
  return {
    async updateMyProfile(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.updateMyProfile, raw);
      const r = await write(ctx, 'UpdateMyProfile', (o) =>
        ctx.upstream.clients.auth.updateMyProfile(
          {
            firstName: input.firstName,
            lastName: input.lastName,
            nickName: orNothing(input.nickName),
            displayName: input.displayName,
            preferredLanguage: orNothing(input.preferredLanguage),
            gender: enumOf(GenderSchema, input.gender),
          },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async updateHumanProfile(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.updateHumanProfile, raw);
      const r = await write(ctx, 'UpdateHumanProfile', (o) =>
        ctx.upstream.clients.management.updateHumanProfile(
          {
            userId: input.userId,
            firstName: input.firstName,
            lastName: input.lastName,
            nickName: orNothing(input.nickName),
            displayName: orNothing(input.displayName),
            preferredLanguage: orNothing(input.preferredLanguage),
            gender: enumOf(GenderSchema, input.gender),
          },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    addHumanUser: (ctx: UpstreamContext, raw: unknown) => addHumanUser(rules, ctx, raw),

    async setEmail(ctx: UpstreamContext, raw: unknown) {
      const input = await checked(rules.setEmail, raw);
      const r = await write(ctx, 'SetEmail', (o) =>
        ctx.upstream.clients.users.setEmail({ userId: input.userId, email: input.email, verification: emailVerification(input) }, o),
      );
      return { details: detailsOf(r.details), verificationCode: r.verificationCode ?? null };
    },

    async updateHumanPhone(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.updateHumanPhone, raw);
      const r = await write(ctx, 'UpdateHumanPhone', (o) =>
        ctx.upstream.clients.management.updateHumanPhone(
          { userId: input.userId, phone: input.phone, isPhoneVerified: input.isPhoneVerified ?? false },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async setHumanPassword(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.setHumanPassword, raw);
      const r = await write(ctx, 'SetHumanPassword', (o) =>
        ctx.upstream.clients.management.setHumanPassword(
          { userId: input.userId, password: input.password, noChangeRequired: input.noChangeRequired ?? false },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async verifyEmail(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.verifyCode, raw);
      const r = await write(ctx, 'VerifyEmail', (o) =>
        ctx.upstream.clients.users.verifyEmail({ userId: input.userId, verificationCode: input.verificationCode }, o),
      );
      return detailsOf(r.details);
    },

    async verifyPhone(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.verifyCode, raw);
      const r = await write(ctx, 'VerifyPhone', (o) =>
        ctx.upstream.clients.users.verifyPhone({ userId: input.userId, verificationCode: input.verificationCode }, o),
      );
      return detailsOf(r.details);
    },
  };
}
