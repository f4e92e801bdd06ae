// Command tests of the user aggregate (issue 12 step 1): given events → when a
// command → then the new events or the AppError, over the SQLite store.
// One table per command: input rules at their limits, business rules, and who
// may do it (DESIGN.md sections 6 and 8).
import { describe, expect } from 'vitest';
import {
  addHumanUser,
  setEmail,
  setHumanPassword,
  updateHumanPhone,
  updateHumanProfile,
  updateMyProfile,
  verifyEmail,
  verifyPhone,
} from '../src/commands/users.ts';
import { userEvents, type Profile, type User } from '../src/model/users.ts';
import {
  ADMIN,
  BOSS,
  bossWorld,
  chars,
  commandTable,
  DEFAULT_ORG,
  event,
  facts,
  ORG_A,
  ORG_B,
  SEEDED_PASSWORD_HASH,
  U,
  unauthenticatedRows,
  world,
  type ExpectedEvent,
  type Fact,
  type Harness,
  type Row,
  type Then,
} from './support/given.ts';

const P = (over: Partial<Profile> = {}): Profile => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  nickName: null,
  displayName: null,
  preferredLanguage: null,
  gender: 'GENDER_UNSPECIFIED',
  ...over,
});
const profileChanged = (userId: string, owner: string, profile: Profile): ExpectedEvent =>
  event('user', userId, userEvents.profileChanged, { profile }, owner);

/** Valid addresses of 200 and 201 code points (local part 64, labels of 63). */
const EMAIL_200 = `${chars(64, 'l')}@${chars(63)}.${chars(63, 'b')}.example`;
const EMAIL_201 = `${chars(64, 'l')}@${chars(63)}.${chars(63, 'b')}.examplee`;

const BCRYPT_4 = /^\$2[aby]\$04\$[./A-Za-z0-9]{53}$/;
const ARGON2ID = /^\$argon2id\$/;
const CODE = /^[A-Z0-9]{6}$/;
const stateOf = async (h: Harness, id: string) => (await h.store.load<User>('user', id))!.state;

/**
 * Who may run an org-scoped user operation (updateHumanProfile, updateHumanPhone,
 * setHumanPassword): user.write in the acting organization (x-service-orgid, else
 * the caller's own), the target user living there, and no escalation.
 */
function orgScopedUserRows<R>(input: (userId: string) => unknown, ok: (userId: string, owner: string) => Then<R>): Row<R>[] {
  const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };
  const escalation = { error: { code: 'PERMISSION_DENIED' as const, message: /roles you do not hold/ } };
  const missing = { error: { code: 'NOT_FOUND' as const, message: /^User not found$/ } };
  return [
    { name: 'ORG_USER_MANAGER of the org changes a user there', caller: U.managerA, input: input(U.alice), then: ok(U.alice, ORG_A) },
    { name: 'ORG_OWNER of the org changes a user there', caller: U.ownerA, input: input(U.alice), then: ok(U.alice, ORG_A) },
    {
      name: "IAM_OWNER with x-service-orgid of the user's org",
      caller: ADMIN,
      orgHeader: ORG_A,
      input: input(U.alice),
      then: ok(U.alice, ORG_A),
    },
    {
      name: 'IAM_OWNER without the header acts in its own org, where the user is NOT_FOUND',
      caller: ADMIN,
      input: input(U.alice),
      then: missing,
    },
    {
      name: 'x-service-orgid of another org where the caller holds user.write',
      caller: U.helperB,
      orgHeader: ORG_B,
      input: input(U.bob),
      then: ok(U.bob, ORG_B),
    },
    {
      name: 'a role in another org only, no header: PERMISSION_DENIED in its own org',
      caller: U.helperB,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.managerA,
      orgHeader: ORG_B,
      input: input(U.bob),
      then: denied,
    },
    {
      name: "owner of another org with the header of the user's org: PERMISSION_DENIED",
      caller: U.ownerB,
      orgHeader: ORG_A,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'owner of another org without header: the user is not in its org, NOT_FOUND',
      caller: U.ownerB,
      input: input(U.alice),
      then: missing,
    },
    {
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: input(U.alice),
      then: denied,
    },
    { name: 'ORG_SETTINGS_MANAGER lacks user.write: PERMISSION_DENIED', caller: U.settingsA, input: input(U.alice), then: denied },
    { name: 'ORG_PROJECT_CREATOR lacks user.write: PERMISSION_DENIED', caller: U.creatorA, input: input(U.alice), then: denied },
    {
      name: 'a user without role, on itself: PERMISSION_DENIED (not a self-service operation)',
      caller: U.alice,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'permission is checked before the target is looked up: no role and an unknown user is PERMISSION_DENIED',
      caller: U.alice,
      input: input('ghost'),
      then: denied,
    },
    { name: 'an unknown user: NOT_FOUND', caller: U.managerA, input: input('ghost'), then: missing },
    { name: "a user of another org, acting in the caller's org: NOT_FOUND", caller: U.managerA, input: input(U.bob), then: missing },
    { name: 'ORG_OWNER on itself', caller: U.ownerA, input: input(U.ownerA), then: ok(U.ownerA, ORG_A) },
    { name: 'no escalation: ORG_USER_MANAGER on an ORG_OWNER', caller: U.managerA, input: input(U.ownerA), then: escalation },
    {
      name: 'no escalation: ORG_USER_MANAGER on an ORG_SETTINGS_MANAGER (a permission it lacks)',
      caller: U.managerA,
      input: input(U.settingsA),
      then: escalation,
    },
    {
      name: 'ORG_USER_MANAGER on another ORG_USER_MANAGER (nothing it lacks)',
      caller: U.managerA,
      input: input(U.peerA),
      then: ok(U.peerA, ORG_A),
    },
    { name: 'ORG_OWNER on an ORG_SETTINGS_MANAGER', caller: U.ownerA, input: input(U.settingsA), then: ok(U.settingsA, ORG_A) },
    {
      name: 'no escalation: roles the target holds in another org count (ORG_OWNER of org-a on a manager of org-b)',
      caller: U.ownerA,
      input: input(U.helperB),
      then: escalation,
    },
    {
      name: 'IAM_OWNER may change a user holding roles in other orgs',
      caller: ADMIN,
      orgHeader: ORG_A,
      input: input(U.helperB),
      then: ok(U.helperB, ORG_A),
    },
    {
      name: 'no escalation: ORG_USER_MANAGER on an IAM_OWNER of its org',
      given: bossWorld,
      caller: U.managerA,
      input: input(BOSS),
      then: escalation,
    },
    {
      name: 'no escalation: ORG_OWNER on an IAM_OWNER of its org',
      given: bossWorld,
      caller: U.ownerA,
      input: input(BOSS),
      then: escalation,
    },
    ...unauthenticatedRows<R>(input(U.alice)),
  ];
}

