// zitadel.user.v1.User from a user snapshot (GetMyUser, management GetUserByID and ListUsers).
// Every field ZITADEL fills for a human user, but Profile.avatar_url (no avatars here).
import { create } from '@bufbuild/protobuf';
import { GenderSchema, UserSchema, UserStateSchema, type User as UserV1 } from '@zitadel/proto/zitadel/user_pb.js';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { detailsV1, enumNumber, snapshotDetails, timestampOfIso } from './convert.ts';

export const userV1 = (u: Snapshot<User>): UserV1 =>
  create(UserSchema, {
    id: u.id,
    details: detailsV1(snapshotDetails(u)),
    state: enumNumber(UserStateSchema, u.state.state),
    userName: u.state.username,
    loginNames: [u.state.username],
    preferredLoginName: u.state.username,
    type: {
      case: 'human',
      value: {
        profile: {
          firstName: u.state.profile.firstName,
          lastName: u.state.profile.lastName,
          nickName: u.state.profile.nickName ?? '',
          displayName: u.state.profile.displayName ?? '',
          preferredLanguage: u.state.profile.preferredLanguage ?? '',
          gender: enumNumber(GenderSchema, u.state.profile.gender),
        },
        email: { email: u.state.email.email, isEmailVerified: u.state.email.isVerified },
        phone: u.state.phone ? { phone: u.state.phone.phone, isPhoneVerified: u.state.phone.isVerified } : undefined,
        passwordChanged: timestampOfIso(u.state.passwordChanged),
      },
    },
  });
