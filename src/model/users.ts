// The user aggregate: its state and how each event changes it.
import type { StoredEvent } from './events.ts';
import { fold } from './text.ts';

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
  /**
   * When a password was last set (ISO): the time of the event that set it, as ZITADEL's user
   * projection takes it (ZITADEL's password_changed). Absent while none was set, and on a state
   * document reduced before this field existed, until the password is set again.
   */
  passwordChanged?: string;
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

/** A new user as its first event carries it (the state name and the password's time follow from it and the event). */
export type UserAdded = Omit<User, 'state' | 'passwordChanged'>;

/**
 * addHumanUser's uniqueness keys: the username folded as searches fold it (NFKC, lower case:
 * "José" composed or decomposed, or in full-width letters, is one username), and each link of
 * an identity provider's user.
 */
export const humanUserClaims = (user: Pick<UserAdded, 'username' | 'idpLinks'>): string[] => [
  `username:${fold(user.username)}`,
  ...user.idpLinks.map((l) => `idpLink:${l.idpId}:${l.userId}`),
];
/** A registration started: the challenge and where it may be answered from, until expiresAt (ISO). */
export type U2FAdded = { id: string; challenge: string; rpId: string; origins: string[]; expiresAt: string };
/** A registration verified: the credential (id and COSE public key base64url), its counter and transports. */
export type U2FVerified = { id: string; name: string; credentialId: string; publicKey: string; counter: number; transports: string[] };

/** Every event of the user aggregate. */
export type UserEvent =
  | { type: typeof userEvents.added; payload: UserAdded }
  | { type: typeof userEvents.profileChanged; payload: { profile: Profile } }
  | { type: typeof userEvents.emailChanged; payload: { email: string; isVerified: boolean } }
  | { type: typeof userEvents.emailVerified; payload: Record<string, never> }
  | { type: typeof userEvents.phoneChanged; payload: { phone: string; isVerified: boolean } }
  | { type: typeof userEvents.phoneVerified; payload: Record<string, never> }
  | { type: typeof userEvents.passwordChanged; payload: { hash: string; changeRequired: boolean } }
  | { type: typeof userEvents.u2fAdded; payload: U2FAdded }
  | { type: typeof userEvents.u2fVerified; payload: U2FVerified }
  | { type: typeof userEvents.memberOfRecorded; payload: { orgId: string } };

/** The user events, made only here. */
export const userEvent = {
  added: (user: UserAdded): UserEvent => ({ type: userEvents.added, payload: user }),
  profileChanged: (profile: Profile): UserEvent => ({ type: userEvents.profileChanged, payload: { profile } }),
  emailChanged: (email: string, isVerified: boolean): UserEvent => ({ type: userEvents.emailChanged, payload: { email, isVerified } }),
  emailVerified: (): UserEvent => ({ type: userEvents.emailVerified, payload: {} }),
  phoneChanged: (phone: string, isVerified: boolean): UserEvent => ({ type: userEvents.phoneChanged, payload: { phone, isVerified } }),
  phoneVerified: (): UserEvent => ({ type: userEvents.phoneVerified, payload: {} }),
  passwordChanged: (hash: string, changeRequired: boolean): UserEvent => ({
    type: userEvents.passwordChanged,
    payload: { hash, changeRequired },
  }),
  u2fAdded: (registration: U2FAdded): UserEvent => ({ type: userEvents.u2fAdded, payload: registration }),
  u2fVerified: (credential: U2FVerified): UserEvent => ({ type: userEvents.u2fVerified, payload: credential }),
  memberOfRecorded: (orgId: string): UserEvent => ({ type: userEvents.memberOfRecorded, payload: { orgId } }),
};

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