describe('updateMyProfile', () => {
  const input = (over: Record<string, unknown> = {}) => ({ firstName: 'Ada', lastName: 'Lovelace', displayName: 'Ada L', ...over });
  const ok = (profile: Profile, who: string = U.alice, owner: string = ORG_A): Then<unknown> => ({
    events: [profileChanged(who, owner, profile)],
    details: true,
  });
  commandTable(updateMyProfile, [
    { name: 'the caller changes its own profile', caller: U.alice, input: input(), then: ok(P({ displayName: 'Ada L' })) },
    {
      name: 'every field, trimmed',
      caller: U.alice,
      input: input({
        firstName: '  Ada ',
        lastName: ' Lovelace ',
        displayName: ' Ada L ',
        nickName: ' ada ',
        preferredLanguage: ' de ',
        gender: 'GENDER_FEMALE',
      }),
      then: ok(P({ displayName: 'Ada L', nickName: 'ada', preferredLanguage: 'de', gender: 'GENDER_FEMALE' })),
    },
    {
      name: 'x-service-orgid is ignored: the caller itself changes',
      caller: U.alice,
      orgHeader: ORG_B,
      input: input(),
      then: ok(P({ displayName: 'Ada L' })),
    },
    {
      name: 'the IAM_OWNER changes its own profile (in the default org)',
      caller: ADMIN,
      input: input(),
      then: ok(P({ displayName: 'Ada L' }), ADMIN, DEFAULT_ORG),
    },
    {
      name: 'names of 200 code points',
      caller: U.alice,
      input: input({ firstName: chars(200), lastName: chars(200), displayName: chars(200), nickName: chars(200) }),
      then: ok(P({ firstName: chars(200), lastName: chars(200), displayName: chars(200), nickName: chars(200) })),
    },
    {
      name: '200 astral code points are 200, not 400',
      caller: U.alice,
      input: input({ firstName: chars(200, '😀') }),
      then: ok(P({ firstName: chars(200, '😀'), displayName: 'Ada L' })),
    },
    {
      name: 'preferredLanguage of 10',
      caller: U.alice,
      input: input({ preferredLanguage: chars(10) }),
      then: ok(P({ displayName: 'Ada L', preferredLanguage: chars(10) })),
    },
    { name: 'nickName null is absent', caller: U.alice, input: input({ nickName: null }), then: ok(P({ displayName: 'Ada L' })) },
    {
      name: 'firstName of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ firstName: chars(201) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.firstName'], message: /at most 200/ } },
    },
    {
      name: '201 astral code points: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ lastName: chars(201, '😀') }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.lastName'] } },
    },
    {
      name: 'displayName, nickName of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ displayName: chars(201), nickName: chars(201) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.displayName', 'input.nickName'] } },
    },
    {
      name: 'preferredLanguage of 11: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ preferredLanguage: chars(11) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.preferredLanguage'] } },
    },
    {
      name: 'displayName is required here',
      caller: U.alice,
      input: { firstName: 'Ada', lastName: 'Lovelace' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.displayName'] } },
    },
    {
      name: 'blank names: INVALID_ARGUMENT (not empty means not blank)',
      caller: U.alice,
      input: input({ firstName: '   ', lastName: '', displayName: ' \t ' }),
      then: {
        error: {
          code: 'INVALID_ARGUMENT',
          fields: ['input.displayName', 'input.firstName', 'input.lastName'],
          message: /must not be empty/,
        },
      },
    },
    {
      name: 'names of invisible characters only (zero-width space, Hangul filler, blank Braille): INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ firstName: '\u200b', lastName: '\u3164', displayName: '\u2800\u180e' }),
      then: {
        error: {
          code: 'INVALID_ARGUMENT',
          fields: ['input.displayName', 'input.firstName', 'input.lastName'],
          message: /must not be empty/,
        },
      },
    },
    {
      name: 'nickName given must not be empty',
      caller: U.alice,
      input: input({ nickName: '' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.nickName'] } },
    },
    {
      name: 'control characters in a name: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ firstName: 'Ada\u0000', displayName: 'A\u202Eb' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.displayName', 'input.firstName'], message: /control characters/ } },
    },
    {
      name: 'a lone surrogate: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ lastName: 'x\uD800' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.lastName'], message: /well-formed/ } },
    },
    {
      name: 'an unknown gender: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ gender: 'GENDER_NOPE' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.gender'] } },
    },
    {
      name: 'a wrong type: INVALID_ARGUMENT',
      caller: U.alice,
      input: input({ firstName: 42 }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.firstName'] } },
    },
    {
      name: 'no input at all: INVALID_ARGUMENT',
      caller: U.alice,
      input: undefined,
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input'] } },
    },
    {
      name: 'every violated field is listed',
      caller: U.alice,
      input: { firstName: '', lastName: chars(201), preferredLanguage: chars(11), gender: 1 },
      then: {
        error: {
          code: 'INVALID_ARGUMENT',
          fields: ['input.displayName', 'input.firstName', 'input.gender', 'input.lastName', 'input.preferredLanguage'],
        },
      },
    },
    {
      name: 'input rules come before authentication (no I/O): INVALID_ARGUMENT without a token',
      caller: null,
      input: input({ firstName: '' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.firstName'] } },
    },
    {
      name: 'the same profile: FAILED_PRECONDITION, no event',
      given: [
        ...world,
        { aggregateType: 'user', aggregateId: U.alice, type: userEvents.profileChanged, payload: { profile: P({ displayName: 'Ada L' }) } },
      ],
      caller: U.alice,
      input: input({ firstName: ' Ada ' }),
      then: { error: { code: 'FAILED_PRECONDITION', message: /profile has not changed/ } },
    },
    ...unauthenticatedRows(input()),
  ]);
});

describe('updateHumanProfile', () => {
  const input = (userId: string, over: Record<string, unknown> = {}) => ({ userId, firstName: 'Ada', lastName: 'Lovelace', ...over });
  const ok = (userId: string, owner: string, profile = P()): Then<unknown> => ({
    events: [profileChanged(userId, owner, profile)],
    details: true,
  });
  describe('permissions', () =>
    commandTable(
      updateHumanProfile,
      orgScopedUserRows(
        (id) => input(id),
        (id, owner) => ok(id, owner),
      ),
    ));
  describe('rules', () =>
    commandTable(updateHumanProfile, [
      {
        name: 'displayName optional; every field trimmed',
        caller: U.managerA,
        input: input(U.alice, { firstName: ' Ada ', nickName: ' a ', preferredLanguage: 'en', gender: 'GENDER_MALE' }),
        then: ok(U.alice, ORG_A, P({ nickName: 'a', preferredLanguage: 'en', gender: 'GENDER_MALE' })),
      },
      {
        name: 'nickName may be empty here (stored as none)',
        caller: U.managerA,
        input: input(U.alice, { nickName: '' }),
        then: ok(U.alice, ORG_A),
      },
      {
        name: 'limits: 200 / 10 code points',
        caller: U.managerA,
        input: input(U.alice, {
          firstName: chars(200),
          lastName: chars(200),
          displayName: chars(200),
          nickName: chars(200),
          preferredLanguage: chars(10),
        }),
        then: ok(
          U.alice,
          ORG_A,
          P({ firstName: chars(200), lastName: chars(200), displayName: chars(200), nickName: chars(200), preferredLanguage: chars(10) }),
        ),
      },
      {
        name: 'over the limits: INVALID_ARGUMENT listing each',
        caller: U.managerA,
        input: input(U.alice, {
          firstName: chars(201),
          lastName: chars(201),
          displayName: chars(201),
          nickName: chars(201),
          preferredLanguage: chars(11),
        }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: ['input.displayName', 'input.firstName', 'input.lastName', 'input.nickName', 'input.preferredLanguage'],
          },
        },
      },
      {
        name: 'displayName given must not be blank',
        caller: U.managerA,
        input: input(U.alice, { displayName: ' ' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.displayName'] } },
      },
      {
        name: 'firstName and lastName are required',
        caller: U.managerA,
        input: { userId: U.alice },
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.firstName', 'input.lastName'] } },
      },
      {
        name: 'userId is required and not blank',
        caller: U.managerA,
        input: input(' '),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
      },
      {
        name: 'userId of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(chars(201)),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
      },
      {
        name: 'userId of 200 that does not exist: NOT_FOUND',
        caller: U.managerA,
        input: input(chars(200)),
        then: { error: { code: 'NOT_FOUND' } },
      },
      {
        name: 'an unknown gender: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { gender: 'x' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.gender'] } },
      },
      {
        name: 'input rules before authentication',
        caller: null,
        input: input(U.alice, { lastName: '' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.lastName'] } },
      },
      {
        name: 'the same profile: FAILED_PRECONDITION, no event',
        caller: U.managerA,
        input: input(U.alice, { firstName: 'Alice', lastName: 'Tester', nickName: '', gender: 'GENDER_UNSPECIFIED' }),
        then: { error: { code: 'FAILED_PRECONDITION', message: /profile has not changed/ } },
      },
    ]));
});

