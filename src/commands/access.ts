// Who may do what, where (docs/authentication.md).
import { covers, hasPermission, type Grants, type Permission } from '../auth/permissions.ts';
import { notFound, permissionDenied, unauthenticated } from '../errors.ts';
import { INSTANCE_ID, rolesOf, type Instance, type Org } from '../model/orgs.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { load, loadMany, orgHint, prefetch, type CommandContext, type Wanted } from './context.ts';

export interface Caller {
  id: string;
  user: Snapshot<User>;
}

/**
 * The caller, from the token and its user. `wanted` names what the operation will
 * read next that does not depend on the caller's user: it is read in the same
 * round trip (see context.ts), and decided on only after the caller is known.
 */
export async function authenticate(ctx: CommandContext, wanted: Wanted = {}): Promise<Caller> {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.callerId) throw unauthenticated();
  await prefetch(ctx, { ...wanted, user: [ctx.callerId, ...(wanted.user ?? [])] });
  const user = await load<User>(ctx, 'user', ctx.callerId);
  if (!user) throw unauthenticated('The token names no known user');
  return { id: ctx.callerId, user };
}

/**
 * What a permission check in the acting organization reads: that organization
 * (`explicit`, else the x-service-orgid header, else the caller's own, known
 * from the hint when this process has seen the caller) and the instance roles.
 */
export function permissionReads(ctx: CommandContext, explicit?: string | null): Wanted {
  return { org: [explicit ?? ctx.orgHeader ?? orgHint(ctx, ctx.callerId)], instance: [INSTANCE_ID] };
}

/**
 * What userForSelfOrPermission reads for a user found anywhere: the user, and,
 * when it is not the caller, its organization (the hint, else the caller's,
 * the likely one) and the instance roles.
 */
export function userReads(ctx: CommandContext, userId: string): Wanted {
  if (userId === ctx.callerId) return {};
  return { user: [userId], org: [orgHint(ctx, userId) ?? orgHint(ctx, ctx.callerId)], instance: [INSTANCE_ID] };
}

async function instanceRoles(ctx: CommandContext, userId: string): Promise<string[]> {
  const instance = await load<Instance>(ctx, 'instance', INSTANCE_ID);
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
  const org = await load<Org>(ctx, 'org', orgId);
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

export interface Reader {
  instanceRole: boolean;
  /** Any role in the organization, or an instance role (mayRead). */
  mayRead(org: Snapshot<Org>): boolean;
  /** A permission in the organization, or from the instance roles (can). */
  may(org: Snapshot<Org>, permission: Permission): boolean;
}

/** mayRead and can for many organizations with one instance lookup. */
export async function readerFor(ctx: CommandContext, caller: Caller): Promise<Reader> {
  const held = await instanceRoles(ctx, caller.id);
  const instanceRole = held.length > 0;
  return {
    instanceRole,
    mayRead: (org) => instanceRole || rolesOf(org.state, caller.id).length > 0,
    may: (org, permission) => hasPermission({ instanceRoles: held, orgRoles: rolesOf(org.state, caller.id) }, permission),
  };
}

/**
 * Whether the caller holds `permission` anywhere: from an instance role, or in one of the
 * organizations where it holds roles (its user's memberOf, recorded before every grant; read
 * in one round trip, none when they were read already). The first refusal (docs/authentication.md):
 * a caller holding the permission nowhere is PERMISSION_DENIED before any target is looked at.
 */
export async function holdsAnywhere(ctx: CommandContext, caller: Caller, permission: Permission): Promise<boolean> {
  if (await canInstance(ctx, caller, permission)) return true;
  const orgIds = caller.user.state.memberOf ?? [];
  if (orgIds.length === 0) return false;
  const orgs = await loadMany<Org>(ctx, 'org', orgIds);
  return [...orgs.values()].some((org) => hasPermission({ instanceRoles: [], orgRoles: rolesOf(org.state, caller.id) }, permission));
}

export async function requireIn(ctx: CommandContext, caller: Caller, org: Snapshot<Org>, permission: Permission) {
  if (!(await can(ctx, caller, org, permission))) throw permissionDenied();
}

/** The permission from the caller's instance roles (IAM_OWNER), whatever the organization. */
export async function canInstance(ctx: CommandContext, caller: Caller, permission: Permission): Promise<boolean> {
  return hasPermission({ instanceRoles: await instanceRoles(ctx, caller.id), orgRoles: [] }, permission);
}

export async function requireInstance(ctx: CommandContext, caller: Caller, permission: Permission) {
  if (!(await canInstance(ctx, caller, permission))) throw permissionDenied();
}

/** A user of the acting organization; one of another organization is NOT_FOUND there. */
export async function userInOrg(ctx: CommandContext, org: Snapshot<Org>, userId: string): Promise<Snapshot<User>> {
  const user = await load<User>(ctx, 'user', userId);
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
    load<Instance>(ctx, 'instance', INSTANCE_ID),
    orgIds.length > 0 ? loadMany<Org>(ctx, 'org', orgIds) : new Map<string, Snapshot<Org>>(),
  ]);
  const callerInstance = instance ? rolesOf(instance.state, caller.id) : [];
  const scopes: [Grants, Grants][] = [
    [
      { instanceRoles: callerInstance, orgRoles: [] },
      { instanceRoles: instance ? rolesOf(instance.state, target.id) : [], orgRoles: [] },
    ],
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
  const user = userId === caller.id ? caller.user : await load<User>(ctx, 'user', userId);
  if (!user) throw notFound('User');
  if (userId === caller.id) return { user, self: true };
  // Its organization and those where it holds roles (the escalation check): one read,
  // none when the first round trip guessed right.
  await prefetch(ctx, { org: [user.resourceOwner, ...(user.state.memberOf ?? [])] });
  const org = await load<Org>(ctx, 'org', user.resourceOwner);
  if (!org || !(await can(ctx, caller, org, permission))) throw permissionDenied();
  await requireMayChange(ctx, caller, user);
  return { user, self: false };
}
