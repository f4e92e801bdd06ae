// Use cases of the identity provider aggregate: add an OIDC IDP, replace its OIDC
// configuration (deprecated in ZITADEL's API), read one.
import { alreadyExists, failedPrecondition, notFound, permissionDenied } from '../errors.ts';
import { idpEvent, idpNameClaim, sameOIDCConfig, type IdentityProvider, type OIDCConfig } from '../model/idps.ts';
import type { Org } from '../model/orgs.ts';
import { seal } from '../model/secret-box.ts';
import type { Snapshot } from '../store/port.ts';
import { actingOrg, authenticate, can, mayRead, permissionReads, requireIn } from './access.ts';
import { detailsOf, load, type CommandContext, type Details } from './context.ts';
import { idpInputRules, type AddOIDCIdentityProviderInput, type UpdateOIDCIdentityProviderInput } from './idp-inputs.ts';
import { write } from './runner.ts';
import { command } from './command.ts';

type OIDCInput = Pick<AddOIDCIdentityProviderInput, 'issuer' | 'clientId' | 'scopes' | 'displayNameMapping' | 'usernameMapping'>;

/** The whole configuration the input describes: left-out scopes are empty, left-out mappings UNSPECIFIED. */
function toConfig(input: OIDCInput): OIDCConfig {
  return {
    issuer: input.issuer.trim(),
    clientId: input.clientId.trim(),
    scopes: [...(input.scopes ?? [])],
    displayNameMapping: input.displayNameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
    usernameMapping: input.usernameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
  };
}

/** The acting organization (x-service-orgid or the caller's own) where the caller holds org.idp.write. */
async function idpWriter(ctx: CommandContext, idpId?: string) {
  const caller = await authenticate(ctx, { ...permissionReads(ctx), idp: [idpId] });
  const org = await actingOrg(ctx, caller);
  await requireIn(ctx, caller, org, 'org.idp.write');
  return { caller, org };
}

export interface AddIdpResult {
  idpId: string;
  details: Details;
}

export const addOIDCIdentityProvider = command(
  (c) => idpInputRules(c).addOIDCIdentityProvider,
  async function addOIDCIdentityProvider(ctx, input: AddOIDCIdentityProviderInput): Promise<AddIdpResult> {
    const { org } = await idpWriter(ctx);
    const idpId = ctx.deps.newId();
    const name = input.name.trim();
    const config = toConfig(input);
    // Sealed once, bound to this IDP's id; the clear secret goes no further.
    const clientSecret = seal(ctx.deps.idpSecretKey, idpId, input.clientSecret);
    const { snapshot } = await write(
      ctx,
      'idp',
      idpId,
      (current) => {
        if (current) throw alreadyExists(`Identity provider ${idpId}`);
        return { ...idpEvent.oidcAdded(name, config, clientSecret), resourceOwner: org.id, claims: [idpNameClaim(org.id, name)] };
      },
      { isNew: true },
    );
    return { idpId, details: detailsOf(snapshot, true) };
  },
);

/**
 * Replaces the OIDC configuration as a whole (operation 2,
 * section 8). An empty or absent clientSecret keeps the stored one; a given one
 * is always a change. Nothing changed: FAILED_PRECONDITION, no event.
 */
export const updateOIDCIdentityProvider = command(
  (c) => idpInputRules(c).updateOIDCIdentityProvider,
  async function updateOIDCIdentityProvider(ctx, input: UpdateOIDCIdentityProviderInput): Promise<Details> {
    const { org } = await idpWriter(ctx, input.idpId);
    const idpId = input.idpId;
    const inOrg = (idp: Snapshot<IdentityProvider> | null): idp is Snapshot<IdentityProvider> => !!idp && idp.resourceOwner === org.id;

    const existing = await load<IdentityProvider>(ctx, 'idp', idpId);
    if (!inOrg(existing)) throw notFound('Identity provider');
    const config = toConfig(input);
    const newSecret = input.clientSecret ? seal(ctx.deps.idpSecretKey, idpId, input.clientSecret) : null;
    const unchanged = (idp: IdentityProvider) => newSecret === null && sameOIDCConfig(idp, config);
    if (unchanged(existing.state)) throw failedPrecondition('The identity provider configuration has not changed');

    const { snapshot } = await write(ctx, 'idp', idpId, (current) => {
      if (!inOrg(current)) throw notFound('Identity provider');
      if (unchanged(current.state)) throw failedPrecondition('The identity provider configuration has not changed');
      return { ...idpEvent.oidcChanged(config, newSecret), resourceOwner: current.resourceOwner };
    });
    return detailsOf(snapshot, true);
  },
);

/**
 * An IDP of the acting organization, for callers holding org.idp.write there
 * (instance administrators included) or any role there; others get
 * PERMISSION_DENIED before anything is looked up. Null when the IDP is not in
 * that organization.
 */
export async function identityProvider(ctx: CommandContext, id: string): Promise<Snapshot<IdentityProvider> | null> {
  const caller = await authenticate(ctx, { ...permissionReads(ctx), idp: [id] });
  const org: Snapshot<Org> = await actingOrg(ctx, caller);
  const anyRole = await mayRead(ctx, caller, org);
  if (!anyRole && !(await can(ctx, caller, org, 'org.idp.write'))) throw permissionDenied();
  const idp = await load<IdentityProvider>(ctx, 'idp', id);
  return idp && idp.resourceOwner === org.id ? idp : null;
}