describe('addHumanUser', () => {
  const base = (over: Record<string, unknown> = {}) => ({
    profile: { firstName: 'Neo', lastName: 'Anderson' },
    email: { email: 'neo@example.com' },
    ...over,
  });
  const neo = (over: Partial<Omit<User, 'state'>> = {}) => ({
    username: 'neo@example.com',
    profile: P({ firstName: 'Neo', lastName: 'Anderson' }),
    email: { email: 'neo@example.com', isVerified: false },
    phone: null,
    passwordHash: null,
    passwordChangeRequired: false,
    metadata: [],
    idpLinks: [],
    u2fTokens: [],
    ...over,
  });
  /** The user added under the first generated id (or `id`), in `owner`. */
  const added = (owner: string, payload: Record<string, unknown>, id = 'id-1'): ExpectedEvent =>
    event('user', id, userEvents.added, payload, owner);
  const mail = { kind: 'verify-email-on-create' as const, userId: 'id-1', to: 'neo@example.com', code: expect.stringMatching(CODE) };
  const created = (owner: string, payload = neo(), extra: Partial<Then<any> & { jobs: unknown }> = {}): Then<any> => ({
    events: [added(owner, payload)],
    jobs: [{ ...mail, orgId: owner }],
    details: false,
    result: (r) => {
      expect(r.userId).toBe('id-1');
      expect(r.emailCode).toBeNull();
      expect(r.phoneCode).toBeNull();
    },
    ...(extra as object),
  });
  const idp: Fact = facts.idp('idp-1', ORG_A);
  const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };

  describe('permissions and the organization', () =>
    commandTable<any>(addHumanUser, [
      { name: 'ORG_USER_MANAGER adds a user to its org', caller: U.managerA, input: base(), then: created(ORG_A) },
      { name: 'ORG_OWNER adds a user to its org', caller: U.ownerA, input: base(), then: created(ORG_A) },
      { name: 'IAM_OWNER without organisation or header: its own (default) org', caller: ADMIN, input: base(), then: created(DEFAULT_ORG) },
      {
        name: 'IAM_OWNER with organisation.orgId of another org',
        caller: ADMIN,
        input: base({ organisation: { orgId: ORG_B } }),
        then: created(ORG_B),
      },
      {
        name: 'organisation.orgDomain names the org (case ignored)',
        caller: ADMIN,
        input: base({ organisation: { orgDomain: ' BETA.localhost ' } }),
        then: created(ORG_B),
      },
      {
        name: "organisation.orgId and orgDomain both: INVALID_ARGUMENT (one or the other, as the wire's oneof)",
        caller: ADMIN,
        input: base({ organisation: { orgId: ORG_A, orgDomain: 'beta.localhost' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.organisation.orgDomain'] } },
      },
      { name: 'x-service-orgid when no organisation is given', caller: U.helperB, orgHeader: ORG_B, input: base(), then: created(ORG_B) },
      {
        name: 'organisation wins over x-service-orgid',
        caller: U.managerA,
        orgHeader: ORG_B,
        input: base({ organisation: { orgId: ORG_A } }),
        then: created(ORG_A),
      },
      {
        name: 'organisation.orgId of an org where the caller holds no role: PERMISSION_DENIED',
        caller: U.managerA,
        input: base({ organisation: { orgId: ORG_B } }),
        then: denied,
      },
      {
        name: 'organisation.orgDomain of an org where the caller holds no role: PERMISSION_DENIED',
        caller: U.managerA,
        input: base({ organisation: { orgDomain: 'beta.localhost' } }),
        then: denied,
      },
      {
        name: 'organisation.orgId that does not exist: PERMISSION_DENIED',
        caller: ADMIN,
        input: base({ organisation: { orgId: 'org-nope' } }),
        then: denied,
      },
      {
        name: 'organisation.orgDomain that does not exist: PERMISSION_DENIED',
        caller: ADMIN,
        input: base({ organisation: { orgDomain: 'nope.localhost' } }),
        then: denied,
      },
      {
        name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
        caller: U.managerA,
        orgHeader: ORG_B,
        input: base(),
        then: denied,
      },
      {
        name: 'x-service-orgid that does not exist: PERMISSION_DENIED',
        caller: U.managerA,
        orgHeader: 'org-nope',
        input: base(),
        then: denied,
      },
      { name: 'a role in another org only: PERMISSION_DENIED in its own', caller: U.helperB, input: base(), then: denied },
      { name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: base(), then: denied },
      { name: 'ORG_SETTINGS_MANAGER: PERMISSION_DENIED', caller: U.settingsA, input: base(), then: denied },
      { name: 'ORG_PROJECT_CREATOR: PERMISSION_DENIED', caller: U.creatorA, input: base(), then: denied },
      {
        name: 'permission before the idp links are looked up',
        caller: U.alice,
        input: base({ idpLinks: [{ idpId: 'idp-nope', userId: 'x', userName: 'x' }] }),
        then: denied,
      },
      ...unauthenticatedRows<any>(base()),
    ]));

  describe('verification choices (SPEC.md rule 1)', () =>
    commandTable<any>(addHumanUser, [
      { name: 'neither: a verification mail with a code, nothing returned', caller: U.managerA, input: base(), then: created(ORG_A) },
      {
        name: 'isVerified false counts as absent: a mail',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', isVerified: false } }),
        then: created(ORG_A),
      },
      {
        name: 'sendCode with a urlTemplate: the mail carries it',
        caller: U.managerA,
        input: base({
          email: { email: 'neo@example.com', sendCode: { urlTemplate: 'https://x.example/v?u={{.UserID}}&c={{.Code}}&o={{.OrgID}}' } },
        }),
        then: created(ORG_A, neo(), {
          jobs: [{ ...mail, orgId: ORG_A, urlTemplate: 'https://x.example/v?u={{.UserID}}&c={{.Code}}&o={{.OrgID}}' }],
        }),
      },
      {
        name: 'returnCode: the code in the answer, no mail, not in the event',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', returnCode: true } }),
        then: { events: [added(ORG_A, neo())], result: (r) => expect(r.emailCode).toMatch(CODE) },
      },
      {
        name: 'isVerified: verified, no code, no mail',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', isVerified: true } }),
        then: {
          events: [added(ORG_A, neo({ email: { email: 'neo@example.com', isVerified: true } }))],
          result: (r) => expect(r.emailCode).toBeNull(),
        },
      },
      {
        name: 'sendCode and returnCode: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', sendCode: {}, returnCode: true } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.sendCode'], message: /at most one/ } },
      },
      {
        name: 'returnCode and isVerified: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', isVerified: true, returnCode: true } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.sendCode'] } },
      },
      {
        name: 'a urlTemplate with an unknown placeholder: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', sendCode: { urlTemplate: 'https://x.example/{{.Nope}}' } } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.sendCode.urlTemplate'], message: /unknown placeholder/ } },
      },
      {
        name: 'a urlTemplate that is no http(s) URL: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', sendCode: { urlTemplate: 'ftp://x/{{.Code}}' } } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.sendCode.urlTemplate'] } },
      },
      {
        name: 'a urlTemplate of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', sendCode: { urlTemplate: `https://x.example/${chars(183)}` } } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.sendCode.urlTemplate'], message: /at most 200/ } },
      },
      {
        name: 'phone without a choice and no SMS provider: stored unverified, no code, no SMS',
        caller: U.managerA,
        input: base({ phone: { phone: '+41 79 765 43 21' } }),
        then: created(ORG_A, neo({ phone: { phone: '+41797654321', isVerified: false } })),
      },
      {
        name: 'phone without a choice and an SMS provider: an SMS with a code (rule 3)',
        options: { sms: true },
        caller: U.managerA,
        input: base({ phone: { phone: '+41 79 765 43 21' } }),
        then: created(ORG_A, neo({ phone: { phone: '+41797654321', isVerified: false } }), {
          jobs: [
            { ...mail, orgId: ORG_A },
            { kind: 'verify-phone', userId: 'id-1', orgId: ORG_A, to: '+41797654321', code: expect.stringMatching(CODE) },
          ],
        }),
      },
      {
        name: 'phone returnCode: the code in the answer, no SMS',
        options: { sms: true },
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', isVerified: true }, phone: { phone: '+41797654321', returnCode: true } }),
        then: {
          events: [
            added(
              ORG_A,
              neo({ email: { email: 'neo@example.com', isVerified: true }, phone: { phone: '+41797654321', isVerified: false } }),
            ),
          ],
          result: (r) => expect(r.phoneCode).toMatch(CODE),
        },
      },
      {
        name: 'phone isVerified: verified, no code',
        options: { sms: true },
        caller: U.managerA,
        input: base({ email: { email: 'neo@example.com', isVerified: true }, phone: { phone: '+41797654321', isVerified: true } }),
        then: {
          events: [
            added(
              ORG_A,
              neo({ email: { email: 'neo@example.com', isVerified: true }, phone: { phone: '+41797654321', isVerified: true } }),
            ),
          ],
          result: (r) => expect(r.phoneCode).toBeNull(),
        },
      },
      {
        name: 'a national phone number takes the default region (CH)',
        caller: U.managerA,
        input: base({ phone: { phone: '079 765 43 21' } }),
        then: created(ORG_A, neo({ phone: { phone: '+41797654321', isVerified: false } })),
      },
      { name: 'an empty phone number: no phone', caller: U.managerA, input: base({ phone: { phone: '' } }), then: created(ORG_A) },
      {
        name: 'phone sendCode and returnCode: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ phone: { phone: '+41797654321', sendCode: true, returnCode: true } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone.sendCode'] } },
      },
      {
        name: 'not a phone number: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ phone: { phone: 'call me' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone.phone'], message: /phone number/ } },
      },
      {
        name: 'a phone of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ phone: { phone: chars(201, '1') } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone.phone', 'input.phone.phone'] } },
      },
    ]));

  describe('identity, uniqueness and fields', () =>
    commandTable<any>(addHumanUser, [
      {
        name: 'own userId and username, trimmed',
        caller: U.managerA,
        input: base({ userId: ' neo ', username: ' The.One ' }),
        then: {
          events: [added(ORG_A, neo({ username: 'The.One' }), 'neo')],
          jobs: [{ ...mail, userId: 'neo', orgId: ORG_A }],
          result: (r) => expect(r.userId).toBe('neo'),
        },
      },
      {
        name: 'userId of 200',
        caller: U.managerA,
        input: base({ userId: chars(200) }),
        then: { events: [added(ORG_A, neo(), chars(200))], jobs: [{ ...mail, userId: chars(200), orgId: ORG_A }] },
      },
      {
        name: 'profile, username and email at their limits (200, 10)',
        caller: U.managerA,
        input: base({
          username: chars(200, 'u'),
          profile: {
            firstName: chars(200),
            lastName: chars(200),
            nickName: chars(200),
            displayName: chars(200),
            preferredLanguage: chars(10),
          },
          email: { email: EMAIL_200, isVerified: true },
        }),
        then: {
          events: [
            added(
              ORG_A,
              neo({
                username: chars(200, 'u'),
                profile: P({
                  firstName: chars(200),
                  lastName: chars(200),
                  nickName: chars(200),
                  displayName: chars(200),
                  preferredLanguage: chars(10),
                }),
                email: { email: EMAIL_200, isVerified: true },
              }),
            ),
          ],
        },
      },
      {
        name: 'an email of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: EMAIL_201 } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.email'], message: /at most 200/ } },
      },
      {
        name: 'a phone of 200 (padded) is fine',
        caller: U.managerA,
        input: base({ phone: { phone: `+41797654321${' '.repeat(188)}` } }),
        then: created(ORG_A, neo({ phone: { phone: '+41797654321', isVerified: false } })),
      },
      {
        name: 'idpLinks fields of 200',
        given: [...world, facts.idp(chars(200, 'i'), ORG_A)],
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: chars(200, 'i'), userId: chars(200, 'e'), userName: chars(200, 'n') }] }),
        then: created(ORG_A, neo({ idpLinks: [{ idpId: chars(200, 'i'), userId: chars(200, 'e'), userName: chars(200, 'n') }] })),
      },
      {
        name: 'userId of 201, username of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ userId: chars(201), username: chars(201) }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId', 'input.username'] } },
      },
      {
        name: 'blank userId and username: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ userId: ' ', username: '' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId', 'input.username'] } },
      },
      {
        name: 'a username with a control character: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ username: 'neo\n' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.username'] } },
      },
      {
        name: 'a userId taken by any user: ALREADY_EXISTS',
        caller: U.managerA,
        input: base({ userId: U.bob }),
        then: { error: { code: 'ALREADY_EXISTS', message: /User bob/ } },
      },
      {
        name: 'a username taken, another case: ALREADY_EXISTS',
        caller: U.managerA,
        input: base({ username: 'BOB' }),
        then: { error: { code: 'ALREADY_EXISTS', message: /username/ } },
      },
      // One username however it is encoded: "José" with a composed é (U+00E9), with e + U+0301, in full-width letters.
      ...[
        ['José', 'Jose\u0301'],
        ['Jose\u0301', 'JOSÉ'],
        ['José', 'Ｊｏｓé'],
      ].map(([first, second]) => ({
        name: `a username taken in another Unicode form (${JSON.stringify(first)} then ${JSON.stringify(second)}): ALREADY_EXISTS`,
        caller: U.managerA,
        arrange: async (h: Harness) =>
          expect((await h.when((ctx) => addHumanUser(ctx, base({ username: first })), { caller: U.managerA })).ok).toBe(true),
        input: base({ userId: 'second', username: second }),
        then: { error: { code: 'ALREADY_EXISTS' as const, message: /username/ } },
      })),
      {
        name: 'no username: the email is the username, and it must be free too',
        given: [...world, facts.human('taken', ORG_B, { username: 'neo@example.com' })],
        caller: U.managerA,
        input: base(),
        then: { error: { code: 'ALREADY_EXISTS', message: /username/ } },
      },
      {
        name: 'white space around the email: INVALID_ARGUMENT (not trimmed, unlike names)',
        caller: U.managerA,
        input: base({ email: { email: ' neo@example.com ' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.email'], message: /valid email/ } },
      },
      {
        name: 'email: not lower-cased',
        caller: U.managerA,
        input: base({ email: { email: 'Neo@Example.com', isVerified: true } }),
        then: { events: [added(ORG_A, neo({ username: 'Neo@Example.com', email: { email: 'Neo@Example.com', isVerified: true } }))] },
      },
      {
        name: 'not an email: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: 'neo@localhost' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.email'], message: /valid email/ } },
      },
      {
        name: 'an email over 200: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ email: { email: `n@${chars(60)}.${chars(60)}.${chars(60)}.${chars(20)}.example.com` } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.email'], message: /at most 200/ } },
      },
      {
        name: 'profile and email are required',
        caller: U.managerA,
        input: {},
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email', 'input.profile'] } },
      },
      {
        name: 'profile limits: INVALID_ARGUMENT listing each',
        caller: U.managerA,
        input: base({
          profile: {
            firstName: '',
            lastName: chars(201),
            nickName: chars(201),
            displayName: chars(201),
            preferredLanguage: chars(11),
            gender: 'x',
          },
        }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: [
              'input.profile.displayName',
              'input.profile.firstName',
              'input.profile.gender',
              'input.profile.lastName',
              'input.profile.nickName',
              'input.profile.preferredLanguage',
            ],
          },
        },
      },
      {
        name: 'displayName and nickName may be empty on create',
        caller: U.managerA,
        input: base({ profile: { firstName: 'Neo', lastName: 'Anderson', displayName: '', nickName: '' } }),
        then: created(ORG_A),
      },
      {
        name: 'password: hashed (bcrypt), change required when asked, user active',
        caller: U.managerA,
        input: base({ password: { password: 'Secret-pw1', changeRequired: true } }),
        then: {
          ...created(ORG_A, neo({ passwordHash: expect.stringMatching(BCRYPT_4), passwordChangeRequired: true })),
          secrets: ['Secret-pw1'],
          result: async (_r, h) => expect((await stateOf(h, 'id-1')).state).toBe('USER_STATE_ACTIVE'),
        },
      },
      {
        name: "password of 200: hashed with argon2id (over bcrypt's 72 bytes)",
        caller: U.managerA,
        input: base({ password: { password: `Aa1!${chars(196)}` } }),
        then: { ...created(ORG_A, neo({ passwordHash: expect.stringMatching(ARGON2ID) })), secrets: [`Aa1!${chars(196)}`] },
      },
      {
        name: 'password of 201: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ password: { password: `Aa1!${chars(197)}` } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.password.password'], message: /at most 200/ } },
      },
      {
        name: 'password against the policy: every broken rule named',
        caller: U.managerA,
        input: base({ password: { password: 'short' } }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: ['input.password.password', 'input.password.password', 'input.password.password', 'input.password.password'],
            message: /min_length.*upper.*digit.*symbol/,
          },
        },
      },
      {
        name: 'hashedPassword bcrypt: stored as it is, no policy',
        caller: U.managerA,
        input: base({ hashedPassword: { hash: SEEDED_PASSWORD_HASH } }),
        then: created(ORG_A, neo({ passwordHash: SEEDED_PASSWORD_HASH })),
      },
      {
        name: 'hashedPassword argon2id with changeRequired',
        caller: U.managerA,
        input: base({
          hashedPassword: {
            hash: '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$qtTiyTFAHKH0Dg0Tlo0fCk6rFBQvnNBFqJWMbM6Cqjc',
            changeRequired: true,
          },
        }),
        then: created(
          ORG_A,
          neo({
            passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$qtTiyTFAHKH0Dg0Tlo0fCk6rFBQvnNBFqJWMbM6Cqjc',
            passwordChangeRequired: true,
          }),
        ),
      },
      {
        name: "a password on create: its time is the event's (ZITADEL's password_changed)",
        caller: U.managerA,
        input: base({ password: { password: 'Secret-pw1' } }),
        then: {
          ...created(ORG_A, neo({ passwordHash: expect.stringMatching(BCRYPT_4) })),
          secrets: ['Secret-pw1'],
          result: async (_r, h, outcome) =>
            expect((await stateOf(h, 'id-1')).passwordChanged).toBe(outcome.events[0]!.createdAt.toISOString()),
        },
      },
      {
        name: 'a hashed password on create: its time too',
        caller: U.managerA,
        input: base({ hashedPassword: { hash: SEEDED_PASSWORD_HASH } }),
        then: {
          ...created(ORG_A, neo({ passwordHash: SEEDED_PASSWORD_HASH })),
          result: async (_r, h, outcome) =>
            expect((await stateOf(h, 'id-1')).passwordChanged).toBe(outcome.events[0]!.createdAt.toISOString()),
        },
      },
      {
        name: 'no password on create: no password time, and none in the event',
        caller: U.managerA,
        input: base(),
        then: {
          ...created(ORG_A),
          result: async (_r, h, outcome) => {
            expect((await stateOf(h, 'id-1')).passwordChanged).toBeUndefined();
            expect(outcome.events[0]!.payload).not.toHaveProperty('passwordChanged');
          },
        },
      },
      {
        name: 'hashedPassword of another kind: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ hashedPassword: { hash: '{SHA}abc' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.hashedPassword.hash'], message: /bcrypt/ } },
      },
      {
        name: 'password and hashedPassword: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ password: { password: 'Secret-pw1' }, hashedPassword: { hash: SEEDED_PASSWORD_HASH } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.hashedPassword'], message: /not both/ } },
      },
      {
        name: 'metadata stored',
        caller: U.managerA,
        input: base({
          metadata: [
            { key: 'k1', value: 'aGk=' },
            { key: chars(200), value: Buffer.alloc(500_000, 1).toString('base64') },
          ],
        }),
        then: created(
          ORG_A,
          neo({
            metadata: [
              { key: 'k1', value: 'aGk=' },
              { key: chars(200), value: Buffer.alloc(500_000, 1).toString('base64') },
            ],
          }),
        ),
      },
      {
        name: 'metadata: a duplicate key: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({
          metadata: [
            { key: 'k', value: 'aGk=' },
            { key: 'k', value: 'aGk=' },
          ],
        }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadata.1.key'], message: /duplicate/ } },
      },
      {
        name: 'metadata: empty key, key of 201, value not base64, empty value: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({
          metadata: [
            { key: ' ', value: 'aGk=' },
            { key: chars(201), value: 'aGk=' },
            { key: 'a', value: 'not base64!' },
            { key: 'b', value: '' },
          ],
        }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: ['input.metadata.0.key', 'input.metadata.1.key', 'input.metadata.2.value', 'input.metadata.3.value'],
          },
        },
      },
      {
        name: 'metadata: a value of 500001 bytes: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ metadata: [{ key: 'k', value: Buffer.alloc(500_001, 1).toString('base64') }] }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadata.0.value'], message: /1 to 500000 bytes/ } },
      },
      {
        name: 'metadata: 21 entries: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ metadata: Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, value: 'aGk=' })) }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadata'] } },
      },
      {
        name: "idpLinks to an IDP of the user's organization: stored and claimed, user active",
        given: [...world, facts.idp('idp-a', ORG_A)],
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: 'idp-a', userId: 'ext-1', userName: 'neo.ext' }] }),
        then: {
          ...created(ORG_A, neo({ idpLinks: [{ idpId: 'idp-a', userId: 'ext-1', userName: 'neo.ext' }] })),
          result: async (_r, h) => {
            expect((await stateOf(h, 'id-1')).state).toBe('USER_STATE_ACTIVE');
            expect(await h.store.lookup('idpLink:idp-a:ext-1')).toEqual({ aggregateType: 'user', aggregateId: 'id-1' });
          },
        },
      },
      {
        name: 'idpLinks to an IDP of another organization: NOT_FOUND, as if unknown, and its external user stays free',
        given: [...world, facts.idp('idp-b', ORG_B)],
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: 'idp-b', userId: 'ext-1', userName: 'neo.ext' }] }),
        then: {
          error: { code: 'NOT_FOUND', message: /Identity provider idp-b not found/ },
          after: async (h) => expect(await h.store.lookup('idpLink:idp-b:ext-1')).toBeNull(),
        },
      },
      {
        name: "IAM_OWNER cannot lend another organization's IDP either: NOT_FOUND",
        given: [...world, facts.idp('idp-b', ORG_B)],
        caller: ADMIN,
        input: base({ organisation: { orgId: ORG_A }, idpLinks: [{ idpId: 'idp-b', userId: 'ext-1', userName: 'neo.ext' }] }),
        then: { error: { code: 'NOT_FOUND', message: /Identity provider idp-b/ } },
      },
      {
        name: 'the same external user twice in one request: INVALID_ARGUMENT',
        given: [...world, facts.idp('idp-a', ORG_A)],
        caller: U.managerA,
        input: base({
          idpLinks: [
            { idpId: 'idp-a', userId: 'ext-1', userName: 'e2' },
            { idpId: 'idp-a', userId: 'ext-1', userName: 'e3' },
          ],
        }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.idpLinks.1.userId'], message: /duplicate link/ } },
      },
      {
        name: 'one external id at two IDPs, or two external ids at one: both linked',
        given: [...world, facts.idp('idp-a', ORG_A), facts.idp('idp-a2', ORG_A)],
        caller: U.managerA,
        input: base({
          idpLinks: [
            { idpId: 'idp-a', userId: 'ext-1', userName: 'n' },
            { idpId: 'idp-a2', userId: 'ext-1', userName: 'n' },
            { idpId: 'idp-a', userId: 'ext-2', userName: 'n' },
          ],
        }),
        then: created(
          ORG_A,
          neo({
            idpLinks: [
              { idpId: 'idp-a', userId: 'ext-1', userName: 'n' },
              { idpId: 'idp-a2', userId: 'ext-1', userName: 'n' },
              { idpId: 'idp-a', userId: 'ext-2', userName: 'n' },
            ],
          }),
        ),
      },
      {
        name: 'idpLinks to an unknown IDP: NOT_FOUND',
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: 'idp-nope', userId: 'ext-1', userName: 'n' }] }),
        then: { error: { code: 'NOT_FOUND', message: /Identity provider idp-nope/ } },
      },
      {
        name: 'an external user already linked to another user: ALREADY_EXISTS',
        given: [...world, idp, facts.human('linked', ORG_A, { idpLinks: [{ idpId: 'idp-1', userId: 'ext-1', userName: 'x' }] })],
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: 'idp-1', userId: 'ext-1', userName: 'n' }] }),
        then: { error: { code: 'ALREADY_EXISTS', message: /idpLink/ } },
      },
      {
        name: 'idpLinks: blank and too long fields: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ idpLinks: [{ idpId: '', userId: chars(201), userName: ' ' }] }),
        then: {
          error: { code: 'INVALID_ARGUMENT', fields: ['input.idpLinks.0.idpId', 'input.idpLinks.0.userId', 'input.idpLinks.0.userName'] },
        },
      },
      {
        name: 'idpLinks: 21: INVALID_ARGUMENT',
        caller: U.managerA,
        input: base({ idpLinks: Array.from({ length: 21 }, (_, i) => ({ idpId: 'idp-1', userId: `e${i}`, userName: 'n' })) }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.idpLinks'] } },
      },
      {
        name: 'organisation.orgDomain blank: INVALID_ARGUMENT',
        caller: ADMIN,
        input: base({ organisation: { orgDomain: ' ' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.organisation.orgDomain'] } },
      },
      {
        name: 'input rules before authentication',
        caller: null,
        input: base({ email: { email: 'x' } }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email.email'] } },
      },
    ]));
});

