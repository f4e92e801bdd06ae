import * as orgs from '../commands/orgs.ts';
import type { Builder } from './builder.ts';
import type { Common } from './common.ts';

export function addOrgs(builder: Builder, { Details: DetailsRef, detailsPayload }: Common) {
  const AddOrganizationInput = builder.inputType('AddOrganizationInput', { fields: (t) => ({ name: t.string({ required: true }) }) });
  const AddOrganizationPayload = builder.objectRef<{ orgId: string; details: any }>('AddOrganizationPayload').implement({
    fields: (t) => ({ orgId: t.exposeID('orgId'), details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
  });
  builder.mutationField('addOrganization', (t) =>
    t.field({
      description: 'Create an organization (instance administrators only).',
      type: AddOrganizationPayload,
      args: { input: t.arg({ type: AddOrganizationInput, required: true, validate: { schema: orgs.orgInputRules.addOrganization } as any }) },
      resolve: (_r, args, ctx) => orgs.addOrganization(ctx.cmd, args.input as any),
    }),
  );

  const AddOrgMemberInput = builder.inputType('AddOrgMemberInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      roles: t.stringList({
        required: true,
        description: 'ORG_OWNER, ORG_USER_MANAGER, ORG_PROJECT_CREATOR, ... (DESIGN.md lists the roles and their permissions).',
      }),
    }),
  });
  builder.mutationField('addOrgMember', (t) =>
    t.field({
      description: 'Grant roles in the organization selected by x-service-orgid to a user.',
      type: detailsPayload('AddOrgMemberPayload'),
      args: { input: t.arg({ type: AddOrgMemberInput, required: true, validate: { schema: orgs.orgInputRules.addOrgMember } as any }) },
      resolve: async (_r, args, ctx) => ({ details: await orgs.addOrgMember(ctx.cmd, args.input as any) }),
    }),
  );
}
