// GraphQL surface of the identity provider operations: inputs, payloads, the IdentityProvider type. Thin: map and call.
import { detailsOf, type AddIdpResult } from '../operations.ts';
import type { IdentityProvider } from '../model/idps.ts';
import type { Snapshot } from '../store/port.ts';
import type { Builder, InputFields } from './builder.ts';
import { withDetails, type Common } from './common.ts';
import { asEntity } from './entities.ts';

export const UPDATE_OIDC_IDP_DEPRECATION = 'Deprecated operation of the identity API; it may be removed in a future version.';

export function addIdps(builder: Builder, { Details: DetailsRef, OIDCMappingField, detailsPayload, commandMutation }: Common) {
  const oidcFields = (t: InputFields) => ({
    issuer: t.string({ required: true }),
    clientId: t.string({ required: true }),
    scopes: t.stringList(),
    displayNameMapping: t.field({ type: OIDCMappingField, defaultValue: 'OIDC_MAPPING_FIELD_UNSPECIFIED' }),
    usernameMapping: t.field({ type: OIDCMappingField, defaultValue: 'OIDC_MAPPING_FIELD_UNSPECIFIED' }),
  });

  const AddOIDCIdentityProviderInput = builder.inputType('AddOIDCIdentityProviderInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      ...oidcFields(t),
      clientSecret: t.string({
        required: true,
        description: 'Stored encrypted; never readable afterwards (see IdentityProvider.hasClientSecret).',
      }),
    }),
  });
  const UpdateOIDCIdentityProviderInput = builder.inputType('UpdateOIDCIdentityProviderInput', {
    description: 'The whole OIDC configuration: scopes or mappings left out are empty / OIDC_MAPPING_FIELD_UNSPECIFIED afterwards.',
    fields: (t) => ({
      idpId: t.id({ required: true }),
      ...oidcFields(t),
      clientSecret: t.string({ description: 'Empty or absent: the stored secret is kept.' }),
    }),
  });

  const AddOIDCIdentityProviderPayload = builder.objectRef<AddIdpResult>('AddOIDCIdentityProviderPayload').implement({
    fields: (t) => ({ idpId: t.exposeID('idpId'), details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
  });

  commandMutation('addOIDCIdentityProvider', {
    description: 'Create an OIDC identity provider in the organization selected by x-service-orgid.',
    input: AddOIDCIdentityProviderInput,
    payload: AddOIDCIdentityProviderPayload,
    run: (ops) => ops.addOIDCIdentityProvider,
  });

  commandMutation('updateOIDCIdentityProvider', {
    description: '2. Replace the OIDC configuration of an identity provider.',
    deprecationReason: UPDATE_OIDC_IDP_DEPRECATION,
    input: UpdateOIDCIdentityProviderInput,
    payload: detailsPayload('UpdateOIDCIdentityProviderPayload'),
    run: withDetails((ops) => ops.updateOIDCIdentityProvider),
  });

  const IdentityProviderRef = builder.objectRef<Snapshot<IdentityProvider>>('IdentityProvider').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.string({ resolve: (i) => i.state.name }),
      resourceOwner: t.exposeID('resourceOwner', { description: 'The organization the identity provider belongs to.' }),
      details: t.field({ type: DetailsRef, resolve: (i) => ({ ...detailsOf(i, true), creationDate: i.creationDate }) }),
      issuer: t.string({ resolve: (i) => i.state.issuer }),
      clientId: t.string({ resolve: (i) => i.state.clientId }),
      hasClientSecret: t.boolean({
        description: 'The client secret is write-only: only whether one is stored.',
        resolve: (i) => i.state.clientSecret !== null,
      }),
      scopes: t.stringList({ resolve: (i) => i.state.scopes }),
      displayNameMapping: t.field({ type: OIDCMappingField, resolve: (i) => i.state.displayNameMapping }),
      usernameMapping: t.field({ type: OIDCMappingField, resolve: (i) => i.state.usernameMapping }),
    }),
  });

  asEntity(builder, IdentityProviderRef, 'idp');

  builder.queryField('identityProvider', (t) =>
    t.field({
      type: IdentityProviderRef,
      nullable: true,
      description: 'An identity provider of the organization selected by x-service-orgid; null when it does not exist there.',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => ctx.ops.identityProvider(ctx.cmd, String(args.id)),
    }),
  );
}