describe('setEmail', () => {
  const input = (userId: string, over: Record<string, unknown> = {}) => ({ userId, email: 'new@example.com', ...over });
  const changed = (userId: string, owner: string, email = 'new@example.com', isVerified = false) =>
    event('user', userId, userEvents.emailChanged, { email, isVerified }, owner);
  const mailed = (userId: string, owner: string, over: Record<string, unknown> = {}): Then<any> => ({
    events: [changed(userId, owner)],
    jobs: [{ kind: 'verify-email-on-change', userId, orgId: owner, to: 'new@example.com', code: expect.stringMatching(CODE), ...over }],
    details: false,
    result: (r) => expect(r.verificationCode).toBeNull(),
  });
  const denied = { error: { code: 'PERMISSION_DENIED' as const } };
  commandTable<any>(setEmail, [
    {
      name: 'the user itself: unverified, a mail with a code (rule 2)',
      caller: U.alice,
      input: input(U.alice),
      then: mailed(U.alice, ORG_A),
    },
    {
      name: 'sendCode with a urlTemplate',
      caller: U.alice,
      input: input(U.alice, { sendCode: { urlTemplate: 'https://x.example/{{.Code}}' } }),
      then: mailed(U.alice, ORG_A, { urlTemplate: 'https://x.example/{{.Code}}' }),
    },
    {
      name: 'returnCode: the code in the answer, no mail',
      caller: U.managerA,
      input: input(U.alice, { returnCode: true }),
      then: { events: [changed(U.alice, ORG_A)], result: (r) => expect(r.verificationCode).toMatch(CODE) },
    },
    // The code verifies the address: taking it from the answer would skip proving the mailbox, as isVerified would.
    {
      name: 'the user itself with returnCode, without user.write: PERMISSION_DENIED',
      caller: U.alice,
      input: input(U.alice, { returnCode: true }),
      then: denied,
    },
    {
      name: 'the user itself with returnCode, holding user.write in its org',
      caller: U.managerA,
      input: input(U.managerA, { returnCode: true }),
      then: { events: [changed(U.managerA, ORG_A)], result: (r) => expect(r.verificationCode).toMatch(CODE) },
    },
    {
      name: 'isVerified false counts as absent',
      caller: U.alice,
      input: input(U.alice, { isVerified: false }),
      then: mailed(U.alice, ORG_A),
    },
    {
      name: 'the user itself with isVerified, without user.write: PERMISSION_DENIED',
      caller: U.alice,
      input: input(U.alice, { isVerified: true }),
      then: denied,
    },
    {
      name: 'the user itself with isVerified, holding user.write in its org',
      caller: U.managerA,
      input: input(U.managerA, { isVerified: true }),
      then: { events: [changed(U.managerA, ORG_A, 'new@example.com', true)] },
    },
    {
      name: 'ORG_USER_MANAGER with isVerified: verified, no code, a pending code is voided',
      caller: U.managerA,
      input: input(U.alice, { isVerified: true }),
      arrange: async (h) => void (h.vars.code = await h.deps.codes.issue(U.alice, 'email', 'new@example.com')),
      then: {
        events: [changed(U.alice, ORG_A, 'new@example.com', true)],
        result: async (_r, h) => expect(await h.deps.codes.verify(U.alice, 'email', h.vars.code, 'new@example.com')).toBe('missing'),
      },
    },
    { name: "ORG_USER_MANAGER of the user's org", caller: U.managerA, input: input(U.alice), then: mailed(U.alice, ORG_A) },
    {
      name: 'x-service-orgid is not used: the user is found anywhere',
      caller: U.managerA,
      orgHeader: ORG_B,
      input: input(U.alice),
      then: mailed(U.alice, ORG_A),
    },
    { name: "user.write in the user's org, not the caller's own", caller: U.helperB, input: input(U.bob), then: mailed(U.bob, ORG_B) },
    { name: 'IAM_OWNER on a user of any org', caller: ADMIN, input: input(U.bob), then: mailed(U.bob, ORG_B) },
    { name: 'a role in another org only: PERMISSION_DENIED', caller: U.ownerB, input: input(U.alice), then: denied },
    {
      name: 'x-service-orgid does not lend a role: PERMISSION_DENIED',
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: input(U.alice),
      then: denied,
    },
    { name: 'a user without role on another user: PERMISSION_DENIED', caller: U.alice, input: input(U.ownerA), then: denied },
    { name: 'ORG_SETTINGS_MANAGER: PERMISSION_DENIED', caller: U.settingsA, input: input(U.alice), then: denied },
    {
      name: 'an unknown user: NOT_FOUND (found anywhere, before the permission)',
      caller: U.alice,
      input: input('ghost'),
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    {
      name: 'no escalation: ORG_USER_MANAGER on an ORG_OWNER',
      caller: U.managerA,
      input: input(U.ownerA),
      then: { error: { code: 'PERMISSION_DENIED', message: /roles you do not hold/ } },
    },
    {
      name: 'no escalation: ORG_OWNER of org-a on a manager of org-b',
      caller: U.ownerA,
      input: input(U.helperB),
      then: { error: { code: 'PERMISSION_DENIED', message: /roles you do not hold/ } },
    },
    {
      name: 'no escalation: ORG_OWNER on an IAM_OWNER',
      given: bossWorld,
      caller: U.ownerA,
      input: input(BOSS),
      then: { error: { code: 'PERMISSION_DENIED', message: /roles you do not hold/ } },
    },
    { name: 'ORG_USER_MANAGER on another ORG_USER_MANAGER', caller: U.managerA, input: input(U.peerA), then: mailed(U.peerA, ORG_A) },
    {
      name: 'the same address: FAILED_PRECONDITION',
      caller: U.alice,
      input: input(U.alice, { email: 'alice@example.com' }),
      then: { error: { code: 'FAILED_PRECONDITION', message: /email has not changed/ } },
    },
    {
      name: 'another case of the same address is a change',
      caller: U.managerA,
      input: input(U.alice, { email: 'Alice@example.com', returnCode: true }),
      then: { events: [changed(U.alice, ORG_A, 'Alice@example.com')] },
    },
    {
      name: 'the same address, already verified, with isVerified: still FAILED_PRECONDITION',
      caller: U.managerA,
      input: input(U.alice, { email: 'alice@example.com', isVerified: true }),
      then: { error: { code: 'FAILED_PRECONDITION' } },
    },
    {
      name: 'an email of 200',
      caller: U.managerA,
      input: input(U.alice, { email: EMAIL_200, returnCode: true }),
      then: { events: [changed(U.alice, ORG_A, EMAIL_200)] },
    },
    {
      name: 'an email of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: input(U.alice, { email: EMAIL_201 }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email'], message: /at most 200/ } },
    },
    {
      name: 'sendCode and returnCode: INVALID_ARGUMENT',
      caller: U.alice,
      input: input(U.alice, { sendCode: {}, returnCode: true }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.sendCode'] } },
    },
    {
      name: 'isVerified and returnCode: INVALID_ARGUMENT',
      caller: U.managerA,
      input: input(U.alice, { isVerified: true, returnCode: true }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.sendCode'] } },
    },
    {
      name: 'a urlTemplate with an unknown placeholder: INVALID_ARGUMENT',
      caller: U.alice,
      input: input(U.alice, { sendCode: { urlTemplate: 'https://x.example/{{.Nope}}' } }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.sendCode.urlTemplate'] } },
    },
    {
      name: 'not an email, blank userId: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: ' ', email: 'nope' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email', 'input.userId'] } },
    },
    {
      name: 'a blank email: INVALID_ARGUMENT',
      caller: U.alice,
      input: input(U.alice, { email: '  ' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.email'], message: /must not be empty/ } },
    },
    ...unauthenticatedRows<any>(input(U.alice)),
  ]);
});

