// zitadel.user.v2.UserService: AddHumanUser, SetEmail, VerifyEmail, VerifyPhone, RegisterU2F,
// VerifyU2FRegistration, ResendEmailCode, ResendPhoneCode, GetUserByID and ListUsers
// (list-users.ts); every other method answers UNIMPLEMENTED. The resends send a fresh code
// (send_code, or no verification); their return_code is refused with INVALID_ARGUMENT (the
// operation only sends).
import type { JsonObject } from '@bufbuild/protobuf';
import type { ServiceImpl } from '@connectrpc/connect';
import { GenderSchema } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import {
  AddHumanUserRequestSchema,
  ResendEmailCodeRequestSchema,
  ResendPhoneCodeRequestSchema,
  UserService,
  type AddHumanUserRequest,
  type SetEmailRequest,
} from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { notFound } from '../errors.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { base64, detailsV2, enumName, opt, refuseUnsupported, snapshotDetails, asSent } from './convert.ts';
import { unary, type WireDeps } from './context.ts';
import type { FieldRenames } from './errors.ts';
import { listUsersV2 } from './list-users.ts';
import { userMessageV2 } from './user-message.ts';

/** AddHumanUser's command fields whose wire names are not their snake_case. */
const ADD_HUMAN_USER_RENAMES: FieldRenames = {
  organisation: 'organization',
  'profile.firstName': 'profile.given_name',
  'profile.lastName': 'profile.family_name',
};

/** AddHumanUser's fields without a place in the command (no TOTP enrolment here); every other field is mapped. */
const addHumanUserUnsupported = refuseUnsupported(AddHumanUserRequestSchema, ['totp_secret']);

/** The resends' return_code: the operation sends the code and never answers it. */
const resendEmailCodeUnsupported = refuseUnsupported(ResendEmailCodeRequestSchema, ['return_code']);
const resendPhoneCodeUnsupported = refuseUnsupported(ResendPhoneCodeRequestSchema, ['return_code']);

/** The email verification oneof (send_code / return_code / is_verified) as the command's three fields. */
function emailVerification(v: SetEmailRequest['verification']) {
  switch (v.case) {
    case 'sendCode':
      // proto3 `optional` (field presence): a url_template sent empty is refused, as GraphQL refuses it.
      return { sendCode: { urlTemplate: v.value.urlTemplate } };
    case 'returnCode':
      return { returnCode: true };
    case 'isVerified':
      return { isVerified: v.value };
    default:
      return {};
  }
}

function addHumanUserInput(req: AddHumanUserRequest) {
  const org = req.organization?.org;
  const phone = req.phone;
  const password = req.passwordType;
  return {
    // proto3 `optional`: absent is undefined, and a present "" is refused like GraphQL's (SPEC: non-empty).
    userId: req.userId,
    username: req.username,
    organisation: org?.case === 'orgId' ? { orgId: org.value } : org?.case === 'orgDomain' ? { orgDomain: org.value } : undefined,
    profile: req.profile && {
      firstName: req.profile.givenName,
      lastName: req.profile.familyName,
      nickName: opt(req.profile.nickName),
      displayName: opt(req.profile.displayName),
      preferredLanguage: opt(req.profile.preferredLanguage),
      gender: req.profile.gender === undefined ? undefined : enumName(GenderSchema, req.profile.gender),
    },
    email: req.email && { email: req.email.email, ...emailVerification(req.email.verification) },
    phone: phone && {
      phone: phone.phone,
      sendCode: phone.verification.case === 'sendCode' ? true : undefined,
      returnCode: phone.verification.case === 'returnCode' ? true : undefined,
      isVerified: phone.verification.case === 'isVerified' ? phone.verification.value : undefined,
    },
    metadata: req.metadata.map((m) => ({ key: m.key, value: base64(m.value) })),
    password:
      password.case === 'password' ? { password: password.value.password, changeRequired: password.value.changeRequired } : undefined,
    hashedPassword:
      password.case === 'hashedPassword' ? { hash: password.value.hash, changeRequired: password.value.changeRequired } : undefined,
    idpLinks: req.idpLinks.map((l) => ({ idpId: l.idpId, userId: l.userId, userName: l.userName })),
  };
}

const userV2 = (u: Snapshot<User>) => {
  const details = detailsV2(snapshotDetails(u));
  return { details, user: userMessageV2(u, details) };
};

export function userService(wire: WireDeps): Partial<ServiceImpl<typeof UserService>> {
  return {
    addHumanUser: unary(
      wire,
      'AddHumanUser',
      async (ctx, req, ops) => {
        addHumanUserUnsupported(req);
        const r = await ops.addHumanUser(ctx, asSent(addHumanUserInput(req)));
        return {
          userId: r.userId,
          details: detailsV2(r.details),
          emailCode: r.emailCode ?? undefined,
          phoneCode: r.phoneCode ?? undefined,
        };
      },
      ADD_HUMAN_USER_RENAMES,
    ),

    setEmail: unary(wire, 'SetEmail', async (ctx, req, ops) => {
      const r = await ops.setEmail(ctx, { userId: req.userId, email: req.email, ...emailVerification(req.verification) });
      return { details: detailsV2(r.details), verificationCode: r.verificationCode ?? undefined };
    }),

    verifyEmail: unary(wire, 'VerifyEmail', async (ctx, req, ops) => ({
      details: detailsV2(await ops.verifyEmail(ctx, { userId: req.userId, verificationCode: req.verificationCode })),
    })),

    verifyPhone: unary(wire, 'VerifyPhone', async (ctx, req, ops) => ({
      details: detailsV2(await ops.verifyPhone(ctx, { userId: req.userId, verificationCode: req.verificationCode })),
    })),

    resendEmailCode: unary(wire, 'ResendEmailCode', async (ctx, req, ops) => {
      resendEmailCodeUnsupported(req);
      const urlTemplate = req.verification.case === 'sendCode' ? req.verification.value.urlTemplate : undefined;
      return { details: detailsV2(await ops.resendEmailCode(ctx, { userId: req.userId, urlTemplate })) };
    }),

    resendPhoneCode: unary(wire, 'ResendPhoneCode', async (ctx, req, ops) => {
      resendPhoneCodeUnsupported(req);
      return { details: detailsV2(await ops.resendPhoneCode(ctx, { userId: req.userId })) };
    }),

    registerU2F: unary(wire, 'RegisterU2F', async (ctx, req, ops) => {
      const r = await ops.registerU2F(ctx, { userId: req.userId, domain: opt(req.domain) });
      return {
        u2fId: r.u2fId,
        details: detailsV2(r.details),
        // google.protobuf.Struct holds JSON values only: drop what JSON drops (undefined).
        publicKeyCredentialCreationOptions: JSON.parse(JSON.stringify(r.publicKeyCredentialCreationOptions)) as JsonObject,
      };
    }),

    verifyU2FRegistration: unary(wire, 'VerifyU2FRegistration', async (ctx, req, ops) => ({
      details: detailsV2(
        await ops.verifyU2FRegistration(ctx, {
          userId: req.userId,
          u2fId: req.u2fId,
          publicKeyCredential: asSent(req.publicKeyCredential),
          tokenName: req.tokenName,
        }),
      ),
    })),

    getUserByID: unary(wire, 'GetUserByID', async (ctx, req, ops) => {
      // v2 reads a user wherever the caller may read it (the org header, when sent, narrows it), with the refusals of management's.
      const user = await ops.readUser(ctx, req.userId, 'anywhere');
      if (!user) throw notFound('User');
      return userV2(user);
    }),

    listUsers: unary(wire, 'ListUsers', listUsersV2),
  };
}
