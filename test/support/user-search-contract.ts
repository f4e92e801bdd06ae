// The semantics of searchUsers / countUsers (src/store/read-models.ts), one suite for
// every EventStore adapter. Users are seeded through the port as addHumanUser writes
// them; each answer is checked against an expectation computed here, in plain JS, from
// what was seeded (folding, code point order and matching written out independently).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userEvents, type User } from '../../src/model/users.ts';
import { ReadLimitError } from '../../src/errors.ts';
import type { EventStore, Snapshot } from '../../src/store/port.ts';
import type { UserConditions, UserFilter, UserKey, UserSearch, UserSortField } from '../../src/store/read-models.ts';
import { facts, profileOf, type Fact, type HumanOptions } from './given.ts';

const ORG_A = 'org-a';
const ORG_B = 'org-b';

/** A seeded user as the test knows it: what it wrote, and the dates the store reported. */
export interface Model {
  id: string;
  org: string;
  username: string;
  email: string;
  displayName: string;
  firstName: string;
  lastName: string;
  state: string;
  emailVerified: boolean;
  created: number;
  changed: number;
}

export const lower = (s: string) => s.normalize('NFKC').toLowerCase();
const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

// Usernames with regex metacharacters, case variants, NFKC look-alikes (ligature, full
// width), characters beyond U+FFFF beside U+E000..U+FFFF (where UTF-16 order differs).
const NAMES = [
  'Ada',
  'ada.lovelace',
  'ADA.L',
  'adam',
  'a.b',
  'a+b',
  'a*b',
  'ab',
  '(paren)',
  '[bracket]',
  '^caret$',
  'back\\slash',
  'ﬁle',
  'file',
  'Ärger',
  'ärmel',
  'Zoë',
  '😀smile',
  '\uE000private',
  'ｆｕｌｌ',
  'straße',
  'grace',
  'Grace.Hopper',
  'x|y',
  'q?',
  'dollar$',
  '{brace}',
  'hyphen-ated',
  'under_score',
  'space name',
  'Émile',
  'émile2',
];

function humanOptions(i: number, username: string): HumanOptions {
  return {
    username,
    email:
      i % 7 === 0
        ? 'Shared@Example.com'
        : `${lower(username).replace(/[^a-z0-9]/g, '') || 'u'}${i}@${i % 3 === 0 ? 'Example.ORG' : 'example.com'}`,
    emailVerified: i % 2 === 0,
    passwordHash: i % 3 === 1 ? null : '$2y$04$Cxq5Gf.Ih4FQcZ.xMxZrNOP.f01Bc4pgdp0MRnz.VBz3bEhF08eCm',
    profile: {
      firstName: ['Ada', 'grace', 'GRETA', 'Émile', 'ﬁona'][i % 5]!,
      lastName: ['Lovelace', 'hopper', 'LOVE', 'Noether'][i % 4]!,
      displayName: i % 4 === 0 ? null : ['Dr. Who', 'dr. no', 'Doctor', 'ＤＲ. Full'][i % 4]!,
    },
  };
}

async function appendFact(store: EventStore, fact: Fact, base: Snapshot<User> | null) {
  const { snapshot } = await store.append<User>(
    {
      aggregateType: fact.aggregateType,
      aggregateId: fact.aggregateId,
      sequence: (base?.sequence ?? 0) + 1,
      type: fact.type,
      payload: fact.payload,
      creator: 'seed',
      resourceOwner: fact.resourceOwner ?? base!.resourceOwner,
    },
    { claims: fact.claims, base },
  );
  return snapshot;
}

/** Seeds one user (every fifth with a second event that changes its profile) and returns its model. */
async function seedOne(store: EventStore, i: number): Promise<Model> {
  const username = i < NAMES.length ? NAMES[i]! : `user${String(i).padStart(3, '0')}`;
  // Ids that do not follow the usernames' order, so the tie-breaker shows.
  const id = `id-${String((i * 37) % 101).padStart(3, '0')}`;
  const options = humanOptions(i, username);
  // Claimed as before usernames were folded (lower case only), so 'ﬁle' and 'file' can both be
  // stored, as by an earlier version: a search must still find both.
  const fact = { ...facts.human(id, i % 3 === 2 ? ORG_B : ORG_A, options), claims: [`username:${username.toLowerCase()}`] };
  let snap = await appendFact(store, fact, null);
  if (i % 5 === 0) {
    const profile = profileOf(id, { ...options.profile, firstName: `Renamed${i}`, lastName: 'Changed' });
    snap = await appendFact(store, { aggregateType: 'user', aggregateId: id, type: userEvents.profileChanged, payload: { profile } }, snap);
  }
  return modelOf(snap);
}

