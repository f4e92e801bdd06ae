// User search over snapshots held in memory (the embedded store): a scan that
// filters and sorts with the semantics written down in src/store/read-models.ts.
import type { EventStore, Snapshot, UserProjection } from './port.ts';
import type { TextMatch, UserFilter, UserKey, UserSearch, UserSearchFields } from './read-models.ts';
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
  return m.op === 'EXACT' ? field === m.value : m.op === 'PREFIX' ? field.startsWith(m.value) : field.includes(m.value);
}

interface Row {
  snapshot: Snapshot<unknown>;
  fields: UserSearchFields;
}

function passes(f: UserFilter, { snapshot, fields }: Row): boolean {
  const created = snapshot.creationDate.getTime();
  return (
    (f.orgId === undefined || snapshot.resourceOwner === f.orgId) &&
    (!f.username || matches(fields.username, f.username)) &&
    (!f.email || matches(fields.email, f.email)) &&
    (f.displayNamePrefix === undefined || fields.displayName.startsWith(f.displayNamePrefix)) &&
    (f.firstNamePrefix === undefined || fields.firstName.startsWith(f.firstNamePrefix)) &&
    (f.lastNamePrefix === undefined || fields.lastName.startsWith(f.lastNamePrefix)) &&
    (f.state === undefined || fields.state === f.state) &&
    (f.emailVerified === undefined || fields.emailVerified === f.emailVerified) &&
    (!f.createdFrom || created >= f.createdFrom.getTime()) &&
    (!f.createdTo || created < f.createdTo.getTime())
  );
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
    for (const snapshot of users()) {
      let fields = cache.get(snapshot);
      if (!fields) cache.set(snapshot, (fields = project(snapshot.state)));
      const row = { snapshot, fields };
      if (passes(filter, row)) yield row;
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
        for (const [i, user] of page.entries()) if ((weight += snapshotWeight(user)) > search.maxBytes) throw new ReadLimitError(search.maxBytes, i);
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