describe('updateHumanPhone', () => {
  const input = (userId: string, over: Record<string, unknown> = {}) => ({ userId, phone: '+41 79 765 43 21', ...over });
  const changed = (userId: string, owner: string, phone = '+41797654321', isVerified = false) =>
    event('user', userId, userEvents.phoneChanged, { phone, isVerified }, owner);
  const ok = (userId: string, owner: string): Then<unknown> => ({ events: [changed(userId, owner)], details: true });
  describe('permissions', () =>
    commandTable(
      updateHumanPhone,
      orgScopedUserRows((id) => input(id), ok),
    ));
  describe('rules', () =>
    commandTable(updateHumanPhone, [
      {
        name: 'a new, unverified phone with no SMS provider: no code, no SMS',
        caller: U.managerA,
        input: input(U.alice),
        then: ok(U.alice, ORG_A),
      },
      {
        name: 'a new, unverified phone with an SMS provider: an SMS with a code (rule 3)',
        options: { sms: true },
        caller: U.managerA,
        input: input(U.alice),
        then: {
          events: [changed(U.alice, ORG_A)],
          jobs: [{ kind: 'verify-phone', userId: U.alice, orgId: ORG_A, to: '+41797654321', code: expect.stringMatching(CODE) }],
        },
      },
      {
        name: 'isPhoneVerified: verified, no SMS, a pending code voided',
        options: { sms: true },
        caller: U.managerA,
        input: input(U.alice, { isPhoneVerified: true }),
        arrange: async (h) => void (h.vars.code = await h.deps.codes.issue(U.alice, 'phone', '+41797654321')),
        then: {
          events: [changed(U.alice, ORG_A, '+41797654321', true)],
          result: async (_r, h) => expect(await h.deps.codes.verify(U.alice, 'phone', h.vars.code, '+41797654321')).toBe('missing'),
        },
      },
      {
        name: 'the same phone (after normalizing) and state: FAILED_PRECONDITION',
        caller: U.managerA,
        input: input(U.alice, { phone: '+41 79 123 45 67', isPhoneVerified: true }),
        then: { error: { code: 'FAILED_PRECONDITION', message: /phone has not changed/ } },
      },
      {
        name: 'the same phone, now unverified, is a change',
        caller: U.managerA,
        input: input(U.alice, { phone: '+41791234567' }),
        then: { events: [changed(U.alice, ORG_A, '+41791234567', false)] },
      },
      { name: 'a user without a phone gets one', caller: U.managerA, input: input(U.peerA), then: ok(U.peerA, ORG_A) },
      {
        name: 'a national number: INVALID_ARGUMENT (a global number is required)',
        caller: U.managerA,
        input: input(U.alice, { phone: '079 765 43 21' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone'], message: /starting with \+/ } },
      },
      {
        name: 'not a number: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { phone: '+41 call me' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone'] } },
      },
      {
        name: 'a phone of 51: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { phone: `+41 79 765 43 21${' '.repeat(35)}` }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone'], message: /at most 50/ } },
      },
      {
        name: 'a phone of 50 (padded) is fine',
        caller: U.managerA,
        input: input(U.alice, { phone: `+41 79 765 43 21${' '.repeat(34)}` }),
        then: ok(U.alice, ORG_A),
      },
      {
        name: 'a blank phone: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { phone: ' ' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone'], message: /must not be empty/ } },
      },
      {
        name: 'userId and phone are required',
        caller: U.managerA,
        input: {},
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.phone', 'input.userId'] } },
      },
      {
        name: 'isPhoneVerified not a boolean: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { isPhoneVerified: 'yes' }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.isPhoneVerified'] } },
      },
    ]));
});

