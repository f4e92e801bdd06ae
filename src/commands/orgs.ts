// Use cases of organizations: create one, grant roles in one.
import type { z } from 'zod';
import { failedPrecondition, invalidArgument, notFound } from '../errors.ts';
import { INSTANCE_ID, orgEvent, rolesOf } from '../model/orgs.ts';
import { userEvent, type User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { actingOrg, authenticate, canInstance, permissionReads, requireIn, requireInstance } from './access.ts';
import { detailsOf, load, type CommandContext, type Details } from './context.ts';
import { orgInputRules } from './org-inputs.ts';
import { write, type WriteOptions } from './runner.ts';
import { command } from './command.ts';

type OrgInputs = { [K in keyof ReturnType<typeof orgInputRules>]: z.infer<ReturnType<typeof orgInputRules>[K]> };

/** The organization's domain: its name as a DNS label under the instance domain. */
export function orgDomain(name: string, instanceDomain: string): string {
  const label =
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'org';
  return `${label}.${instanceDomain}`;
}

export async function createOrg(ctx: CommandContext, orgId: string, name: string, options: WriteOptions = {}) {
  const domain = orgDomain(name, ctx.deps.config.instanceDomain);
  return write(
    ctx,
    'org',
    orgId,
    (current) => {
      if (current) throw failedPrecondition(`Organization ${orgId} exists`);
      return {
        ...orgEvent.added(name.trim(), domain),
        resourceOwner: orgId,
        claims: [`orgDomain:${domain}`, `orgName:${name.trim().toLowerCase()}`],
      };
    },
    options,
  );
}

export const addOrganization = command(
  (c) => orgInputRules(c).addOrganization,
  async function addOrganization(ctx, input: OrgInputs['addOrganization']) {
    const caller = await authenticate(ctx, { instance: [INSTANCE_ID] });
    await requireInstance(ctx, caller, 'org.create');
    const orgId = ctx.deps.newId();
    const { snapshot } = await createOrg(ctx, orgId, input.name, { isNew: true });
    return { orgId, details: detailsOf(snapshot, true) };
  },
);

/**
 * Notes on the user, before the grant, that it holds roles in the organization:
 * the escalation check (access.ts requireMayChange) finds its roles from there.
 */
async function recordMembership(ctx: CommandContext, user: Snapshot<User>, orgId: string): Promise<void> {
  if (user.state.memberOf?.includes(orgId)) return;
  await write(ctx, 'user', user.id, (current) => {
    if (!current) throw notFound('User');
    return { ...userEvent.memberOfRecorded(orgId), resourceOwner: current.resourceOwner };
  });
}

export const addOrgMember = command(
  (c) => orgInputRules(c).addOrgMember,
  async function addOrgMember(ctx, input: OrgInputs['addOrgMember']): Promise<Details> {
    const caller = await authenticate(ctx, { ...permissionReads(ctx), user: [input.userId] });
    const org = await actingOrg(ctx, caller);
    await requireIn(ctx, caller, org, 'org.member.write');
    const user = await load<User>(ctx, 'user', input.userId);
    // Another organization's user only from an instance administrator: roles held here shut
    // that user's own administrators out of changing it (requireMayChange), which one
    // organization must not do to another. NOT_FOUND, as for an unknown id.
    if (!user || (user.resourceOwner !== org.id && !(await canInstance(ctx, caller, 'org.member.write')))) throw notFound('User');
    const roles = [...new Set(input.roles)].sort();
    if (roles.length === 0) throw invalidArgument([{ field: 'input.roles', description: 'give at least one role' }]);
    const held = rolesOf(org.state, input.userId);
    if (roles.every((r) => held.includes(r))) throw failedPrecondition('The user already holds these roles');
    await recordMembership(ctx, user, org.id);
    const { snapshot } = await write(ctx, 'org', org.id, (current) => {
      if (!current) throw notFound('Organization');
      const held = rolesOf(current.state, input.userId);
      const merged = [...new Set([...held, ...roles])].sort();
      if (merged.length === held.length) throw failedPrecondition('The user already holds these roles');
      return { ...orgEvent.memberAdded(input.userId, merged), resourceOwner: org.id };
    });
    return detailsOf(snapshot, true);
  },
);
