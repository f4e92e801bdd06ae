// What an event changed, as an audit trail shows it: an allowlist per event type,
// so a field nobody listed here is never shown. Secrets (password hashes, sealed
// OIDC client secrets) show that they changed, never their value; metadata shows
// its keys only; WebAuthn challenges and public keys, verification codes and
// SAML metadata documents are left out.
import type { StoredEvent } from './events.ts';
import { idpEvents } from './idps.ts';
import { instanceEvents, orgEvents } from './orgs.ts';
import { projectEvents } from './projects.ts';
import { userEvents } from './users.ts';

export interface Change {
  field: string;
  /** Text, JSON for structured values; null when cleared, or for a secret that was set. */
  value: string | null;
}

export interface Summary {
  type: string;
  changes: Change[];
}

type Payload = Record<string, any>;

const text = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

/** A shown field; absent from the payload (older events), no change. */
const show = (field: string, value: unknown): Change[] => (value === undefined ? [] : [{ field, value: text(value) }]);
/** A secret: that it was set, never its value. */
const secret = (field: string, value: unknown): Change[] => (value === undefined || value === null ? [] : [{ field, value: null }]);

const profile = (p: Payload | undefined, skipUnset: boolean): Change[] =>
  (['firstName', 'lastName', 'nickName', 'displayName', 'preferredLanguage', 'gender'] as const).flatMap((key) =>
    skipUnset && p?.[key] == null ? [] : show(`profile.${key}`, p?.[key]),
  );

const oidcConfig = (p: Payload): Change[] => [
  ...show('issuer', p.issuer),
  ...show('clientId', p.clientId),
  ...show('scopes', p.scopes),
  ...show('displayNameMapping', p.displayNameMapping),
  ...show('usernameMapping', p.usernameMapping),
  ...secret('clientSecret', p.clientSecret),
];

const nonEmpty = (field: string, list: unknown): Change[] => (Array.isArray(list) && list.length > 0 ? show(field, list) : []);

const rules: Record<string, (p: Payload) => Change[]> = {
  [userEvents.added]: (p) => [
    ...show('username', p.username),
    ...profile(p.profile, true),
    ...show('email', p.email?.email),
    ...show('email.isVerified', p.email?.isVerified),
    ...(p.phone ? [...show('phone', p.phone.phone), ...show('phone.isVerified', p.phone.isVerified)] : []),
    ...secret('password', p.passwordHash),
    ...show('passwordChangeRequired', p.passwordChangeRequired),
    ...nonEmpty('metadata', Array.isArray(p.metadata) ? p.metadata.map((m: Payload) => m?.key) : undefined),
    ...nonEmpty(
      'idpLinks',
      Array.isArray(p.idpLinks)
        ? p.idpLinks.map((l: Payload) => ({ idpId: l?.idpId, userId: l?.userId, userName: l?.userName }))
        : undefined,
    ),
  ],
  [userEvents.profileChanged]: (p) => profile(p.profile, false),
  [userEvents.emailChanged]: (p) => [...show('email', p.email), ...show('email.isVerified', p.isVerified)],
  [userEvents.emailVerified]: () => show('email.isVerified', true),
  [userEvents.phoneChanged]: (p) => [...show('phone', p.phone), ...show('phone.isVerified', p.isVerified)],
  [userEvents.phoneVerified]: () => show('phone.isVerified', true),
  [userEvents.passwordChanged]: (p) => [...secret('password', p.hash), ...show('passwordChangeRequired', p.changeRequired)],
  [userEvents.u2fAdded]: (p) => [
    ...show('u2f.id', p.id),
    ...show('u2f.rpId', p.rpId),
    ...show('u2f.origins', p.origins),
    ...show('u2f.expiresAt', p.expiresAt),
  ],
  [userEvents.u2fVerified]: (p) => [...show('u2f.id', p.id), ...show('u2f.name', p.name), ...show('u2f.transports', p.transports)],
  [userEvents.memberOfRecorded]: (p) => show('memberOf', p.orgId),

  [orgEvents.added]: (p) => [...show('name', p.name), ...show('domain', p.domain)],
  [orgEvents.memberAdded]: (p) => [...show('member.userId', p.userId), ...show('member.roles', p.roles)],
  [instanceEvents.setUp]: (p) => [...show('adminUserId', p.adminUserId), ...show('defaultOrgId', p.defaultOrgId)],

  [idpEvents.oidcAdded]: (p) => [...show('name', p.name), ...oidcConfig(p)],
  [idpEvents.oidcChanged]: oidcConfig,

  [projectEvents.added]: (p) => show('name', p.name),
  [projectEvents.samlAppAdded]: (p) => [
    ...show('app.id', p.appId),
    ...show('app.name', p.name),
    ...show('app.entityId', p.entityId),
    ...show('app.metadataUrl', p.metadataUrl),
  ],
};

/** The event's type and its changes, redacted; an unknown type: its type, no changes. */
export function summarize(event: Pick<StoredEvent, 'type' | 'payload'>): Summary {
  const rule = Object.hasOwn(rules, event.type) ? rules[event.type] : undefined;
  return { type: event.type, changes: rule ? rule(event.payload ?? {}) : [] };
}