export function reduceUser(state: User | undefined, event: StoredEvent & UserEvent): User {
  if (event.type === userEvents.added) {
    const user = event.payload;
    const added: User = { ...user, state: stateAfterCredentials({ ...user, state: 'USER_STATE_INITIAL' }) };
    // Built without an undefined key (stores differ on undefined): no password, no time.
    return user.passwordHash ? { ...added, passwordChanged: event.createdAt.toISOString() } : added;
  }
  if (!state) throw new Error(`${event.type} before ${userEvents.added} for user ${event.aggregateId}`);
  switch (event.type) {
    case userEvents.profileChanged:
      return { ...state, profile: event.payload.profile };
    case userEvents.emailChanged:
      return { ...state, email: { email: event.payload.email, isVerified: event.payload.isVerified } };
    case userEvents.emailVerified:
      return { ...state, email: { ...state.email, isVerified: true } };
    case userEvents.phoneChanged:
      return { ...state, phone: { phone: event.payload.phone, isVerified: event.payload.isVerified } };
    case userEvents.phoneVerified:
      return state.phone ? { ...state, phone: { ...state.phone, isVerified: true } } : state;
    case userEvents.passwordChanged: {
      const next = {
        ...state,
        passwordHash: event.payload.hash,
        passwordChangeRequired: event.payload.changeRequired,
        passwordChanged: event.createdAt.toISOString(),
      };
      return { ...next, state: stateAfterCredentials(next) };
    }
    case userEvents.u2fAdded:
      return { ...state, u2fTokens: [...withoutStalePending(state.u2fTokens, event.createdAt), pendingU2F(event.payload)] };
    case userEvents.u2fVerified: {
      const verified = event.payload;
      return { ...state, u2fTokens: state.u2fTokens.map((t) => (t.id === verified.id ? readyU2F(t, verified) : t)) };
    }
    case userEvents.memberOfRecorded:
      return { ...state, memberOf: [...new Set([...(state.memberOf ?? []), event.payload.orgId])] };
    default:
      return state;
  }
}

/** Verified U2F tokens a user may hold: what one person carries, and a bound on the user's state. */
export const MAX_READY_U2F = 20;

/** Registrations a user may have pending at once; a new one beyond it drops the oldest. */
export const MAX_PENDING_U2F = 5;

const isPending = (t: U2FToken) => t.state === 'U2F_STATE_NOT_READY';
const expiredPending = (t: U2FToken, at: Date) => isPending(t) && t.expiresAt !== undefined && Date.parse(t.expiresAt) <= at.getTime();

/**
 * What a new registration keeps: pending tokens whose challenge has expired are dropped, and of
 * the live ones only the newest MAX_PENDING_U2F - 1, so repeated registrations cannot pile up.
 */
function withoutStalePending(tokens: U2FToken[], at: Date): U2FToken[] {
  const live = tokens.filter((t) => !expiredPending(t, at));
  let surplus = live.filter(isPending).length - (MAX_PENDING_U2F - 1);
  return surplus <= 0 ? live : live.filter((t) => !(isPending(t) && surplus-- > 0));
}

const pendingU2F = (p: U2FAdded): U2FToken => ({
  id: p.id,
  name: null,
  state: 'U2F_STATE_NOT_READY',
  rpId: p.rpId,
  challenge: p.challenge,
  origins: p.origins,
  expiresAt: p.expiresAt,
});

// Built field by field so the pending-only fields are gone, not undefined (stores differ on undefined).
const readyU2F = (t: U2FToken, p: U2FVerified): U2FToken => ({
  id: t.id,
  name: p.name,
  state: 'U2F_STATE_READY',
  ...(t.rpId !== undefined ? { rpId: t.rpId } : {}),
  credentialId: p.credentialId,
  publicKey: p.publicKey,
  counter: p.counter,
  transports: p.transports ?? [],
});

/** A user's searchable fields (src/store/read-models.ts searches them); text fields are case-folded with `fold`. */
export interface UserSearchFields {
  username: string;
  email: string;
  displayName: string;
  firstName: string;
  lastName: string;
  state: string;
  emailVerified: boolean;
}

/** What a user search looks at: text case-folded. */
export function userSearchFields(user: User): UserSearchFields {
  return {
    username: fold(user.username),
    email: fold(user.email.email),
    displayName: fold(user.profile.displayName ?? ''),
    firstName: fold(user.profile.firstName),
    lastName: fold(user.profile.lastName),
    state: user.state,
    emailVerified: user.email.isVerified,
  };
}