/** What a search sees of a user, worked out here from its snapshot (state: ACTIVE with a password, as seeded). */
export function modelOf(snap: Snapshot<User>): Model {
  const s = snap.state;
  return {
    id: snap.id,
    org: snap.resourceOwner,
    username: lower(s.username),
    email: lower(s.email.email),
    displayName: lower(s.profile.displayName ?? ''),
    firstName: lower(s.profile.firstName),
    lastName: lower(s.profile.lastName),
    state: s.passwordHash || s.idpLinks.length > 0 ? 'USER_STATE_ACTIVE' : 'USER_STATE_INITIAL',
    emailVerified: s.email.isVerified,
    created: snap.creationDate.getTime(),
    changed: snap.changeDate.getTime(),
  };
}

/** In waves of 6 appended together, so that dates tie (the store stamps them). */
async function seed(store: EventStore): Promise<Model[]> {
  const models: Model[] = [];
  for (let i = 0; i < 72; i += 6) models.push(...(await Promise.all([0, 1, 2, 3, 4, 5].map((j) => seedOne(store, i + j)))));
  return models;
}

// ---------------------------------------------------------------------------
// The expectation, independently.

function textOk(field: string, m: { op: string; value: string } | undefined) {
  if (!m) return true;
  if (m.op === 'EXACT') return field === m.value;
  if (m.op === 'PREFIX') return field.slice(0, m.value.length) === m.value;
  if (m.op === 'SUFFIX') return m.value.length <= field.length && field.slice(field.length - m.value.length) === m.value;
  return field.indexOf(m.value) >= 0;
}

const prefixOf = (value: string | undefined) => (value === undefined ? undefined : { op: 'PREFIX', value });

function holds(m: Model, c: UserConditions): boolean {
  return (
    textOk(m.username, c.username) &&
    textOk(m.email, c.email) &&
    textOk(m.displayName, c.displayName) &&
    textOk(m.firstName, c.firstName) &&
    textOk(m.lastName, c.lastName) &&
    textOk(m.displayName, prefixOf(c.displayNamePrefix)) &&
    textOk(m.firstName, prefixOf(c.firstNamePrefix)) &&
    textOk(m.lastName, prefixOf(c.lastNamePrefix)) &&
    (c.state === undefined || m.state === c.state) &&
    (c.emailVerified === undefined || m.emailVerified === c.emailVerified) &&
    (!c.createdFrom || m.created >= c.createdFrom.getTime()) &&
    (!c.createdTo || m.created < c.createdTo.getTime()) &&
    (!c.ids || c.ids.indexOf(m.id) >= 0) &&
    (!c.emails || c.emails.indexOf(m.email) >= 0) &&
    (c.allOf ?? []).every((sub) => holds(m, sub)) &&
    (!c.anyOf || c.anyOf.some((sub) => holds(m, sub))) &&
    (!c.not || !holds(m, c.not))
  );
}

export function expected(models: Model[], f: UserFilter): Model[] {
  return models.filter((m) => (f.orgId === undefined || m.org === f.orgId) && holds(m, f));
}

const keyOf = (m: Model, sort: UserSortField): UserKey => ({
  value: sort === 'USERNAME' ? m.username : sort === 'CREATION_DATE' ? m.created : m.changed,
  id: m.id,
});

function compare(a: UserKey, b: UserKey): number {
  const v = typeof a.value === 'number' ? (a.value as number) - (b.value as number) : utf8(a.value as string, b.value as string);
  return v || utf8(a.id, b.id);
}

export function ordered(models: Model[], sort: UserSortField, descending: boolean): Model[] {
  return [...models].sort((a, b) => (descending ? -1 : 1) * compare(keyOf(a, sort), keyOf(b, sort)));
}

// ---------------------------------------------------------------------------

