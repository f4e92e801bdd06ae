// The identity provider aggregate (OIDC): its state and how each event changes it.
// The client secret is only ever held sealed (secret-box.ts), in events and state.
import type { StoredEvent } from './events.ts';
import type { Sealed } from './secret-box.ts';

export type OIDCMappingField = 'OIDC_MAPPING_FIELD_UNSPECIFIED' | 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME' | 'OIDC_MAPPING_FIELD_EMAIL';

/** The OIDC part that updateOIDCIdentityProvider replaces as a whole (the secret aside). */
export interface OIDCConfig {
  issuer: string;
  clientId: string;
  scopes: string[];
  displayNameMapping: OIDCMappingField;
  usernameMapping: OIDCMappingField;
}

export interface IdentityProvider extends OIDCConfig {
  name: string;
  type: 'oidc';
  /** AES-256-GCM sealed client secret, bound to this IDP's id; null when none is stored. */
  clientSecret: Sealed | null;
}

export const idpEvents = {
  /** payload: name, issuer, clientId, clientSecret (sealed), scopes, displayNameMapping, usernameMapping */
  oidcAdded: 'idp.oidc.added',
  /** payload: the whole OIDCConfig, plus clientSecret (sealed) only when a new one was given */
  oidcChanged: 'idp.oidc.changed',
} as const;

/** The uniqueness key of an IDP name in its organization (trimmed, case ignored). */
export const idpNameClaim = (orgId: string, name: string) => `idpName:${orgId}:${name.trim().toLowerCase()}`;

export function sameOIDCConfig(a: OIDCConfig, b: OIDCConfig): boolean {
  return (
    a.issuer === b.issuer &&
    a.clientId === b.clientId &&
    a.displayNameMapping === b.displayNameMapping &&
    a.usernameMapping === b.usernameMapping &&
    a.scopes.length === b.scopes.length &&
    a.scopes.every((s, i) => s === b.scopes[i])
  );
}

/** The OIDC configuration as the events carry it (older events may lack the mappings). */
export type OIDCConfigPayload = Omit<OIDCConfig, 'displayNameMapping' | 'usernameMapping' | 'scopes'> & {
  scopes?: string[];
  displayNameMapping?: OIDCMappingField;
  usernameMapping?: OIDCMappingField;
};

/** Every event of the identity provider aggregate. */
export type IdpEvent =
  | { type: typeof idpEvents.oidcAdded; payload: OIDCConfigPayload & { name: string; clientSecret: Sealed | null } }
  | { type: typeof idpEvents.oidcChanged; payload: OIDCConfigPayload & { clientSecret?: Sealed } };

export const idpEvent = {
  oidcAdded: (name: string, config: OIDCConfig, clientSecret: Sealed | null): IdpEvent => ({
    type: idpEvents.oidcAdded,
    payload: { name, ...config, clientSecret },
  }),
  /** The whole configuration; the sealed secret only when a new one was given. */
  oidcChanged: (config: OIDCConfig, clientSecret: Sealed | null): IdpEvent => ({
    type: idpEvents.oidcChanged,
    payload: clientSecret ? { ...config, clientSecret } : { ...config },
  }),
};

const configOf = (p: OIDCConfigPayload): OIDCConfig => ({
  issuer: p.issuer,
  clientId: p.clientId,
  scopes: [...(p.scopes ?? [])],
  displayNameMapping: p.displayNameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
  usernameMapping: p.usernameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
});

export function reduceIdp(state: IdentityProvider | undefined, event: StoredEvent & IdpEvent): IdentityProvider {
  if (event.type === idpEvents.oidcAdded) {
    return { name: event.payload.name, type: 'oidc', ...configOf(event.payload), clientSecret: event.payload.clientSecret ?? null };
  }
  if (!state) throw new Error(`${event.type} before ${idpEvents.oidcAdded} for idp ${event.aggregateId}`);
  switch (event.type) {
    case idpEvents.oidcChanged:
      // Full replacement of the OIDC configuration; the secret only when the event carries one.
      return { ...state, ...configOf(event.payload), clientSecret: event.payload.clientSecret ?? state.clientSecret };
    default:
      return state;
  }
}
