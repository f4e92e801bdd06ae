// The read use cases the transports call (issue 12 step 1): me, user,
// organization, visibleMany (federation entities), identityProvider, project.
// They write nothing; each row pins what the caller gets to see.
import { describe, expect } from 'vitest';
import type { CommandContext } from '../src/commands/context.ts';
import { organization, visibleMany, type EntityKind } from '../src/commands/entities.ts';
import { identityProvider } from '../src/commands/idps.ts';
import { project } from '../src/commands/projects.ts';
import { me, readUser, user } from '../src/commands/reads.ts';
import type { Snapshot } from '../src/store/port.ts';
import {
  ADMIN,
  commandTable,
  facts,
  ORG_A,
  ORG_B,
  U,
  unauthenticatedRows,
  world,
  type Fact,
  type Row,
  type Then,
} from './support/given.ts';

/** The read answers the aggregate `id` (of `owner`), or null. */
const returns = (id: string | null, owner?: string): Then<Snapshot<unknown> | null> => ({
  events: [],
  result: (r) => {
    expect(r?.id ?? null).toBe(id);
    if (owner) expect(r?.resourceOwner).toBe(owner);
  },
});
const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };
const byId =
  <R>(read: (ctx: CommandContext, id: string) => Promise<R>) =>
  (ctx: CommandContext, id: unknown) =>
    read(ctx, id as string);

describe('me', () => {
  commandTable<Snapshot<unknown> | null>(
    byId((ctx) => me(ctx)),
    [
      { name: "the caller's own user", caller: U.alice, input: null, then: returns(U.alice, ORG_A) },
      { name: 'x-service-orgid plays no part', caller: U.bob, orgHeader: ORG_A, input: null, then: returns(U.bob, ORG_B) },
      ...unauthenticatedRows<Snapshot<unknown> | null>(null),
    ],
  );
});

describe('user', () => {
  commandTable(byId(user), [
    { name: 'the caller itself, without role', caller: U.alice, input: U.alice, then: returns(U.alice, ORG_A) },
    {
      name: 'the caller itself with x-service-orgid of its org',
      caller: U.alice,
      orgHeader: ORG_A,
      input: U.alice,
      then: returns(U.alice),
    },
    // DESIGN.md section 6, refusal 2: a header naming an organization where the caller holds no permission, before the target counts.
    {
      name: 'the caller itself with x-service-orgid of another org where it holds no role: PERMISSION_DENIED',
      caller: U.alice,
      orgHeader: ORG_B,
      input: U.alice,
      then: denied,
    },
    {
      name: 'the caller itself with x-service-orgid of another org where it reads users: null (not there)',
      caller: U.helperB,
      orgHeader: ORG_B,
      input: U.helperB,
      then: returns(null),
    },
    { name: 'ORG_USER_MANAGER reads a user of its org', caller: U.managerA, input: U.alice, then: returns(U.alice) },
    { name: 'ORG_OWNER reads a user of its org (user.read)', caller: U.ownerA, input: U.alice, then: returns(U.alice) },
    // Personal data needs user.read, as ZITADEL's GetUserByID: other roles reach no further than their permissions.
    { name: 'ORG_SETTINGS_MANAGER (no user.read): PERMISSION_DENIED', caller: U.settingsA, input: U.alice, then: denied },
    { name: 'ORG_PROJECT_CREATOR (no user.read): PERMISSION_DENIED', caller: U.creatorA, input: U.alice, then: denied },
    { name: 'a user without role reads a colleague: PERMISSION_DENIED', caller: U.alice, input: U.peerA, then: denied },
    // The same answer for an id of its org, an unknown one and one of another org: no probing which exist.
    {
      name: 'a user without role reads an unknown id: PERMISSION_DENIED, as for a colleague',
      caller: U.alice,
      input: 'ghost',
      then: denied,
    },
    {
      name: 'a user without role reads a user of another org: PERMISSION_DENIED, as for a colleague',
      caller: U.alice,
      input: U.bob,
      then: denied,
    },
    { name: "a user of another org, acting in the caller's: null", caller: U.managerA, input: U.bob, then: returns(null) },
    {
      name: 'an unknown id, for a caller holding user.read: null, as for a user of another org',
      caller: U.managerA,
      input: 'ghost',
      then: returns(null),
    },
    // Refusal 3: user.read elsewhere only, so nothing of the acting organization is readable: null, not PERMISSION_DENIED.
    {
      name: 'user.read in another org only, no header: a user of its own org is null',
      caller: U.helperB,
      input: U.alice,
      then: returns(null),
    },
    {
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.managerA,
      orgHeader: ORG_B,
      input: U.bob,
      then: denied,
    },
    {
      name: 'x-service-orgid of an org where the caller holds a role',
      caller: U.helperB,
      orgHeader: ORG_B,
      input: U.bob,
      then: returns(U.bob, ORG_B),
    },
    {
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: U.alice,
      orgHeader: 'org-nope',
      input: U.alice,
      then: denied,
    },
    { name: 'IAM_OWNER without the header: null for a user of another org', caller: ADMIN, input: U.alice, then: returns(null) },
    { name: 'IAM_OWNER with the header', caller: ADMIN, orgHeader: ORG_A, input: U.alice, then: returns(U.alice) },
    ...unauthenticatedRows<Snapshot<unknown> | null>(U.alice),
  ]);
});

