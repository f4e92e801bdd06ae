// The other mutations over ZITADEL's API: identity providers, projects and SAML apps,
// organizations and their members (management v1, org v2), security keys and resent codes (user
// v2). Each checks its input with the commands' rules, then is one call.
import { OIDCMappingFieldSchema } from '@zitadel/proto/zitadel/idp_pb.js';
import type { AddIdpResult, AddSAMLAppResult, Details, RegisterU2FResult } from '../operations.ts';
import type { UpstreamContext } from './context.ts';
import { detailsOf, enumOf } from './convert.ts';
import { checked, type InputRules } from './inputs.ts';
import { write } from './send.ts';

/** Identity providers, projects and SAML apps (management v1). */
export function resourceMutations(rules: InputRules) {
  return {
    async addOIDCIdentityProvider(ctx: UpstreamContext, raw: unknown): Promise<AddIdpResult> {
      const input = await checked(rules.addOIDCIdentityProvider, raw);
      const r = await write(ctx, 'AddOrgOIDCIDP', (o) =>
        ctx.upstream.clients.management.addOrgOIDCIDP(
          {
            name: input.name,
            issuer: input.issuer,
            clientId: input.clientId,
            clientSecret: input.clientSecret,
            scopes: input.scopes ?? [],
            displayNameMapping: enumOf(OIDCMappingFieldSchema, input.displayNameMapping),
            usernameMapping: enumOf(OIDCMappingFieldSchema, input.usernameMapping),
          },
          o,
        ),
      );
      return { idpId: r.idpId, details: detailsOf(r.details) };
    },

    async updateOIDCIdentityProvider(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.updateOIDCIdentityProvider, raw);
      const r = await write(ctx, 'UpdateOrgIDPOIDCConfig', (o) =>
        ctx.upstream.clients.management.updateOrgIDPOIDCConfig(
          {
            idpId: input.idpId,
            issuer: input.issuer,
            clientId: input.clientId,
            // Empty: the stored secret is kept, on both sides.
            clientSecret: input.clientSecret ?? '',
            scopes: input.scopes ?? [],
            displayNameMapping: enumOf(OIDCMappingFieldSchema, input.displayNameMapping),
            usernameMapping: enumOf(OIDCMappingFieldSchema, input.usernameMapping),
          },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async addProject(ctx: UpstreamContext, raw: unknown) {
      const input = await checked(rules.addProject, raw);
      const r = await write(ctx, 'AddProject', (o) => ctx.upstream.clients.management.addProject({ name: input.name }, o));
      return { projectId: r.id, details: detailsOf(r.details) };
    },

    async addSAMLApp(ctx: UpstreamContext, raw: unknown): Promise<AddSAMLAppResult> {
      const input = await checked(rules.addSAMLApp, raw);
      const r = await write(ctx, 'AddSAMLApp', (o) =>
        ctx.upstream.clients.management.addSAMLApp(
          {
            projectId: input.projectId,
            name: input.name,
            metadata: input.metadataXml
              ? { case: 'metadataXml', value: Buffer.from(input.metadataXml, 'base64') }
              : { case: 'metadataUrl', value: input.metadataUrl ?? '' },
          },
          o,
        ),
      );
      return { appId: r.appId, details: detailsOf(r.details) };
    },
  };
}

/** Organizations and members (org v2, management v1), security keys and resent codes (user v2). */
export function accountMutations(rules: InputRules) {
  return {
    async addOrganization(ctx: UpstreamContext, raw: unknown) {
      const input = await checked(rules.addOrganization, raw);
      const r = await write(ctx, 'AddOrganization', (o) => ctx.upstream.clients.orgs.addOrganization({ name: input.name, admins: [] }, o));
      return { orgId: r.organizationId, details: detailsOf(r.details) };
    },

    async addOrgMember(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.addOrgMember, raw);
      const r = await write(ctx, 'AddOrgMember', (o) =>
        ctx.upstream.clients.management.addOrgMember({ userId: input.userId, roles: input.roles }, o),
      );
      return detailsOf(r.details);
    },

    async registerU2F(ctx: UpstreamContext, raw: unknown): Promise<RegisterU2FResult> {
      const input = await checked(rules.registerU2F, raw);
      const r = await write(ctx, 'RegisterU2F', (o) =>
        ctx.upstream.clients.users.registerU2F({ userId: input.userId, domain: input.domain ?? '' }, o),
      );
      return {
        u2fId: r.u2fId,
        details: detailsOf(r.details),
        publicKeyCredentialCreationOptions: (r.publicKeyCredentialCreationOptions ?? {}) as never,
      };
    },

    async verifyU2FRegistration(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.verifyU2FRegistration, raw);
      const r = await write(ctx, 'VerifyU2FRegistration', (o) =>
        ctx.upstream.clients.users.verifyU2FRegistration(
          { userId: input.userId, u2fId: input.u2fId, publicKeyCredential: input.publicKeyCredential as never, tokenName: input.tokenName },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async resendEmailCode(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.resendEmailCode, raw);
      const r = await write(ctx, 'ResendEmailCode', (o) =>
        ctx.upstream.clients.users.resendEmailCode(
          {
            userId: input.userId,
            verification: input.urlTemplate ? { case: 'sendCode', value: { urlTemplate: input.urlTemplate } } : { case: undefined },
          },
          o,
        ),
      );
      return detailsOf(r.details);
    },

    async resendPhoneCode(ctx: UpstreamContext, raw: unknown): Promise<Details> {
      const input = await checked(rules.resendPhoneCode, raw);
      const r = await write(ctx, 'ResendPhoneCode', (o) =>
        ctx.upstream.clients.users.resendPhoneCode({ userId: input.userId, verification: { case: undefined } }, o),
      );
      return detailsOf(r.details);
    },
  };
}