describe('setHumanPassword', () => {
  const PW = 'New-pass1';
  const input = (userId: string, over: Record<string, unknown> = {}) => ({ userId, password: PW, ...over });
  const changed = (userId: string, owner: string, changeRequired = true, hash: unknown = expect.stringMatching(BCRYPT_4)) =>
    event('user', userId, userEvents.passwordChanged, { hash, changeRequired }, owner);
  const ok = (userId: string, owner: string): Then<unknown> => ({ events: [changed(userId, owner)], secrets: [PW], details: true });
  describe('permissions', () =>
    commandTable(
      setHumanPassword,
      orgScopedUserRows((id) => input(id), ok),
    ));
  describe('rules', () =>
    commandTable(setHumanPassword, [
      {
        name: 'the user must change it at next login by default (rule 4); the user becomes active',
        caller: U.managerA,
        input: input(U.alice),
        then: {
          ...ok(U.alice, ORG_A),
          result: async (_r, h) => {
            const state = await stateOf(h, U.alice);
            expect(state.passwordChangeRequired).toBe(true);
            expect(state.state).toBe('USER_STATE_ACTIVE');
            expect(await h.deps.hasher.verify(PW, state.passwordHash!)).toBe(true);
          },
        },
      },
      {
        name: "the password's time becomes the event's, over the one of the password set on create",
        given: [...world, facts.human('pw-user', ORG_A, { passwordHash: SEEDED_PASSWORD_HASH })],
        arrange: async (h) =>
          expect((await stateOf(h, 'pw-user')).passwordChanged).toBe((await h.events('user', 'pw-user'))[0]!.createdAt.toISOString()),
        caller: U.managerA,
        input: input('pw-user'),
        then: {
          events: [changed('pw-user', ORG_A)],
          secrets: [PW],
          result: async (_r, h, outcome) =>
            expect((await stateOf(h, 'pw-user')).passwordChanged).toBe(outcome.events[0]!.createdAt.toISOString()),
        },
      },
      {
        name: 'a first password (none on create) gets its time',
        caller: U.managerA,
        input: input(U.alice),
        arrange: async (h) => expect((await stateOf(h, U.alice)).passwordChanged).toBeUndefined(),
        then: {
          events: [changed(U.alice, ORG_A)],
          secrets: [PW],
          result: async (_r, h, outcome) =>
            expect((await stateOf(h, U.alice)).passwordChanged).toBe(outcome.events[0]!.createdAt.toISOString()),
        },
      },
      {
        name: 'noChangeRequired: no change required',
        caller: U.managerA,
        input: input(U.alice, { noChangeRequired: true }),
        then: { events: [changed(U.alice, ORG_A, false)], secrets: [PW] },
      },
      {
        name: 'noChangeRequired false: change required',
        caller: U.managerA,
        input: input(U.alice, { noChangeRequired: false }),
        then: { events: [changed(U.alice, ORG_A, true)], secrets: [PW] },
      },
      {
        name: 'the same password again is allowed',
        given: [...world, facts.human('pw-user', ORG_A, { passwordHash: SEEDED_PASSWORD_HASH })],
        caller: U.managerA,
        input: input('pw-user', { password: 'Password1!' }),
        then: { events: [changed('pw-user', ORG_A)], secrets: ['Password1!'] },
      },
      {
        name: 'a password of 72',
        caller: U.managerA,
        input: input(U.alice, { password: `Aa1!${chars(68)}` }),
        then: { events: [changed(U.alice, ORG_A)], secrets: [`Aa1!${chars(68)}`] },
      },
      {
        name: 'a password of 73: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { password: `Aa1!${chars(69)}` }),
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.password'], message: /at most 72/ } },
      },
      {
        name: '72 code points over 72 bytes: hashed with argon2id, nothing cut off',
        caller: U.managerA,
        input: input(U.alice, { password: `Aa1!${chars(68, 'é')}` }),
        then: { events: [changed(U.alice, ORG_A, true, expect.stringMatching(ARGON2ID))], secrets: [`Aa1!${chars(68, 'é')}`] },
      },
      {
        name: 'against the policy: each broken rule',
        caller: U.managerA,
        input: input(U.alice, { password: 'password' }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: ['input.password', 'input.password', 'input.password'],
            message: /upper.*digit.*symbol/,
          },
        },
      },
      {
        name: 'a blank password: INVALID_ARGUMENT',
        caller: U.managerA,
        input: input(U.alice, { password: '' }),
        then: {
          error: {
            code: 'INVALID_ARGUMENT',
            fields: Array(6).fill('input.password'),
            message: /must not be empty.*min_length.*lower.*upper.*digit.*symbol/,
          },
        },
      },
      {
        name: 'userId and password are required',
        caller: U.managerA,
        input: {},
        then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.password', 'input.userId'] } },
      },
    ]));
});