// ZITADEL's v2 GetUserByID: the user wherever the caller may read it; a header narrows it, with
// the same refusals as the acting organization's read above.
describe('readUser anywhere (v2 GetUserByID)', () => {
  commandTable(
    byId((ctx, id) => readUser(ctx, id, 'anywhere')),
    [
      { name: 'the caller itself, without role', caller: U.alice, input: U.alice, then: returns(U.alice, ORG_A) },
      { name: 'ORG_USER_MANAGER reads a user of its org', caller: U.managerA, input: U.alice, then: returns(U.alice, ORG_A) },
      { name: 'user.read in another org: a user there, without the header', caller: U.helperB, input: U.bob, then: returns(U.bob, ORG_B) },
      { name: 'user.read in another org only: a user of its own org is null', caller: U.helperB, input: U.alice, then: returns(null) },
      {
        name: 'a user of an org where the caller reads no users: null, as an unknown id',
        caller: U.managerA,
        input: U.bob,
        then: returns(null),
      },
      { name: 'an unknown id: null', caller: U.managerA, input: 'ghost', then: returns(null) },
      { name: 'user.read nowhere: PERMISSION_DENIED for a colleague', caller: U.alice, input: U.peerA, then: denied },
      { name: 'user.read nowhere: PERMISSION_DENIED for an unknown id too', caller: U.settingsA, input: 'ghost', then: denied },
      { name: 'user.read nowhere: PERMISSION_DENIED for a user of another org too', caller: U.creatorA, input: U.bob, then: denied },
      {
        name: 'a header naming an org where the caller reads no users: PERMISSION_DENIED',
        caller: U.managerA,
        orgHeader: ORG_B,
        input: U.bob,
        then: denied,
      },
      {
        name: 'a header naming an org that does not exist: PERMISSION_DENIED, even for IAM_OWNER',
        caller: ADMIN,
        orgHeader: 'org-nope',
        input: U.alice,
        then: denied,
      },
      { name: 'a header narrows: a user of another org is null', caller: U.helperB, orgHeader: ORG_B, input: U.alice, then: returns(null) },
      { name: 'IAM_OWNER reads a user of any org', caller: ADMIN, input: U.bob, then: returns(U.bob, ORG_B) },
      ...unauthenticatedRows<Snapshot<unknown> | null>(U.alice),
    ],
  );
});

