import { detailsOf, type Details } from '../operations.ts';
import type { Org } from '../model/orgs.ts';
import type { Snapshot } from '../store/port.ts';
import type { Builder } from './builder.ts';
import { withDetails, type Common } from './common.ts';
import { asEntity } from './entities.ts';

export function addOrgs(builder: Builder, { Details: DetailsRef, detailsPayload, commandMutation }: Common) {
  const AddOrganizationInput = builder.inputType('AddOrganizationInput', { fields: (t) => ({ name: t.string({ required: true }) }) });
  const AddOrganizationPayload = builder.objectRef<{ orgId: string; details: Details }>('AddOrganizationPayload').implement({
    fields: (t) => ({ orgId: t.exposeID('orgId'), details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
  });
  commandMutation('addOrganization', {
    description: 'Create an organization (instance administrators only).',
    input: AddOrganizationInput,
    payload: AddOrganizationPayload,
    run: (ops) => ops.addOrganization,
  });

  const AddOrgMemberInput = builder.inputType('AddOrgMemberInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      roles: t.stringList({
        required: true,
        description: 'ORG_OWNER, ORG_USER_MANAGER, ORG_PROJECT_CREATOR, ... (the README lists the roles and their permissions).',
      }),
    }),
  });
  commandMutation('addOrgMember', {
    description: 'Grant roles in the organization selected by x-service-orgid to a user.',
    input: AddOrgMemberInput,
    payload: detailsPayload('AddOrgMemberPayload'),
    run: withDetails((ops) => ops.addOrgMember),
  });

  const OrganizationRef = builder.objectRef<Snapshot<Org>>('Organization').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.string({ resolve: (o) => o.state.name }),
      domain: t.string({ description: 'The name as a DNS label under the instance domain.', resolve: (o) => o.state.domain }),
      details: t.field({ type: DetailsRef, resolve: (o) => ({ ...detailsOf(o, true), creationDate: o.creationDate }) }),
    }),
  });
  asEntity(builder, OrganizationRef, 'org');

  builder.queryField('organization', (t) =>
    t.field({
      type: OrganizationRef,
      nullable: true,
      description:
        'An organization, for a caller with a role there, an instance role, or belonging to it; null when it does not exist (PERMISSION_DENIED for callers without an instance role).',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => ctx.ops.organization(ctx.cmd, String(args.id)),
    }),
  );
}
