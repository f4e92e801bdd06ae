// The role table of docs/authentication.md, as data.
import { permissionDenied } from '../errors.ts';

export const permissions = [
  'user.read',
  'user.write',
  'user.credential.write',
  'org.idp.write',
  'project.write',
  'project.app.write',
  'org.member.write',
  'org.create',
] as const;
export type Permission = (typeof permissions)[number];

export const instanceRoles = ['IAM_OWNER'] as const;
export type InstanceRole = (typeof instanceRoles)[number];

export const orgRoles = ['ORG_OWNER', 'ORG_USER_MANAGER', 'ORG_USER_VIEWER', 'ORG_SETTINGS_MANAGER', 'ORG_PROJECT_CREATOR'] as const;
export type OrgRole = (typeof orgRoles)[number];

const rolePermissions: Record<InstanceRole | OrgRole, readonly Permission[]> = {
  IAM_OWNER: permissions,
  ORG_OWNER: [
    'user.read',
    'user.write',
    'user.credential.write',
    'org.idp.write',
    'project.write',
    'project.app.write',
    'org.member.write',
  ],
  ORG_USER_MANAGER: ['user.read', 'user.write'],
  // Reads users (search, history) and changes nothing: for support desks and consoles.
  ORG_USER_VIEWER: ['user.read'],
  ORG_SETTINGS_MANAGER: ['org.idp.write'],
  ORG_PROJECT_CREATOR: ['project.write', 'project.app.write'],
};

export const isOrgRole = (name: string): name is OrgRole => (orgRoles as readonly string[]).includes(name);
export const isInstanceRole = (name: string): name is InstanceRole => (instanceRoles as readonly string[]).includes(name);

/** The union of the roles' permissions; unknown role names grant nothing. */
export function permissionsOf(roles: readonly string[]): Set<Permission> {
  const out = new Set<Permission>();
  for (const role of roles) {
    if (isOrgRole(role) || isInstanceRole(role)) for (const p of rolePermissions[role]) out.add(p);
  }
  return out;
}

export interface Grants {
  /** Roles held for the whole instance. */
  instanceRoles: readonly string[];
  /** Roles held in the target organization. */
  orgRoles: readonly string[];
}

export function hasPermission(grants: Grants, permission: Permission): boolean {
  // Each list only counts roles of its own kind: an org role never leaks instance-wide.
  if (permissionsOf(grants.instanceRoles.filter(isInstanceRole)).has(permission)) return true;
  return permissionsOf(grants.orgRoles.filter(isOrgRole)).has(permission);
}

export function requirePermission(grants: Grants, permission: Permission, message?: string): void {
  if (!hasPermission(grants, permission)) throw permissionDenied(message);
}

/**
 * No escalation through another account (docs/authentication.md): the caller may
 * change a user only while it holds, in that scope, every permission the user's
 * roles there grant. `caller` and `target` are the grants in one scope: the
 * instance (orgRoles empty) or one organization.
 */
export function covers(caller: Grants, target: Grants): boolean {
  const held = new Set([
    ...permissionsOf(caller.instanceRoles.filter(isInstanceRole)),
    ...permissionsOf(caller.orgRoles.filter(isOrgRole)),
  ]);
  const needed = [...permissionsOf(target.instanceRoles.filter(isInstanceRole)), ...permissionsOf(target.orgRoles.filter(isOrgRole))];
  return needed.every((p) => held.has(p));
}