describe('organization', () => {
  commandTable(byId(organization), [
    { name: "the caller's own org, without role", caller: U.alice, input: ORG_A, then: returns(ORG_A) },
    { name: 'an org where the caller holds a role', caller: U.helperB, input: ORG_B, then: returns(ORG_B) },
    { name: 'another org: PERMISSION_DENIED', caller: U.alice, input: ORG_B, then: denied },
    { name: 'an unknown org, without instance role: PERMISSION_DENIED (no probing)', caller: U.ownerA, input: 'org-nope', then: denied },
    { name: 'IAM_OWNER: any org', caller: ADMIN, input: ORG_B, then: returns(ORG_B) },
    { name: 'IAM_OWNER: an unknown org is null', caller: ADMIN, input: 'org-nope', then: returns(null) },
    ...unauthenticatedRows<Snapshot<unknown> | null>(ORG_A),
  ]);
});

describe('visibleMany (federation entities)', () => {
  const seeded: Fact[] = [
    ...world,
    facts.project('p-1', ORG_A),
    facts.project('p-b', ORG_B),
    facts.idp('idp-1', ORG_A),
    facts.idp('idp-b', ORG_B),
  ];
  const many = (ctx: CommandContext, input: unknown) => {
    const { kind, ids } = input as { kind: EntityKind; ids: string[] };
    return visibleMany(ctx, kind, ids);
  };
  const sees = (...ids: string[]): Then<Map<string, Snapshot<unknown>>> => ({
    events: [],
    result: (r) => expect([...r.keys()].sort()).toEqual([...ids].sort()),
  });
  const users = { kind: 'user', ids: [U.alice, U.bob, U.helperB, 'ghost'] };
  const row = (r: Omit<Row<Map<string, Snapshot<unknown>>>, 'given'>): Row<Map<string, Snapshot<unknown>>> => ({ given: seeded, ...r });
  commandTable(many, [
    row({
      name: 'users: the caller itself, and users of orgs where it holds user.read',
      caller: U.helperB,
      input: users,
      then: sees(U.bob, U.helperB),
    }),
    row({
      name: 'users: a role without user.read shows only the caller itself',
      caller: U.settingsA,
      input: { kind: 'user', ids: [U.alice, U.settingsA, U.bob] },
      then: sees(U.settingsA),
    }),
    row({
      name: 'users: ORG_PROJECT_CREATOR sees projects, not users',
      caller: U.creatorA,
      input: { kind: 'user', ids: [U.alice, U.creatorA] },
      then: sees(U.creatorA),
    }),
    row({ name: 'users: without role, only the caller itself', caller: U.alice, input: users, then: sees(U.alice) }),
    row({ name: 'users: IAM_OWNER sees all that exist', caller: ADMIN, input: users, then: sees(U.alice, U.bob, U.helperB) }),
    row({
      name: 'users: x-service-orgid keeps only what lives in that org',
      caller: ADMIN,
      orgHeader: ORG_B,
      input: users,
      then: sees(U.bob),
    }),
    row({ name: 'users: x-service-orgid lends no role', caller: U.managerA, orgHeader: ORG_B, input: users, then: sees() }),
    row({
      name: "orgs: the caller's own and those where it holds a role",
      caller: U.helperB,
      input: { kind: 'org', ids: [ORG_A, ORG_B, 'org-nope'] },
      then: sees(ORG_A, ORG_B),
    }),
    row({ name: 'orgs: without role, its own only', caller: U.alice, input: { kind: 'org', ids: [ORG_A, ORG_B] }, then: sees(ORG_A) }),
    row({
      name: 'orgs: x-service-orgid plays no part',
      caller: U.alice,
      orgHeader: ORG_B,
      input: { kind: 'org', ids: [ORG_A, ORG_B] },
      then: sees(ORG_A),
    }),
    row({
      name: 'projects: those of orgs where the caller holds a role',
      caller: U.creatorA,
      input: { kind: 'project', ids: ['p-1', 'p-b', 'p-nope'] },
      then: sees('p-1'),
    }),
    row({ name: 'projects: without role, none', caller: U.alice, input: { kind: 'project', ids: ['p-1', 'p-b'] }, then: sees() }),
    row({ name: 'idps: IAM_OWNER sees all', caller: ADMIN, input: { kind: 'idp', ids: ['idp-1', 'idp-b'] }, then: sees('idp-1', 'idp-b') }),
    row({ name: 'idps: any role in the org', caller: U.managerA, input: { kind: 'idp', ids: ['idp-1', 'idp-b'] }, then: sees('idp-1') }),
    ...unauthenticatedRows<Map<string, Snapshot<unknown>>>(users, seeded),
  ]);
});