/** verifyEmail / verifyPhone: a pending code issued to the user's current address. */
function verifyRows(channel: 'email' | 'phone'): Row<any>[] {
  const address = channel === 'email' ? 'new@example.com' : '+41797654321';
  const unverified = (userId: string): Fact =>
    channel === 'email' ? facts.emailChanged(userId, address) : facts.phoneChanged(userId, address);
  const g = (...ids: string[]) => [...world, ...ids.map(unverified)];
  const issue = (userId: string) => async (h: Harness) => void (h.vars.code = await h.deps.codes.issue(userId, channel, address));
  const input = (userId: string) => (h: Harness) => ({ userId, verificationCode: h.vars.code ?? 'ABC123' });
  const type = channel === 'email' ? userEvents.emailVerified : userEvents.phoneVerified;
  const verified = (userId: string, owner: string): Then<any> => ({
    events: [event('user', userId, type, {}, owner)],
    details: false,
    result: async (_r, h) => {
      const state = await stateOf(h, userId);
      expect((channel === 'email' ? state.email : state.phone)!.isVerified).toBe(true);
    },
  });
  const denied = { error: { code: 'PERMISSION_DENIED' as const } };
  const noCode = { error: { code: 'FAILED_PRECONDITION' as const, message: new RegExp(`No valid ${channel} code`) } };
  return [
    {
      name: 'the user itself with the right code: verified, the code consumed',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.alice,
      input: input(U.alice),
      then: verified(U.alice, ORG_A),
    },
    {
      name: 'the code in lower case, with spaces around',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.alice,
      input: (h: Harness) => ({ userId: U.alice, verificationCode: ` ${h.vars.code.toLowerCase()} ` }),
      then: verified(U.alice, ORG_A),
    },
    {
      name: "ORG_USER_MANAGER of the user's org",
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.managerA,
      input: input(U.alice),
      then: verified(U.alice, ORG_A),
    },
    {
      name: 'IAM_OWNER, no header needed',
      given: g(U.bob),
      arrange: issue(U.bob),
      caller: ADMIN,
      input: input(U.bob),
      then: verified(U.bob, ORG_B),
    },
    {
      name: 'a role in another org only: PERMISSION_DENIED',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.ownerB,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'another user without role: PERMISSION_DENIED',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.settingsA,
      input: input(U.alice),
      then: denied,
    },
    {
      name: 'no escalation: ORG_USER_MANAGER on an ORG_OWNER',
      given: g(U.ownerA),
      arrange: issue(U.ownerA),
      caller: U.managerA,
      input: input(U.ownerA),
      then: { error: { code: 'PERMISSION_DENIED', message: /roles you do not hold/ } },
    },
    { name: 'an unknown user: NOT_FOUND', caller: U.alice, input: input('ghost'), then: { error: { code: 'NOT_FOUND' } } },
    {
      name: 'a wrong code: INVALID_ARGUMENT, one attempt counted, the right one still works',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.alice,
      input: (h: Harness) => ({ userId: U.alice, verificationCode: h.vars.code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' }),
      then: {
        error: { code: 'INVALID_ARGUMENT', fields: ['input.verificationCode'], message: /not valid/ },
        after: async (h) => expect(await h.deps.codes.verify(U.alice, channel, h.vars.code, address)).toBe('ok'),
      },
    },
    {
      name: 'after 5 wrong codes the code is void: FAILED_PRECONDITION',
      given: g(U.alice),
      caller: U.alice,
      input: input(U.alice),
      arrange: async (h) => {
        await issue(U.alice)(h);
        for (let i = 0; i < 5; i++)
          expect(await h.deps.codes.verify(U.alice, channel, h.vars.code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ', address)).toBe('wrong');
      },
      then: noCode,
    },
    { name: 'no pending code: FAILED_PRECONDITION', given: g(U.alice), caller: U.alice, input: input(U.alice), then: noCode },
    {
      name: 'an expired code (after 1 hour): FAILED_PRECONDITION',
      given: g(U.alice),
      arrange: async (h) => {
        await issue(U.alice)(h);
        h.clock.advance(3600_000);
      },
      caller: U.alice,
      input: input(U.alice),
      then: noCode,
    },
    {
      name: 'a code issued for an address that has changed since: FAILED_PRECONDITION',
      given: g(U.alice),
      caller: U.alice,
      input: input(U.alice),
      arrange: async (h) =>
        void (h.vars.code = await h.deps.codes.issue(U.alice, channel, channel === 'email' ? 'old@example.com' : '+41790000000')),
      then: noCode,
    },
    {
      name: 'verify twice: the second is FAILED_PRECONDITION (the code is single use)',
      given: g(U.alice),
      caller: U.alice,
      input: input(U.alice),
      arrange: async (h) => {
        await issue(U.alice)(h);
        const first = await h.when(
          (ctx) => (channel === 'email' ? verifyEmail : verifyPhone)(ctx, { userId: U.alice, verificationCode: h.vars.code }),
          { caller: U.alice },
        );
        expect(first.ok).toBe(true);
      },
      then: noCode,
    },
    {
      name: `a code of the other channel does not verify the ${channel}`,
      given: g(U.alice),
      caller: U.alice,
      input: input(U.alice),
      arrange: async (h) => void (h.vars.code = await h.deps.codes.issue(U.alice, channel === 'email' ? 'phone' : 'email', address)),
      then: noCode,
    },
    {
      name: 'a blank code, a code of 65: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, verificationCode: ' ' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.verificationCode'] } },
    },
    {
      name: 'a code of 64 passes the limit and is checked: wrong, INVALID_ARGUMENT',
      given: g(U.alice),
      arrange: issue(U.alice),
      caller: U.alice,
      input: { userId: U.alice, verificationCode: chars(64, 'A') },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.verificationCode'], message: /not valid/ } },
    },
    {
      name: 'a code of 65: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, verificationCode: chars(65, 'A') },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.verificationCode'], message: /at most 64/ } },
    },
    {
      name: 'userId is required',
      caller: U.alice,
      input: { verificationCode: 'ABC123' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    ...unauthenticatedRows<any>({ userId: U.alice, verificationCode: 'ABC123' }),
  ];
}

describe('verifyEmail', () => commandTable<any>(verifyEmail, verifyRows('email')));

describe('verifyPhone', () =>
  commandTable<any>(verifyPhone, [
    ...verifyRows('phone'),
    {
      name: 'a user without a phone: FAILED_PRECONDITION',
      caller: U.peerA,
      input: { userId: U.peerA, verificationCode: 'ABC123' },
      then: { error: { code: 'FAILED_PRECONDITION', message: /has no phone/ } },
    },
  ]));
