// User search over snapshots held in memory (the embedded store): a scan that
// filters and sorts with the semantics written down in src/store/read-models.ts.
import type { EventStore, Snapshot, UserProjection } from './port.ts';
import type { TextMatch, UserConditions, UserFilter, UserKey, UserSearch, UserSearchFields } from './read-models.ts';
import { userKey } from './read-models.ts';
import { snapshotWeight } from './weight.ts';
import { ReadLimitError } from '../errors.ts';

/** Code point order (UTF-8 byte order), not UTF-16 unit order: they differ where a surrogate meets U+E000..U+FFFF. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    return xs === ys ? x - y : xs ? 1 : -1;
  }
  return a.length - b.length;
}

export function compareKeys(a: UserKey, b: UserKey): number {
  const byValue =
    typeof a.value === 'number' && typeof b.value === 'number' ? a.value - b.value : compareCodePoints(String(a.value), String(b.value));
  return byValue !== 0 ? byValue : compareCodePoints(a.id, b.id);
}

function matches(field: string, m: TextMatch): boolean {
  switch (m.op) {
    case 'EXACT':
      return field === m.value;
    case 'PREFIX':
      return field.startsWith(m.value);
    case 'SUFFIX':
      return field.endsWith(m.value);
    default:
      return field.includes(m.value);
  }
}

interface Row {
  snapshot: Snapshot<unknown>;
  fields: UserSearchFields;
}

type Test = (row: Row) => boolean;

/** The conditions as one test, compiled once per search (the id and email lists as sets). */
function compile(c: UserConditions): Test {
  const tests: Test[] = [];
  const text = (pick: (f: UserSearchFields) => string, m: TextMatch | undefined) => m && tests.push((r) => matches(pick(r.fields), m));
  const prefix = (pick: (f: UserSearchFields) => string, p: string | undefined) =>
    p !== undefined && text(pick, { op: 'PREFIX', value: p });
  text((f) => f.username, c.username);
  text((f) => f.email, c.email);
  text((f) => f.displayName, c.displayName);
  text((f) => f.firstName, c.firstName);
  text((f) => f.lastName, c.lastName);
  prefix((f) => f.displayName, c.displayNamePrefix);
  prefix((f) => f.firstName, c.firstNamePrefix);
  prefix((f) => f.lastName, c.lastNamePrefix);
  if (c.state !== undefined) tests.push((r) => r.fields.state === c.state);
  if (c.emailVerified !== undefined) tests.push((r) => r.fields.emailVerified === c.emailVerified);
  if (c.createdFrom) tests.push((r) => r.snapshot.creationDate.getTime() >= c.createdFrom!.getTime());
  if (c.createdTo) tests.push((r) => r.snapshot.creationDate.getTime() < c.createdTo!.getTime());
  if (c.ids) {
    const ids = new Set(c.ids);
    tests.push((r) => ids.has(r.snapshot.id));
  }
  if (c.emails) {
    const emails = new Set(c.emails);
    tests.push((r) => emails.has(r.fields.email));
  }
  if (c.allOf) tests.push(...c.allOf.map(compile));
  if (c.anyOf) {
    const any = c.anyOf.map(compile);
    tests.push((r) => any.some((t) => t(r)));
  }
  if (c.not) {
    const not = compile(c.not);
    tests.push((r) => !not(r));
  }
  return (r) => tests.every((t) => t(r));
}

function compileFilter(f: UserFilter): Test {
  const conditions = compile(f);
  return (r) => (f.orgId === undefined || r.snapshot.resourceOwner === f.orgId) && conditions(r);
}

/**
 * searchUsers and countUsers over `users()` (the current user snapshots). A snapshot
 * is replaced, never changed, on each write, so its fields are computed once.
 */
export function createMemoryUserSearch(
  users: () => Iterable<Snapshot<unknown>>,
  project: UserProjection | undefined,
): Pick<EventStore, 'searchUsers' | 'countUsers'> {
  const cache = new WeakMap<Snapshot<unknown>, UserSearchFields>();
  function* rows(filter: UserFilter): Generator<Row> {
    if (!project) throw new Error('user search needs the userFields option');
    const passes = compileFilter(filter);
    for (const snapshot of users()) {
      let fields = cache.get(snapshot);
      if (!fields) cache.set(snapshot, (fields = project(snapshot.state)));
      const row = { snapshot, fields };
      if (passes(row)) yield row;
    }
  }

  return {
    searchUsers: async <S>(search: UserSearch) => {
      const sign = search.descending ? -1 : 1;
      const keyed = [...rows(search.filter)].map((row) => ({ row, key: userKey(search.sort, { ...row.snapshot, fields: row.fields }) }));
      const after = search.after;
      const page = keyed
        .filter(({ key }) => !after || sign * compareKeys(key, after) > 0)
        .sort((a, b) => sign * compareKeys(a.key, b.key))
        .slice(0, Math.max(0, search.limit))
        .map(({ row }) => row.snapshot as Snapshot<S>);
      if (search.maxBytes !== undefined) {
        let weight = 0;
        for (const [i, user] of page.entries())
          if ((weight += snapshotWeight(user)) > search.maxBytes) throw new ReadLimitError(search.maxBytes, i);
      }
      return page;
    },
    countUsers: async (filter) => {
      let n = 0;
      for (const _ of rows(filter)) n++;
      return n;
    },
  };
}
