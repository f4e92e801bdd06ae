// The other mutations over ZITADEL's API: identity providers, projects and SAML apps,
// organizations and their members (management v1, org v2), security keys and resent codes (user
// v2). Each is wired by `mutation` (src/upstream/send.ts): the commands' input rules, then one call.
import { OIDCMappingFieldSchema } from '@zitadel/proto/zitadel/idp_pb.js';
import { detailsOf, enumOf } from './convert.ts';
import type { InputRules } from './inputs.ts';
import { details, mutation } from './send.ts';

/** An OIDC configuration as management v1 takes it (scopes absent: none; mappings by number). */
const oidc = (i: {
  issuer: string;
  clientId: string;
  scopes?: string[] | null;
  displayNameMapping?: string | null;
  usernameMapping?: string | null;
}) => ({
  issuer: i.issuer,
  clientId: i.clientId,
  scopes: i.scopes ?? [],
  displayNameMapping: enumOf(OIDCMappingFieldSchema, i.displayNameMapping),
  usernameMapping: enumOf(OIDCMappingFieldSchema, i.usernameMapping),
});

/** Identity providers, projects and SAML apps (management v1). */
export function resourceMutations(rules: InputRules) {
  return {
    addOIDCIdentityProvider: mutation(
      'addOIDCIdentityProvider',
      rules.addOIDCIdentityProvider,
      'AddOrgOIDCIDP',
      (ctx, i, o) => ctx.upstream.clients.management.addOrgOIDCIDP({ name: i.name, clientSecret: i.clientSecret, ...oidc(i) }, o),
      (r) => ({ idpId: r.idpId, details: detailsOf(r.details) }),
    ),
    updateOIDCIdentityProvider: mutation(
      'updateOIDCIdentityProvider',
      rules.updateOIDCIdentityProvider,
      'UpdateOrgIDPOIDCConfig',
      // An empty secret keeps the stored one, on both sides.
      (ctx, i, o) =>
        ctx.upstream.clients.management.updateOrgIDPOIDCConfig({ idpId: i.idpId, clientSecret: i.clientSecret ?? '', ...oidc(i) }, o),
      details,
    ),
    addProject: mutation(
      'addProject',
      rules.addProject,
      'AddProject',
      (ctx, i, o) => ctx.upstream.clients.management.addProject({ name: i.name }, o),
      (r) => ({ projectId: r.id, details: detailsOf(r.details) }),
    ),
    addSAMLApp: mutation(
      'addSAMLApp',
      rules.addSAMLApp,
      'AddSAMLApp',
      (ctx, i, o) =>
        ctx.upstream.clients.management.addSAMLApp(
          {
            projectId: i.projectId,
            name: i.name,
            metadata: i.metadataXml
              ? { case: 'metadataXml', value: Buffer.from(i.metadataXml, 'base64') }
              : { case: 'metadataUrl', value: i.metadataUrl ?? '' },
          },
          o,
        ),
      (r) => ({ appId: r.appId, details: detailsOf(r.details) }),
    ),
  };
}

/** Organizations and members (org v2, management v1), security keys and resent codes (user v2). */
export function accountMutations(rules: InputRules) {
  return {
    addOrganization: mutation(
      'addOrganization',
      rules.addOrganization,
      'AddOrganization',
      (ctx, i, o) => ctx.upstream.clients.orgs.addOrganization({ name: i.name, admins: [] }, o),
      (r) => ({ orgId: r.organizationId, details: detailsOf(r.details) }),
    ),
    addOrgMember: mutation(
      'addOrgMember',
      rules.addOrgMember,
      'AddOrgMember',
      (ctx, i, o) => ctx.upstream.clients.management.addOrgMember({ userId: i.userId, roles: i.roles }, o),
      details,
    ),
    registerU2F: mutation(
      'registerU2F',
      rules.registerU2F,
      'RegisterU2F',
      (ctx, i, o) => ctx.upstream.clients.users.registerU2F({ userId: i.userId, domain: i.domain ?? '' }, o),
      (r) => ({
        u2fId: r.u2fId,
        details: detailsOf(r.details),
        // google.protobuf.Struct: the options as JSON, what the browser's navigator.credentials.create takes.
        publicKeyCredentialCreationOptions: (r.publicKeyCredentialCreationOptions ?? {}) as never,
      }),
    ),
    verifyU2FRegistration: mutation(
      'verifyU2FRegistration',
      rules.verifyU2FRegistration,
      'VerifyU2FRegistration',
      (ctx, i, o) =>
        ctx.upstream.clients.users.verifyU2FRegistration(
          { userId: i.userId, u2fId: i.u2fId, publicKeyCredential: i.publicKeyCredential as never, tokenName: i.tokenName },
          o,
        ),
      details,
    ),
    resendEmailCode: mutation(
      'resendEmailCode',
      rules.resendEmailCode,
      'ResendEmailCode',
      (ctx, i, o) =>
        ctx.upstream.clients.users.resendEmailCode(
          {
            userId: i.userId,
            verification: i.urlTemplate ? { case: 'sendCode', value: { urlTemplate: i.urlTemplate } } : { case: undefined },
          },
          o,
        ),
      details,
    ),
    resendPhoneCode: mutation(
      'resendPhoneCode',
      rules.resendPhoneCode,
      'ResendPhoneCode',
      (ctx, i, o) => ctx.upstream.clients.users.resendPhoneCode({ userId: i.userId, verification: { case: undefined } }, o),
      details,
    ),
  };
}
