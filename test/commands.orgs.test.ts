// Command tests of organizations and the instance (issue 12 step 1):
// addOrganization, addOrgMember, bootstrap and instanceAdminId.
import { describe, expect, it } from 'vitest';
import { bootstrap, instanceAdminId } from '../src/commands/bootstrap.ts';
import { addOrganization, addOrgMember } from '../src/commands/orgs.ts';
import { INSTANCE_ID, instanceEvents, orgEvents } from '../src/model/orgs.ts';
import { userEvents } from '../src/model/users.ts';
import {
  ADMIN,
  BOSS,
  bossWorld,
  chars,
  commandTable,
  DEFAULT_ORG,
  event,
  expectEvents,
  facts,
  given,
  ORG_A,
  ORG_B,
  U,
  unauthenticatedRows,
  world,
  type Fact,
  type Then,
} from './support/given.ts';

describe('addOrganization', () => {
  const added = (name: string, domain: string): Then<any> => ({
    events: [event('org', 'id-1', orgEvents.added, { name, domain }, 'id-1')],
    details: true,
    result: async (r, h) => {
      expect(r.orgId).toBe('id-1');
      expect(await h.store.lookup(`orgDomain:${domain}`)).toEqual({ aggregateType: 'org', aggregateId: 'id-1' });
      expect(await h.store.lookup(`orgName:${name.toLowerCase()}`)).toEqual({ aggregateType: 'org', aggregateId: 'id-1' });
    },
  });
  const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };
  commandTable<any>(addOrganization, [
    {
      name: 'IAM_OWNER adds an organization; its domain is its name under the instance domain',
      caller: ADMIN,
      input: { name: 'Gamma' },
      then: added('Gamma', 'gamma.localhost'),
    },
    {
      name: 'an IAM_OWNER living in another org',
      given: bossWorld,
      caller: BOSS,
      input: { name: 'Gamma' },
      then: added('Gamma', 'gamma.localhost'),
    },
    {
      name: 'the name trimmed; accents and symbols folded in the domain',
      caller: ADMIN,
      input: { name: '  Zürich & Co. AG ' },
      then: added('Zürich & Co. AG', 'zurich-co-ag.localhost'),
    },
    {
      name: 'a name of 200: the domain label cut to 63',
      caller: ADMIN,
      input: { name: chars(200, 'g') },
      then: added(chars(200, 'g'), `${chars(63, 'g')}.localhost`),
    },
    { name: 'a name without letters or digits: domain "org"', caller: ADMIN, input: { name: '!!!' }, then: added('!!!', 'org.localhost') },
    {
      name: 'x-service-orgid plays no part',
      caller: ADMIN,
      orgHeader: ORG_A,
      input: { name: 'Gamma' },
      then: added('Gamma', 'gamma.localhost'),
    },
    {
      name: 'a name taken, another case: ALREADY_EXISTS',
      caller: ADMIN,
      input: { name: 'ACME' },
      then: { error: { code: 'ALREADY_EXISTS', message: /already exists/ } },
    },
    {
      name: 'another name with the same domain: ALREADY_EXISTS',
      caller: ADMIN,
      input: { name: 'Acme!' },
      then: { error: { code: 'ALREADY_EXISTS', message: /orgDomain/ } },
    },
    {
      name: 'two names without letters share the domain "org": the second is ALREADY_EXISTS',
      given: [...world, facts.org('org-q', '???')],
      caller: ADMIN,
      input: { name: '!!!' },
      then: { error: { code: 'ALREADY_EXISTS', message: /orgDomain/ } },
    },
    {
      name: 'a name of 201: INVALID_ARGUMENT',
      caller: ADMIN,
      input: { name: chars(201) },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'], message: /at most 200/ } },
    },
    {
      name: 'a blank name: INVALID_ARGUMENT',
      caller: ADMIN,
      input: { name: ' ' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    {
      name: 'a name with a control character: INVALID_ARGUMENT',
      caller: ADMIN,
      input: { name: 'Ga\u0007mma' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    {
      name: 'a name that is no string: INVALID_ARGUMENT',
      caller: ADMIN,
      input: { name: 42 },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    { name: 'ORG_OWNER: PERMISSION_DENIED (an instance permission)', caller: U.ownerA, input: { name: 'Gamma' }, then: denied },
    {
      name: 'ORG_OWNER with x-service-orgid of its org: PERMISSION_DENIED',
      caller: U.ownerA,
      orgHeader: ORG_A,
      input: { name: 'Gamma' },
      then: denied,
    },
    { name: 'ORG_USER_MANAGER: PERMISSION_DENIED', caller: U.managerA, input: { name: 'Gamma' }, then: denied },
    { name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: { name: 'Gamma' }, then: denied },
    {
      name: 'permission before uniqueness: a taken name is PERMISSION_DENIED for an ORG_OWNER',
      caller: U.ownerA,
      input: { name: 'Acme' },
      then: denied,
    },
    ...unauthenticatedRows<any>({ name: 'Gamma' }),
  ]);
});

describe('addOrgMember', () => {
  const grantEvents = (orgId: string, userId: string, roles: string[], userOwner?: string) => [
    event('org', orgId, orgEvents.memberAdded, { userId, roles }, orgId),
    ...(userOwner ? [event('user', userId, userEvents.memberOfRecorded, { orgId }, userOwner)] : []),
  ];
  const granted = (orgId: string, userId: string, roles: string[], userOwner?: string): Then<unknown> => ({
    events: grantEvents(orgId, userId, roles, userOwner),
    details: true,
  });
  const input = (userId: string, roles: unknown = ['ORG_USER_MANAGER']) => ({ userId, roles });
  const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };
  const aliceManager: Fact[] = [...world, ...facts.member(ORG_A, U.alice, ['ORG_USER_MANAGER'])];
  commandTable(addOrgMember, [
    {
      name: 'ORG_OWNER grants a role in its org: the membership noted on the user, then the grant',
      caller: U.ownerA,
      input: input(U.alice),
      then: granted(ORG_A, U.alice, ['ORG_USER_MANAGER'], ORG_A),
    },
    {
      name: 'several roles, duplicates dropped, sorted',
      caller: U.ownerA,
      input: input(U.alice, ['ORG_SETTINGS_MANAGER', 'ORG_OWNER', 'ORG_OWNER']),
      then: granted(ORG_A, U.alice, ['ORG_OWNER', 'ORG_SETTINGS_MANAGER'], ORG_A),
    },
    {
      name: 'a new role is merged with the held ones; the membership is not noted twice',
      given: aliceManager,
      caller: U.ownerA,
      input: input(U.alice, ['ORG_PROJECT_CREATOR']),
      then: granted(ORG_A, U.alice, ['ORG_PROJECT_CREATOR', 'ORG_USER_MANAGER']),
    },
    {
      name: 'roles all held already: FAILED_PRECONDITION',
      given: aliceManager,
      caller: U.ownerA,
      input: input(U.alice),
      then: { error: { code: 'FAILED_PRECONDITION', message: /already holds/ } },
    },
    {
      name: 'held and new roles: merged',
      given: aliceManager,
      caller: U.ownerA,
      input: input(U.alice, ['ORG_USER_MANAGER', 'ORG_OWNER']),
      then: granted(ORG_A, U.alice, ['ORG_OWNER', 'ORG_USER_MANAGER']),
    },
    // Roles held in org-a would shut bob's own administrators (org-b) out of changing him.
    {
      name: 'a user of another org: NOT_FOUND for an ORG_OWNER, as for an unknown id',
      caller: U.ownerA,
      input: input(U.bob),
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    {
      name: 'a user of another org: IAM_OWNER may grant it roles here',
      caller: ADMIN,
      orgHeader: ORG_A,
      input: input(U.bob),
      then: granted(ORG_A, U.bob, ['ORG_USER_MANAGER'], ORG_B),
    },
    {
      name: 'IAM_OWNER with x-service-orgid',
      caller: ADMIN,
      orgHeader: ORG_A,
      input: input(U.alice),
      then: granted(ORG_A, U.alice, ['ORG_USER_MANAGER'], ORG_A),
    },
    {
      name: 'IAM_OWNER without the header grants in its own (default) org',
      caller: ADMIN,
      input: input(U.alice),
      then: granted(DEFAULT_ORG, U.alice, ['ORG_USER_MANAGER'], ORG_A),
    },
    {
      name: 'ORG_OWNER of another org with x-service-orgid of that org, on a user of its own',
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: input(U.bob),
      then: granted(ORG_B, U.bob, ['ORG_USER_MANAGER'], ORG_B),
    },
    {
      name: 'ORG_OWNER of another org with x-service-orgid of that org, on a user of org-a: NOT_FOUND',
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: input(U.alice),
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    {
      name: 'ORG_OWNER may grant ORG_OWNER',
      caller: U.ownerA,
      input: input(U.alice, ['ORG_OWNER']),
      then: granted(ORG_A, U.alice, ['ORG_OWNER'], ORG_A),
    },
    { name: 'ORG_USER_MANAGER lacks org.member.write: PERMISSION_DENIED', caller: U.managerA, input: input(U.alice), then: denied },
    {
      name: 'ORG_USER_MANAGER cannot grant itself more: PERMISSION_DENIED',
      caller: U.managerA,
      input: input(U.managerA, ['ORG_OWNER']),
      then: denied,
    },
    { name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: input(U.alice), then: denied },
    { name: 'a role in another org only: PERMISSION_DENIED in its own', caller: U.helperB, input: input(U.alice), then: denied },
    {
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.ownerA,
      orgHeader: ORG_B,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'an unknown user: NOT_FOUND',
      caller: U.ownerA,
      input: input('ghost'),
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    { name: 'permission before the user is looked up', caller: U.alice, input: input('ghost'), then: denied },
    {
      name: 'an instance role: INVALID_ARGUMENT (not an organization role)',
      caller: ADMIN,
      orgHeader: ORG_A,
      input: input(U.alice, ['IAM_OWNER']),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.roles.0'], message: /not an organization role/ } },
    },
    {
      name: 'unknown roles: INVALID_ARGUMENT for each',
      caller: U.ownerA,
      input: input(U.alice, ['ORG_OWNER', 'NOPE', 'org_owner']),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.roles.1', 'input.roles.2'] } },
    },
    {
      name: 'no roles: INVALID_ARGUMENT',
      caller: U.ownerA,
      input: input(U.alice, []),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.roles'], message: /at least one/ } },
    },
    {
      name: 'roles not a list: INVALID_ARGUMENT',
      caller: U.ownerA,
      input: input(U.alice, 'ORG_OWNER'),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.roles'] } },
    },
    {
      name: 'a blank userId, a userId of 201: INVALID_ARGUMENT',
      caller: U.ownerA,
      input: { userId: chars(201), roles: ['X'] },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.roles.0', 'input.userId'] } },
    },
    {
      name: 'a userId of 200 that does not exist: NOT_FOUND',
      caller: U.ownerA,
      input: input(chars(200)),
      then: { error: { code: 'NOT_FOUND' } },
    },
    {
      name: 'a blank userId: INVALID_ARGUMENT',
      caller: U.ownerA,
      input: input(' '),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    ...unauthenticatedRows(input(U.alice)),
  ]);

  it('a granted role takes effect: the new ORG_USER_MANAGER may change users of the org', async () => {
    const h = await given(world);
    expectEvents(
      await h.when((ctx) => addOrgMember(ctx, input(U.alice)), { caller: U.ownerA }),
      grantEvents(ORG_A, U.alice, ['ORG_USER_MANAGER'], ORG_A),
    );
    const { updateHumanProfile } = await import('../src/commands/users.ts');
    const outcome = await h.when((ctx) => updateHumanProfile(ctx, { userId: U.peerA, firstName: 'P', lastName: 'Q' }), { caller: U.alice });
    expect(outcome.ok).toBe(true);
    expect(outcome.events.map((e) => [e.aggregateId, e.type])).toEqual([[U.peerA, userEvents.profileChanged]]);
  });
});

describe('bootstrap', () => {
  const adminPayload = {
    username: 'admin',
    profile: {
      firstName: 'Instance',
      lastName: 'Administrator',
      nickName: null,
      displayName: 'Administrator',
      preferredLanguage: 'en',
      gender: 'GENDER_UNSPECIFIED',
    },
    email: { email: 'admin@localhost', isVerified: true },
    phone: null,
    passwordHash: null,
    passwordChangeRequired: false,
    metadata: [],
    idpLinks: [],
    u2fTokens: [],
  };
  const run = (h: Awaited<ReturnType<typeof given>>) => h.when((ctx) => bootstrap(ctx));

  it('on an empty store: the instance (admin IAM_OWNER), the default org, the admin user, written by system', async () => {
    const h = await given([]);
    const r = expectEvents(await run(h), [
      event('instance', INSTANCE_ID, instanceEvents.setUp, { adminUserId: 'id-1', defaultOrgId: 'id-2' }, INSTANCE_ID),
      event('org', 'id-2', orgEvents.added, { name: 'Default', domain: 'default.localhost' }, 'id-2'),
      event('user', 'id-1', userEvents.added, adminPayload, 'id-2'),
    ]);
    expect(r).toEqual({ adminUserId: 'id-1', defaultOrgId: 'id-2', created: true });
    expect(await h.store.lookup('username:admin')).toEqual({ aggregateType: 'user', aggregateId: 'id-1' });
    expect(await instanceAdminId(h.ctx())).toBe('id-1');
  });

  it('a second start writes nothing and answers the same ids', async () => {
    const h = await given([]);
    await run(h);
    const again = await run(h);
    expect(expectEvents(again, [])).toEqual({ adminUserId: 'id-1', defaultOrgId: 'id-2', created: false });
  });

  it('on the seeded world: nothing to do', async () => {
    const h = await given(world);
    expect(expectEvents(await run(h), [])).toEqual({ adminUserId: ADMIN, defaultOrgId: DEFAULT_ORG, created: false });
  });

  it('after a crash behind the instance event: the org and the admin are completed', async () => {
    const h = await given([facts.instance('a1', 'o1')]);
    const r = expectEvents(await run(h), [
      event('org', 'o1', orgEvents.added, { name: 'Default', domain: 'default.localhost' }, 'o1'),
      event('user', 'a1', userEvents.added, adminPayload, 'o1'),
    ]);
    expect(r).toEqual({ adminUserId: 'a1', defaultOrgId: 'o1', created: false });
  });

  it('after a crash behind the org: only the admin is completed', async () => {
    const h = await given([facts.instance('a1', 'o1'), facts.org('o1', 'Default')]);
    expectEvents(await run(h), [event('user', 'a1', userEvents.added, adminPayload, 'o1')]);
  });

  // In one process on the SQLite store the losers of the instance append get
  // ConcurrencyError while the winner's event still waits for its commit; their
  // catch-up waits for that commit (src/store/sqlite-reads.ts), so they answer the
  // winner's ids (they once threw a TypeError reading the state of null).
  it('concurrent bootstraps in one process: one set of events, every call answers the same instance', async () => {
    const h = await given([]);
    const outcome = await h.when(async (ctx) =>
      Promise.all([bootstrap(ctx), bootstrap(ctx), bootstrap(ctx), bootstrap(ctx), bootstrap(ctx)]),
    );
    const results = expectEvents(outcome, [
      event('instance', INSTANCE_ID, instanceEvents.setUp, { adminUserId: 'id-1', defaultOrgId: 'id-2' }, INSTANCE_ID),
      event('org', 'id-2', orgEvents.added, { name: 'Default', domain: 'default.localhost' }, 'id-2'),
      event('user', 'id-1', userEvents.added, adminPayload, 'id-2'),
    ]);
    expect(results[0]).toEqual({ adminUserId: 'id-1', defaultOrgId: 'id-2', created: true });
    for (const other of results.slice(1)) expect(other).toEqual({ adminUserId: 'id-1', defaultOrgId: 'id-2', created: false });
    expect(await instanceAdminId(h.ctx())).toBe('id-1');
    expect(await h.store.lookup('username:admin')).toEqual({ aggregateType: 'user', aggregateId: 'id-1' });
  });

  it('instanceAdminId: null before the instance is set up, the first administrator after', async () => {
    const empty = await given([]);
    expect(await instanceAdminId(empty.ctx())).toBeNull();
    const h = await given(world);
    expect(await instanceAdminId(h.ctx())).toBe(ADMIN);
    const boss = await given(bossWorld);
    expect(await instanceAdminId(boss.ctx())).toBe(BOSS);
  });
});
