// ZITADEL's messages as the operations' results: Details, enums by name, timestamps, and a user
// (zitadel.user.v2.User) as the Snapshot<User> the faces render. What a read does not carry
// (metadata, identity-provider links, security keys) is left empty here and read on its own when
// a query selects it (Operations.userPart).
import type { DescEnum } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { Details as DetailsV2 } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import type { ObjectDetails } from '@zitadel/proto/zitadel/object_pb.js';
import { GenderSchema, UserStateSchema, type User as UserV2 } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import type { Details } from '../operations.ts';
import type { Gender, User, UserStateName } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';

const EPOCH = new Date(0);
const dateOf = (t: Timestamp | undefined): Date | null => (t ? timestampDate(t) : null);

/** zitadel.v1.ObjectDetails or zitadel.object.v2.Details as the operations' Details (creationDate where the upstream gave it). */
export function detailsOf(d: ObjectDetails | DetailsV2 | undefined): Details {
  return {
    sequence: Number(d?.sequence ?? 0n),
    creationDate: dateOf(d?.creationDate),
    changeDate: dateOf(d?.changeDate) ?? EPOCH,
    resourceOwner: d?.resourceOwner ?? '',
  };
}

/** The number of an enum value by its name (GENDER_FEMALE), as the operations' inputs carry it; unknown: 0 (unspecified). */
export const enumOf = (desc: DescEnum, name: string | null | undefined): number =>
  (name ? desc.values.find((v) => v.name === name)?.number : undefined) ?? 0;

/** The name of an enum number, as the operations' results carry it. */
export const nameOf = <T extends string>(desc: DescEnum, n: number, fallback: T): T => (desc.value[n]?.name as T | undefined) ?? fallback;

/** A Snapshot of what ZITADEL's read gave: sequence and dates from its details. */
export function snapshotOf<S>(id: string, state: S, d: ObjectDetails | DetailsV2 | undefined): Snapshot<S> {
  const details = detailsOf(d);
  return {
    id,
    state,
    sequence: details.sequence,
    resourceOwner: details.resourceOwner,
    creationDate: details.creationDate ?? details.changeDate,
    changeDate: details.changeDate,
  };
}

/** A human user of zitadel.user.v2 as the faces render users; a machine user has no profile: null. */
export function userOf(u: UserV2): Snapshot<User> | null {
  if (u.type.case !== 'human') return null;
  const h = u.type.value;
  const p = h.profile;
  const state: User = {
    username: u.username,
    state: nameOf<UserStateName>(UserStateSchema, u.state, 'USER_STATE_ACTIVE'),
    profile: {
      firstName: p?.givenName ?? '',
      lastName: p?.familyName ?? '',
      nickName: p?.nickName || null,
      displayName: p?.displayName || null,
      preferredLanguage: p?.preferredLanguage || null,
      gender: nameOf<Gender>(GenderSchema, p?.gender ?? 0, 'GENDER_UNSPECIFIED'),
    },
    email: { email: h.email?.email ?? '', isVerified: h.email?.isVerified ?? false },
    phone: h.phone?.phone ? { phone: h.phone.phone, isVerified: h.phone.isVerified } : null,
    // The hash never leaves ZITADEL; that one is set shows as the time it was (hasPassword).
    passwordHash: null,
    passwordChangeRequired: h.passwordChangeRequired,
    ...(h.passwordChanged ? { passwordChanged: timestampDate(h.passwordChanged).toISOString() } : {}),
    metadata: [],
    idpLinks: [],
    u2fTokens: [],
  };
  return snapshotOf(u.userId, state, u.details);
}
