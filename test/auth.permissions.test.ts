import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.ts';
import { covers, hasPermission, isOrgRole, orgRoles, permissionsOf, requirePermission, type Permission } from '../src/auth/permissions.ts';

// Written out from DESIGN.md section 6, independently of the code's table, with issue 13's
// user.read (ORG_OWNER, ORG_USER_MANAGER, and ORG_USER_VIEWER that reads and writes nothing).
const all: Permission[] = [
  'user.read',
  'user.write',
  'user.credential.write',
  'org.idp.write',
  'project.write',
  'project.app.write',
  'org.member.write',
  'org.create',
];
const expected: Record<string, Permission[]> = {
  IAM_OWNER: all,
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
  ORG_USER_VIEWER: ['user.read'],
  ORG_SETTINGS_MANAGER: ['org.idp.write'],
  ORG_PROJECT_CREATOR: ['project.write', 'project.app.write'],
};

describe('role table', () => {
  it.each(Object.entries(expected))('%s grants exactly its permissions', (role, perms) => {
    expect([...permissionsOf([role])].sort()).toEqual([...perms].sort());
  });

  it('knows the org roles', () => {
    expect([...orgRoles].sort()).toEqual(
      Object.keys(expected)
        .filter((r) => r !== 'IAM_OWNER')
        .sort(),
    );
    expect(isOrgRole('ORG_OWNER')).toBe(true);
    expect(isOrgRole('IAM_OWNER')).toBe(false);
    expect(isOrgRole('org_owner')).toBe(false);
  });

  it('unions several roles and ignores unknown names', () => {
    expect([...permissionsOf(['ORG_USER_MANAGER', 'ORG_SETTINGS_MANAGER'])].sort()).toEqual(['org.idp.write', 'user.read', 'user.write']);
    expect(permissionsOf(['NOPE', 'ORG_ADMIN', '']).size).toBe(0);
  });
});

describe('hasPermission', () => {
  const none = { instanceRoles: [], orgRoles: [] };

  it('IAM_OWNER has everything, org.create included, with no org roles', () => {
    for (const p of all) expect(hasPermission({ instanceRoles: ['IAM_OWNER'], orgRoles: [] }, p)).toBe(true);
  });

  it('org roles grant their set only', () => {
    const manager = { instanceRoles: [], orgRoles: ['ORG_USER_MANAGER'] };
    expect(hasPermission(manager, 'user.write')).toBe(true);
    expect(hasPermission(manager, 'org.idp.write')).toBe(false);
    const owner = { instanceRoles: [], orgRoles: ['ORG_OWNER'] };
    expect(hasPermission(owner, 'org.member.write')).toBe(true);
    expect(hasPermission(owner, 'org.create')).toBe(false);
  });

  it('unknown or misplaced role names grant nothing', () => {
    for (const p of all) {
      expect(hasPermission(none, p)).toBe(false);
      expect(hasPermission({ instanceRoles: ['ROOT'], orgRoles: ['ADMIN'] }, p)).toBe(false);
      expect(hasPermission({ instanceRoles: [], orgRoles: ['IAM_OWNER'] }, p)).toBe(false);
    }
    expect(hasPermission({ instanceRoles: ['ORG_OWNER'], orgRoles: [] }, 'user.write')).toBe(false);
  });

  it('requirePermission throws PERMISSION_DENIED', () => {
    expect(() => requirePermission({ instanceRoles: [], orgRoles: ['ORG_OWNER'] }, 'user.write')).not.toThrow();
    let err: unknown;
    try {
      requirePermission({ instanceRoles: [], orgRoles: ['ORG_PROJECT_CREATOR'] }, 'user.write');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('PERMISSION_DENIED');
  });
});

describe('covers: no escalation through another account', () => {
  const inOrg = (...orgRoles: string[]) => ({ instanceRoles: [], orgRoles });
  const instance = (...instanceRoles: string[]) => ({ instanceRoles, orgRoles: [] });
  it.each([
    ['IAM_OWNER', instance('IAM_OWNER'), instance('IAM_OWNER'), true],
    ['an org owner over IAM_OWNER', inOrg('ORG_OWNER'), instance('IAM_OWNER'), false],
    ['IAM_OWNER over an org owner', instance('IAM_OWNER'), inOrg('ORG_OWNER'), true],
    ['a user manager over an owner', inOrg('ORG_USER_MANAGER'), inOrg('ORG_OWNER'), false],
    ['a user manager over a user manager', inOrg('ORG_USER_MANAGER'), inOrg('ORG_USER_MANAGER'), true],
    ['a user manager over a settings manager', inOrg('ORG_USER_MANAGER'), inOrg('ORG_SETTINGS_MANAGER'), false],
    ['an owner over several managers', inOrg('ORG_OWNER'), inOrg('ORG_SETTINGS_MANAGER', 'ORG_PROJECT_CREATOR', 'ORG_USER_MANAGER'), true],
    ['anyone over a user without roles', inOrg(), inOrg(), true],
    ['an org role does not count as an instance role', inOrg('ORG_OWNER', 'IAM_OWNER'), instance('IAM_OWNER'), false],
  ])('%s', (_label, caller, target, expected) => {
    expect(covers(caller, target)).toBe(expected);
  });
});
