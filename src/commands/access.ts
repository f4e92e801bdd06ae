// Who may do what, where (DESIGN.md section 6).
import { covers, hasPermission, type Grants, type Permission } from '../auth/permissions.ts';
import { notFound, permissionDenied, unauthenticated } from '../errors.ts';
import { INSTANCE_ID, rolesOf, type Instance, type Org } from '../model/orgs.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import type { CommandContext } from './context.ts';

export interface Caller {
  id: string;
  user: Snapshot<User>;
}

export async function authenticate(ctx: CommandContext): Promise<Caller> {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.callerId) throw unauthenticated();
  const user = await ctx.deps.store.load<User>('user', ctx.callerId);
  if (!user) throw unauthenticated('The token names no known user');
  return { id: ctx.callerId, user };
}

async function instanceRoles(ctx: CommandContext, userId: string): Promise<string[]> {
  const instance = await ctx.deps.store.load<Instance>('instance', INSTANCE_ID);
  return instance ? rolesOf(instance.state, userId) : [];
}

async function grantsIn(ctx: CommandContext, userId: string, org: Snapshot<Org>) {
  return { instanceRoles: await instanceRoles(ctx, userId), orgRoles: rolesOf(org.state, userId) };
}

/**
 * The organization an org-scoped operation acts in: `explicit` (addHumanUser's
 * organisation), else the x-service-orgid header, else the caller's own. One
 * that does not exist is PERMISSION_DENIED, so ids cannot be probed.
 */
export async function actingOrg(ctx: CommandContext, caller: Caller, explicit?: string | null): Promise<Snapshot<Org>> {
  const orgId = explicit ?? ctx.orgHeader ?? caller.user.resourceOwner;
  const org = await ctx.deps.store.load<Org>('org', orgId);
  if (!org) throw permissionDenied();
  return org;
}

export async function can(ctx: CommandContext, caller: Caller, org: Snapshot<Org>, permission: Permission) {
  return hasPermission(await grantsIn(ctx, caller.id, org), permission);
}

/** Any role in the organization, or an instance role: enough to read there. */
export async function mayRead(ctx: CommandContext, caller: Caller, org: Snapshot<Org>): Promise<boolean> {
  const grants = await grantsIn(ctx, caller.id, org);
  return grants.instanceRoles.length > 0 || grants.orgRoles.length > 0;
}

/**
 * mayRead for many organizations with one instance lookup: a predicate telling
 * whether the caller holds any role in an organization, or an instance role.
 */
export async function readerFor(ctx: CommandContext, caller: Caller): Promise<{ instanceRole: boolean; mayRead(org: Snapshot<Org>): boolean }> {
  const instanceRole = (await instanceRoles(ctx, caller.id)).length > 0;
  return { instanceRole, mayRead: (org) => instanceRole || rolesOf(org.state, caller.id).length > 0 };
}

export async function requireIn(ctx: CommandContext, caller: Caller, org: Snapshot<Org>, permission: Permission) {
  if (!(await can(ctx, caller, org, permission))) throw permissionDenied();
}

export async function requireInstance(ctx: CommandContext, caller: Caller, permission: Permission) {
  if (!hasPermission({ instanceRoles: await instanceRoles(ctx, caller.id), orgRoles: [] }, permission)) {
    throw permissionDenied();
  }
}

/** A user of the acting organization; one of another organization is NOT_FOUND there. */
export async function userInOrg(ctx: CommandContext, org: Snapshot<Org>, userId: string): Promise<Snapshot<User>> {
  const user = await ctx.deps.store.load<User>('user', userId);
  if (!user || user.resourceOwner !== org.id) throw notFound('User');
  return user;
}

/**
 * No escalation through another account: changing another user needs every
 * permission that user holds, for the instance and in each organization where
 * it holds roles (an ORG_USER_MANAGER cannot take over an IAM_OWNER or an
 * ORG_OWNER by setting their password, email or phone). PERMISSION_DENIED.
 */
export async function requireMayChange(ctx: CommandContext, caller: Caller, target: Snapshot<User>): Promise<void> {
  if (target.id === caller.id) return;
  const orgIds = target.state.memberOf ?? [];
  const [instance, orgs] = await Promise.all([
    ctx.deps.store.load<Instance>('instance', INSTANCE_ID),
    orgIds.length > 0 ? ctx.deps.store.loadMany<Org>('org', orgIds) : new Map<string, Snapshot<Org>>(),
  ]);
  const callerInstance = instance ? rolesOf(instance.state, caller.id) : [];
  const scopes: [Grants, Grants][] = [
    [{ instanceRoles: callerInstance, orgRoles: [] }, { instanceRoles: instance ? rolesOf(instance.state, target.id) : [], orgRoles: [] }],
    ...[...orgs.values()].map((org): [Grants, Grants] => [
      { instanceRoles: callerInstance, orgRoles: rolesOf(org.state, caller.id) },
      { instanceRoles: [], orgRoles: rolesOf(org.state, target.id) },
    ]),
  ];
  if (!scopes.every(([mine, theirs]) => covers(mine, theirs))) throw permissionDenied('The user holds roles you do not hold');
}

/**
 * For operations that find the user anywhere (setEmail, verify*, U2F): the user
 * itself, or the permission in the user's own organization.
 */
export async function userForSelfOrPermission(
  ctx: CommandContext,
  caller: Caller,
  userId: string,
  permission: Permission,
): Promise<{ user: Snapshot<User>; self: boolean }> {
  const user = userId === caller.id ? caller.user : await ctx.deps.store.load<User>('user', userId);
  if (!user) throw notFound('User');
  if (userId === caller.id) return { user, self: true };
  const org = await ctx.deps.store.load<Org>('org', user.resourceOwner);
  if (!org || !(await can(ctx, caller, org, permission))) throw permissionDenied();
  await requireMayChange(ctx, caller, user);
  return { user, self: false };
}
