// The user aggregate: its state and how each event changes it.
import type { StoredEvent } from '../store/port.ts';

export type Gender = 'GENDER_UNSPECIFIED' | 'GENDER_FEMALE' | 'GENDER_MALE' | 'GENDER_DIVERSE';
export type UserStateName = 'USER_STATE_ACTIVE' | 'USER_STATE_INITIAL' | 'USER_STATE_INACTIVE' | 'USER_STATE_LOCKED';

export interface Profile {
  firstName: string;
  lastName: string;
  nickName: string | null;
  displayName: string | null;
  preferredLanguage: string | null;
  gender: Gender;
}

export interface IdpLink {
  idpId: string;
  userId: string;
  userName: string;
}

export interface U2FToken {
  id: string;
  name: string | null;
  state: 'U2F_STATE_NOT_READY' | 'U2F_STATE_READY';
  /** Relying-party id the token was registered for. */
  rpId?: string;
  /** Pending (NOT_READY) only: the WebAuthn challenge (base64url), the origins offered, and when it expires (ISO). */
  challenge?: string;
  origins?: string[];
  expiresAt?: string;
  /** Ready only: the credential (id and COSE public key base64url), its signature counter and transports. */
  credentialId?: string;
  publicKey?: string;
  counter?: number;
  transports?: string[];
}

export interface User {
  username: string;
  state: UserStateName;
  profile: Profile;
  email: { email: string; isVerified: boolean };
  phone: { phone: string; isVerified: boolean } | null;
  /** bcrypt or argon2 hash; never leaves the gateway. */
  passwordHash: string | null;
  passwordChangeRequired: boolean;
  metadata: { key: string; value: string }[];
  idpLinks: IdpLink[];
  u2fTokens: U2FToken[];
  /**
   * Organizations where the user was granted roles (the roles themselves live in
   * the organization). Recorded before the grant, so it never misses one.
   */
  memberOf?: string[];
}

export const userEvents = {
  added: 'user.added',
  profileChanged: 'user.profile.changed',
  emailChanged: 'user.email.changed',
  emailVerified: 'user.email.verified',
  phoneChanged: 'user.phone.changed',
  phoneVerified: 'user.phone.verified',
  passwordChanged: 'user.password.changed',
  u2fAdded: 'user.u2f.added',
  u2fVerified: 'user.u2f.verified',
  memberOfRecorded: 'user.member-of.recorded',
} as const;

export function sameProfile(a: Profile, b: Profile): boolean {
  return (
    a.firstName === b.firstName &&
    a.lastName === b.lastName &&
    a.nickName === b.nickName &&
    a.displayName === b.displayName &&
    a.preferredLanguage === b.preferredLanguage &&
    a.gender === b.gender
  );
}

const stateAfterCredentials = (u: User): UserStateName =>
  u.passwordHash || u.idpLinks.length > 0 ? 'USER_STATE_ACTIVE' : 'USER_STATE_INITIAL';

export function reduceUser(state: User | undefined, event: StoredEvent): User {
  const p = event.payload as any;
  if (event.type === userEvents.added) {
    const user = p as Omit<User, 'state'>;
    return { ...user, state: stateAfterCredentials({ ...user, state: 'USER_STATE_INITIAL' }) };
  }
  if (!state) throw new Error(`${event.type} before ${userEvents.added} for user ${event.aggregateId}`);
  switch (event.type) {
    case userEvents.profileChanged:
      return { ...state, profile: p.profile };
    case userEvents.emailChanged:
      return { ...state, email: { email: p.email, isVerified: p.isVerified } };
    case userEvents.emailVerified:
      return { ...state, email: { ...state.email, isVerified: true } };
    case userEvents.phoneChanged:
      return { ...state, phone: { phone: p.phone, isVerified: p.isVerified } };
    case userEvents.phoneVerified:
      return state.phone ? { ...state, phone: { ...state.phone, isVerified: true } } : state;
    case userEvents.passwordChanged: {
      const next = { ...state, passwordHash: p.hash, passwordChangeRequired: p.changeRequired };
      return { ...next, state: stateAfterCredentials(next) };
    }
    case userEvents.u2fAdded:
      return { ...state, u2fTokens: [...state.u2fTokens.filter((t) => !expiredPending(t, event.createdAt)), pendingU2F(p)] };
    case userEvents.u2fVerified:
      return { ...state, u2fTokens: state.u2fTokens.map((t) => (t.id === p.id ? readyU2F(t, p) : t)) };
    case userEvents.memberOfRecorded:
      return { ...state, memberOf: [...new Set([...(state.memberOf ?? []), p.orgId as string])] };
    default:
      return state;
  }
}

/** A new registration drops pending tokens whose challenge had already expired, so they cannot pile up. */
const expiredPending = (t: U2FToken, at: Date) =>
  t.state === 'U2F_STATE_NOT_READY' && t.expiresAt !== undefined && Date.parse(t.expiresAt) <= at.getTime();

const pendingU2F = (p: any): U2FToken => ({
  id: p.id,
  name: null,
  state: 'U2F_STATE_NOT_READY',
  rpId: p.rpId,
  challenge: p.challenge,
  origins: p.origins,
  expiresAt: p.expiresAt,
});

// Built field by field so the pending-only fields are gone, not undefined (stores differ on undefined).
const readyU2F = (t: U2FToken, p: any): U2FToken => ({
  id: t.id,
  name: p.name,
  state: 'U2F_STATE_READY',
  ...(t.rpId !== undefined ? { rpId: t.rpId } : {}),
  credentialId: p.credentialId,
  publicKey: p.publicKey,
  counter: p.counter,
  transports: p.transports ?? [],
});
