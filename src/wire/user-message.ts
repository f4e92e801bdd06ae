// zitadel.user.v2.User from a user snapshot (v2 and v2beta GetUserByID and ListUsers). The v1
// message (zitadel.user.v1.User) is userV1 in users-v1.ts. Every field ZITADEL fills for a human
// user is filled, but the ones the gateway has nothing for: HumanUser.mfa_init_skipped (no
// login flow here records a skipped MFA set-up) and HumanProfile.avatar_url (no avatars);
// test/wire.user-messages.test.ts holds the list against the descriptors.
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Details as DetailsV2 } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { GenderSchema, UserStateSchema, type UserSchema } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { detailsV2, enumNumber, snapshotDetails, timestampOfIso } from './convert.ts';

/** Every user here is human: the `human` case, with the user's fields repeated in it as ZITADEL does. */
export function userMessageV2(u: Snapshot<User>, details: DetailsV2 = detailsV2(snapshotDetails(u))): MessageInitShape<typeof UserSchema> {
  const { profile, email, phone } = u.state;
  const state = enumNumber(UserStateSchema, u.state.state);
  return {
    userId: u.id,
    details,
    state,
    username: u.state.username,
    loginNames: [u.state.username],
    preferredLoginName: u.state.username,
    type: {
      case: 'human',
      value: {
        userId: u.id,
        state,
        username: u.state.username,
        loginNames: [u.state.username],
        preferredLoginName: u.state.username,
        profile: {
          givenName: profile.firstName,
          familyName: profile.lastName,
          nickName: profile.nickName ?? undefined,
          displayName: profile.displayName ?? undefined,
          preferredLanguage: profile.preferredLanguage ?? undefined,
          gender: enumNumber(GenderSchema, profile.gender),
        },
        email: { email: email.email, isVerified: email.isVerified },
        phone: phone ? { phone: phone.phone, isVerified: phone.isVerified } : undefined,
        passwordChangeRequired: u.state.passwordChangeRequired,
        passwordChanged: timestampOfIso(u.state.passwordChanged),
      },
    },
  };
}
