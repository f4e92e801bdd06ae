// Input rules of the identity provider operations (operation 2 and the field limits,
// docs/graphql.md, HTTP: limits). Checked before any I/O; every violated field is reported.
import type { Config } from '../config.ts';
import { z } from 'zod';
import { text } from './rules.ts';

/** At most this many scopes per IDP (ZITADEL gives no count; 50 is far above any real provider's needs). */
export const MAX_SCOPES = 50;
/** Code-point limit of every IDP text field (the field limits: issuer, clientId, clientSecret; the name like other names). */
export const IDP_TEXT_MAX = 200;

const mapping = z.enum(['OIDC_MAPPING_FIELD_UNSPECIFIED', 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME', 'OIDC_MAPPING_FIELD_EMAIL']);

/**
 * One OAuth scope token: non-empty, ≤ 200 code points, and without white space,
 * since scopes travel space-separated in the authorization request (RFC 6749 3.3).
 */
const scope = text(IDP_TEXT_MAX, { required: true }).refine((s) => s.trim() === '' || !/\s/u.test(s), {
  message: 'must not contain white space',
});

const scopes = z
  .array(scope)
  .max(MAX_SCOPES, { message: `give at most ${MAX_SCOPES} scopes` })
  .superRefine((items, ctx) => {
    const seen = new Set<string>();
    items.forEach((s, i) => {
      if (seen.has(s)) ctx.addIssue({ code: 'custom', path: [i], message: 'duplicate scope' });
      seen.add(s);
    });
  })
  .nullish();

const oidcFields = {
  issuer: text(IDP_TEXT_MAX, { required: true }),
  clientId: text(IDP_TEXT_MAX, { required: true }),
  scopes,
  displayNameMapping: mapping.nullish(),
  usernameMapping: mapping.nullish(),
};

/**
 * updateOIDCIdentityProvider's clientSecret: empty or absent keeps the stored
 * one; given, at most 200 code points and not only white space (a blank secret
 * is never a real one, and treating it as "keep" would hide a client mistake).
 */
const keptOrNewSecret = text(IDP_TEXT_MAX)
  .refine((s) => s === '' || s.trim() !== '', { message: 'must not be only white space (send it empty to keep the stored secret)' })
  .nullish();

export function idpInputRules(_config?: Config) {
  return {
    addOIDCIdentityProvider: z.object({
      name: text(IDP_TEXT_MAX, { required: true, name: true }),
      ...oidcFields,
      clientSecret: text(IDP_TEXT_MAX, { required: true }),
    }),
    updateOIDCIdentityProvider: z.object({
      idpId: text(IDP_TEXT_MAX, { required: true }),
      ...oidcFields,
      clientSecret: keptOrNewSecret,
    }),
  };
}

export type AddOIDCIdentityProviderInput = z.infer<ReturnType<typeof idpInputRules>['addOIDCIdentityProvider']>;
export type UpdateOIDCIdentityProviderInput = z.infer<ReturnType<typeof idpInputRules>['updateOIDCIdentityProvider']>;