export function userSearchContract(open: () => Promise<EventStore>) {
  let store: EventStore;
  let models: Model[];
  const byId = (id: string) => models.find((m) => m.id === id)!;

  beforeAll(async () => {
    store = await open();
    models = await seed(store);
  });
  afterAll(async () => store?.close());

  /** Every row of a search, page after page of `pageSize` with the keyset of the last row. */
  async function all(search: Omit<UserSearch, 'limit' | 'after'>, pageSize = 1000): Promise<string[]> {
    const ids: string[] = [];
    let after: UserKey | undefined;
    for (;;) {
      const page = await store.searchUsers<User>({ ...search, after, limit: pageSize });
      expect(page.length).toBeLessThanOrEqual(pageSize);
      ids.push(...page.map((s) => s.id));
      if (page.length < pageSize) return ids;
      after = keyOf(byId(page.at(-1)!.id), search.sort);
    }
  }

  it('seeds what the cases below need: both organizations, both states, ties of folded usernames and of dates', () => {
    expect(new Set(models.map((m) => m.org))).toEqual(new Set([ORG_A, ORG_B]));
    expect(new Set(models.map((m) => m.state))).toEqual(new Set(['USER_STATE_ACTIVE', 'USER_STATE_INITIAL']));
    expect(models.filter((m) => m.username === 'file')).toHaveLength(2);
    expect(new Set(models.map((m) => m.created)).size).toBeLessThan(models.length);
  });

  const filters: [string, (m: Model[]) => UserFilter][] = [
    ['no filter', () => ({})],
    ['username EXACT, folded (Ada, ADA.L)', () => ({ username: { op: 'EXACT', value: 'ada' } })],
    ['username EXACT matches NFKC look-alikes (ﬁle, file)', () => ({ username: { op: 'EXACT', value: 'file' } })],
    ['username EXACT on a name with a regex metacharacter', () => ({ username: { op: 'EXACT', value: '^caret$' } })],
    ['username PREFIX', () => ({ username: { op: 'PREFIX', value: 'ada' } })],
    ['username PREFIX with "." taken literally', () => ({ username: { op: 'PREFIX', value: 'a.' } })],
    ['username PREFIX "a+"', () => ({ username: { op: 'PREFIX', value: 'a+' } })],
    ['username PREFIX "a*"', () => ({ username: { op: 'PREFIX', value: 'a*' } })],
    ['username PREFIX "("', () => ({ username: { op: 'PREFIX', value: '(' } })],
    ['username PREFIX "["', () => ({ username: { op: 'PREFIX', value: '[' } })],
    ['username PREFIX "back\\"', () => ({ username: { op: 'PREFIX', value: 'back\\' } })],
    ['username PREFIX "x|"', () => ({ username: { op: 'PREFIX', value: 'x|' } })],
    ['username PREFIX "{"', () => ({ username: { op: 'PREFIX', value: '{' } })],
    ['username PREFIX non-ASCII (är)', () => ({ username: { op: 'PREFIX', value: 'är' } })],
    ['username PREFIX beyond U+FFFF', () => ({ username: { op: 'PREFIX', value: '😀' } })],
    ['username PREFIX empty: everyone', () => ({ username: { op: 'PREFIX', value: '' } })],
    ['username CONTAINS', () => ({ username: { op: 'CONTAINS', value: 'love' } })],
    ['username CONTAINS a metacharacter ("?")', () => ({ username: { op: 'CONTAINS', value: '?' } })],
    ['username CONTAINS "$"', () => ({ username: { op: 'CONTAINS', value: '$' } })],
    ['username CONTAINS "ß"', () => ({ username: { op: 'CONTAINS', value: 'ß' } })],
    ['username CONTAINS a space', () => ({ username: { op: 'CONTAINS', value: ' ' } })],
    ['email EXACT, folded (Shared@Example.com)', () => ({ email: { op: 'EXACT', value: 'shared@example.com' } })],
    ['email PREFIX', () => ({ email: { op: 'PREFIX', value: 'ada' } })],
    ['email CONTAINS, folded (Example.ORG)', () => ({ email: { op: 'CONTAINS', value: '@example.org' } })],
    ['displayName PREFIX, folded', () => ({ displayNamePrefix: 'dr.' })],
    ['displayName PREFIX, NFKC (ＤＲ.)', () => ({ displayNamePrefix: 'dr. f' })],
    ['firstName PREFIX, a changed profile seen', () => ({ firstNamePrefix: 'renamed' })],
    ['firstName PREFIX, NFKC (ﬁona)', () => ({ firstNamePrefix: 'fi' })],
    ['lastName PREFIX', () => ({ lastNamePrefix: 'love' })],
    ['state ACTIVE', () => ({ state: 'USER_STATE_ACTIVE' })],
    ['state INITIAL', () => ({ state: 'USER_STATE_INITIAL' })],
    ['emailVerified true', () => ({ emailVerified: true })],
    ['emailVerified false', () => ({ emailVerified: false })],
    ['createdFrom (inclusive)', (m) => ({ createdFrom: new Date(m[30]!.created) })],
    ['createdTo (exclusive)', (m) => ({ createdTo: new Date(m[30]!.created) })],
    ['createdFrom and createdTo', (m) => ({ createdFrom: new Date(m[10]!.created), createdTo: new Date(m[50]!.created) })],
    ['username SUFFIX', () => ({ username: { op: 'SUFFIX', value: 'le' } })],
    [
      'username SUFFIX with a metacharacter ("$"), beyond U+FFFF, and the whole name',
      () => ({
        anyOf: [
          { username: { op: 'SUFFIX', value: '$' } },
          { username: { op: 'SUFFIX', value: '😀smile' } },
          { username: { op: 'SUFFIX', value: 'q?' } },
        ],
      }),
    ],
    ['email SUFFIX, folded (Example.ORG)', () => ({ email: { op: 'SUFFIX', value: '.org' } })],
    ['username SUFFIX empty: everyone', () => ({ username: { op: 'SUFFIX', value: '' } })],
    [
      'firstName, lastName, displayName with every operator',
      () => ({
        firstName: { op: 'CONTAINS', value: 'a' },
        lastName: { op: 'SUFFIX', value: 'e' },
        displayName: { op: 'EXACT', value: 'dr. no' },
      }),
    ],
    ['ids: some seeded, one unknown, one twice', (m) => ({ ids: [m[3]!.id, m[40]!.id, 'no-such-id', m[3]!.id, m[71]!.id] })],
    ['ids: an empty list matches none', () => ({ ids: [] })],
    ['emails: folded, exact, shared by several', (m) => ({ emails: ['shared@example.com', m[1]!.email, 'nobody@example.com'] })],
    [
      'anyOf: either of two conditions',
      () => ({ anyOf: [{ username: { op: 'PREFIX', value: 'ada' } }, { email: { op: 'SUFFIX', value: '.org' } }] }),
    ],
    ['anyOf: an empty list matches none', () => ({ anyOf: [] })],
    ['not: all but a prefix', () => ({ not: { username: { op: 'PREFIX', value: 'a' } } })],
    ['not of not: the condition itself', () => ({ not: { not: { state: 'USER_STATE_INITIAL' } } })],
    [
      'allOf: one field twice',
      () => ({ allOf: [{ username: { op: 'PREFIX', value: 'a' } }, { username: { op: 'CONTAINS', value: 'b' } }] }),
    ],
    [
      'nested: ids or (state and not emailVerified), beside a prefix',
      (m) => ({
        lastNamePrefix: 'l',
        anyOf: [{ ids: m.slice(0, 20).map((x) => x.id) }, { state: 'USER_STATE_ACTIVE', not: { emailVerified: true } }],
      }),
    ],
    [
      'everything at once',
      (m) => ({
        username: { op: 'CONTAINS', value: 'e' },
        email: { op: 'CONTAINS', value: 'example' },
        state: 'USER_STATE_ACTIVE',
        emailVerified: true,
        createdFrom: new Date(m[0]!.created),
        lastNamePrefix: '',
      }),
    ],
  ];

  for (const [name, filterOf] of filters) {
    for (const orgId of [undefined, ORG_A, ORG_B]) {
      it(`filter: ${name} (${orgId ?? 'every organization'})`, async () => {
        const filter = { ...filterOf(models), orgId };
        const want = ordered(expected(models, filter), 'USERNAME', false).map((m) => m.id);
        expect(await all({ filter, sort: 'USERNAME', descending: false })).toEqual(want);
        expect(await store.countUsers(filter)).toBe(want.length);
      });
    }
  }

  it('the filters above are not vacuous: most match some users and miss others, the ones named so match all or none', () => {
    const all = (name: string) => /everyone|no filter/.test(name);
    const none = (name: string) => /matches none/.test(name);
    const counts = filters.map(([name, f]) => [name, expected(models, f(models)).length] as const);
    const between = counts.filter(([name]) => !all(name) && !none(name));
    expect(between.filter(([, n]) => n > 0 && n < models.length).length).toBeGreaterThan(between.length - 3);
    for (const [name, n] of counts) if (all(name) || none(name)) expect(n, name).toBe(all(name) ? models.length : 0);
  });

  for (const sort of ['USERNAME', 'CREATION_DATE', 'CHANGE_DATE'] as const) {
    for (const descending of [false, true]) {
      for (const orgId of [ORG_A, undefined]) {
        it(`order ${sort} ${descending ? 'DESC' : 'ASC'} (${orgId ?? 'every organization'}): page by page, each row once, in order`, async () => {
          const want = ordered(expected(models, { orgId }), sort, descending).map((m) => m.id);
          expect(await all({ filter: { orgId }, sort, descending }, 7)).toEqual(want);
          expect(await all({ filter: { orgId }, sort, descending }, 1000)).toEqual(want);
        });
      }
    }
  }

  it('after a key that no row has: the rows strictly after it, both directions', async () => {
    for (const descending of [false, true]) {
      const after = { value: 'b', id: '' };
      const want = ordered(models, 'USERNAME', descending).filter((m) => (descending ? -1 : 1) * compare(keyOf(m, 'USERNAME'), after) > 0);
      const got = await store.searchUsers({ filter: {}, sort: 'USERNAME', descending, after, limit: 1000 });
      expect(got.map((s) => s.id)).toEqual(want.map((m) => m.id));
    }
    const at = ordered(models, 'CREATION_DATE', false)[20]!;
    const after = { value: at.created, id: at.id };
    const got = await store.searchUsers({ filter: {}, sort: 'CREATION_DATE', descending: false, after, limit: 5 });
    const want = ordered(models, 'CREATION_DATE', false).slice(21, 26);
    expect(got.map((s) => s.id)).toEqual(want.map((m) => m.id));
  });

  it('after the key of a row that shares its value with others: the tie-breaker is the id', async () => {
    const twins = ordered(
      models.filter((m) => m.username === 'file'),
      'USERNAME',
      false,
    );
    const got = await store.searchUsers({ filter: {}, sort: 'USERNAME', descending: false, after: keyOf(twins[0]!, 'USERNAME'), limit: 1 });
    expect(got.map((s) => s.id)).toEqual([twins[1]!.id]);
  });

  it('limit: at most that many, the first ones; 0 gives none', async () => {
    const want = ordered(models, 'USERNAME', false).map((m) => m.id);
    expect((await store.searchUsers({ filter: {}, sort: 'USERNAME', descending: false, limit: 3 })).map((s) => s.id)).toEqual(
      want.slice(0, 3),
    );
    expect(await store.searchUsers({ filter: {}, sort: 'USERNAME', descending: false, limit: 0 })).toEqual([]);
  });

  it('answers whole snapshots, owned by the organization searched', async () => {
    const page = await store.searchUsers<User>({ filter: { orgId: ORG_B }, sort: 'CHANGE_DATE', descending: true, limit: 1000 });
    expect(page.length).toBe(models.filter((m) => m.org === ORG_B).length);
    for (const snap of page) {
      const loaded = await store.load<User>('user', snap.id);
      expect(snap).toEqual(loaded);
      expect(snap.resourceOwner).toBe(ORG_B);
    }
  });

  it('sees a write at once: a changed profile is found by its new name only', async () => {
    const target = models.find((m) => m.org === ORG_A && !m.firstName.startsWith('renamed'))!;
    const before = (await store.load<User>('user', target.id))!;
    const profile = { ...before.state.profile, firstName: 'Zzyzx' };
    await appendFact(
      store,
      { aggregateType: 'user', aggregateId: target.id, type: userEvents.profileChanged, payload: { profile } },
      before,
    );
    const found = await store.searchUsers({
      filter: { orgId: ORG_A, firstNamePrefix: 'zzyzx' },
      sort: 'USERNAME',
      descending: false,
      limit: 10,
    });
    expect(found.map((s) => s.id)).toEqual([target.id]);
    const old = await store.searchUsers({
      filter: { firstNamePrefix: target.firstName },
      sort: 'USERNAME',
      descending: false,
      limit: 1000,
    });
    expect(old.map((s) => s.id)).not.toContain(target.id);
    target.firstName = 'zzyzx';
    target.changed = (await store.load<User>('user', target.id))!.changeDate.getTime();
  });

  it('answers whole users while they are being written: each as one of its versions', async () => {
    // Each write sets first and last name to the same new value: a user whose two differ is half-written.
    const targets = models.filter((m) => m.org === ORG_B).slice(0, 5);
    const rename = async (m: Model, name: string) => {
      const base = (await store.load<User>('user', m.id))!;
      const snap = await appendFact(
        store,
        {
          aggregateType: 'user',
          aggregateId: m.id,
          type: userEvents.profileChanged,
          payload: { profile: { ...base.state.profile, firstName: name, lastName: name } },
        },
        base,
      );
      Object.assign(m, { firstName: lower(name), lastName: lower(name), changed: snap.changeDate.getTime() });
    };
    await Promise.all(targets.map((m) => rename(m, 'Same0')));
    let seen = 0;
    for (let round = 1; round <= 20; round++) {
      const [, page] = await Promise.all([
        Promise.all(targets.map((m) => rename(m, `Same${round}`))),
        store.searchUsers<User>({ filter: { orgId: ORG_B }, sort: 'USERNAME', descending: false, limit: 1000 }),
      ]);
      for (const snap of page.filter((u) => targets.some((m) => m.id === u.id))) {
        expect(snap.state.profile.lastName).toBe(snap.state.profile.firstName);
        expect([`Same${round - 1}`, `Same${round}`]).toContain(snap.state.profile.firstName);
        seen++;
      }
    }
    expect(seen).toBe(20 * targets.length);
  });
  it('maxBytes: a page or a loadMany stops before the state that would pass it, and says how many fit', async () => {
    // Four users of about 200,000 characters each (metadata), in an organization of their own.
    const value = (seed: number) => Buffer.alloc(75_000, seed).toString('base64'); // 100,000 characters
    const heavy = await Promise.all(
      ['heavy-a', 'heavy-b', 'heavy-c', 'heavy-d'].map((username, i) =>
        appendFact(
          store,
          facts.human(`id-${username}`, 'org-heavy', {
            username,
            metadata: [
              { key: 'a', value: value(i) },
              { key: 'b', value: value(i + 10) },
            ],
          }),
          null,
        ),
      ),
    );
    const search: UserSearch = { filter: { orgId: 'org-heavy' }, sort: 'USERNAME', descending: false, limit: 10 };
    expect((await store.searchUsers(search)).map((u) => u.id)).toEqual(heavy.map((u) => u.id));
    const cut = await store.searchUsers({ ...search, maxBytes: 500_000 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(cut).toBeInstanceOf(ReadLimitError);
    expect((cut as ReadLimitError).fitted).toBe(2);
    const fits = await store.searchUsers<User>({ ...search, limit: 2, maxBytes: 500_000 });
    expect(fits.map((u) => u.id)).toEqual(heavy.slice(0, 2).map((u) => u.id));
    expect(fits[1]!.state.metadata.map((m) => m.value)).toEqual([value(1), value(11)]);
    // Small users are not held back by the same budget.
    const small = { filter: { orgId: ORG_A }, sort: 'USERNAME', descending: false, limit: 1000 } as const;
    expect((await store.searchUsers({ ...small, maxBytes: 500_000 })).map((u) => u.id)).toEqual(
      (await store.searchUsers(small)).map((u) => u.id),
    );

    await expect(
      store.loadMany(
        'user',
        heavy.map((u) => u.id),
        500_000,
      ),
    ).rejects.toBeInstanceOf(ReadLimitError);
    expect(
      [
        ...(
          await store.loadMany(
            'user',
            heavy.slice(2).map((u) => u.id),
            500_000,
          )
        ).keys(),
      ].sort(),
    ).toEqual(heavy.slice(2).map((u) => u.id));
    expect(
      (
        await store.loadMany(
          'user',
          heavy.map((u) => u.id),
        )
      ).size,
    ).toBe(4);
  });
}