describe('identityProvider', () => {
  const seeded: Fact[] = [...world, facts.idp('idp-1', ORG_A), facts.idp('idp-b', ORG_B)];
  const row = (r: Omit<Row<Snapshot<unknown> | null>, 'given'>): Row<Snapshot<unknown> | null> => ({ given: seeded, ...r });
  commandTable(byId(identityProvider), [
    row({ name: 'ORG_SETTINGS_MANAGER reads an IDP of its org', caller: U.settingsA, input: 'idp-1', then: returns('idp-1', ORG_A) }),
    row({ name: 'any role in the org is enough', caller: U.managerA, input: 'idp-1', then: returns('idp-1') }),
    row({ name: 'an IDP of another org: null', caller: U.settingsA, input: 'idp-b', then: returns(null) }),
    row({ name: 'an unknown IDP: null', caller: U.settingsA, input: 'idp-nope', then: returns(null) }),
    row({ name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: 'idp-1', then: denied }),
    row({
      name: 'a user without role, unknown IDP: PERMISSION_DENIED before the lookup',
      caller: U.alice,
      input: 'idp-nope',
      then: denied,
    }),
    row({ name: 'IAM_OWNER without the header: null for an IDP of another org', caller: ADMIN, input: 'idp-1', then: returns(null) }),
    row({ name: 'IAM_OWNER with the header', caller: ADMIN, orgHeader: ORG_A, input: 'idp-1', then: returns('idp-1') }),
    row({
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.settingsA,
      orgHeader: ORG_B,
      input: 'idp-b',
      then: denied,
    }),
    row({
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: 'idp-1',
      then: denied,
    }),
    ...unauthenticatedRows<Snapshot<unknown> | null>('idp-1', seeded),
  ]);
});

describe('project', () => {
  const seeded: Fact[] = [...world, facts.project('p-1', ORG_A), facts.project('p-b', ORG_B)];
  const row = (r: Omit<Row<Snapshot<unknown> | null>, 'given'>): Row<Snapshot<unknown> | null> => ({ given: seeded, ...r });
  commandTable(byId(project), [
    row({ name: 'ORG_PROJECT_CREATOR reads a project of its org', caller: U.creatorA, input: 'p-1', then: returns('p-1', ORG_A) }),
    row({ name: 'any role in the org is enough', caller: U.managerA, input: 'p-1', then: returns('p-1') }),
    row({ name: 'a project of another org: null', caller: U.creatorA, input: 'p-b', then: returns(null) }),
    row({ name: 'an unknown project: null', caller: U.creatorA, input: 'p-nope', then: returns(null) }),
    row({ name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: 'p-1', then: denied }),
    row({ name: 'IAM_OWNER without the header: null for a project of another org', caller: ADMIN, input: 'p-1', then: returns(null) }),
    row({ name: 'IAM_OWNER with the header', caller: ADMIN, orgHeader: ORG_A, input: 'p-1', then: returns('p-1') }),
    row({
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.creatorA,
      orgHeader: ORG_B,
      input: 'p-b',
      then: denied,
    }),
    row({
      name: 'x-service-orgid of an org where the caller holds a role',
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: 'p-b',
      then: returns('p-b', ORG_B),
    }),
    ...unauthenticatedRows<Snapshot<unknown> | null>('p-1', seeded),
  ]);
});
