// User search on MongoDB (src/store/read-models.ts): each user state document carries
// its searchable fields in a `search` sub-document, written by the same update as the
// state (mongo.ts saveState), so catch-up and repair keep it right. Here: the indexes,
// the queries, and the backfill of documents written before the fields existed.
import type { Collection, Document, Filter, IndexDescription, Sort } from 'mongodb';
import type { UserProjection } from './port.ts';
import type { TextMatch, UserFilter, UserKey, UserSearch, UserSortField } from './read-models.ts';

/** The sub-document of a user state document that searches look at. */
export const SEARCH_FIELD = 'search';

const sortPath: Record<UserSortField, string> = {
  USERNAME: `${SEARCH_FIELD}.username`,
  CREATION_DATE: 'creationDate',
  CHANGE_DATE: 'changeDate',
};

/**
 * One index per order with the organization first (an organization's search is one
 * index range), the same without it for instance-wide searches, and one for email
 * filters. _id last: the tie-breaker of the keyset. Traversed backwards for DESC.
 */
export const userSearchIndexes: IndexDescription[] = [
  { key: { resourceOwner: 1, [sortPath.USERNAME]: 1, _id: 1 }, name: 'search_org_username' },
  { key: { resourceOwner: 1, creationDate: 1, _id: 1 }, name: 'search_org_created' },
  { key: { resourceOwner: 1, changeDate: 1, _id: 1 }, name: 'search_org_changed' },
  { key: { resourceOwner: 1, [`${SEARCH_FIELD}.email`]: 1, _id: 1 }, name: 'search_org_email' },
  { key: { [sortPath.USERNAME]: 1, _id: 1 }, name: 'search_username' },
  { key: { creationDate: 1, _id: 1 }, name: 'search_created' },
  { key: { changeDate: 1, _id: 1 }, name: 'search_changed' },
];

/**
 * Creates the search indexes that are missing. Only those: FerretDB v1 drops the
 * connection when createIndexes names several indexes that exist already.
 */
export async function ensureUserSearchIndexes(users: Collection<Document>): Promise<void> {
  const existing = await users
    .listIndexes()
    .toArray()
    .catch((e: unknown) => {
      if ((e as { code?: unknown }).code === 26) return []; // NamespaceNotFound: no users yet
      throw e;
    });
  const names = new Set(existing.map((i) => i.name as string));
  const missing = userSearchIndexes.filter((i) => !names.has(i.name!));
  if (missing.length > 0) await users.createIndexes(missing);
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// PREFIX is an anchored, case-sensitive regex on the folded field: MongoDB turns it
// into an index range. CONTAINS cannot use one, but runs on the index keys.
function text(path: string, match: TextMatch): Filter<Document> {
  const escaped = escapeRegex(match.value);
  if (match.op === 'EXACT') return { [path]: match.value };
  return { [path]: { $regex: match.op === 'PREFIX' ? `^${escaped}` : escaped } };
}

function conditions(f: UserFilter): Filter<Document>[] {
  const all: Filter<Document>[] = [];
  const field = (name: string) => `${SEARCH_FIELD}.${name}`;
  if (f.orgId !== undefined) all.push({ resourceOwner: f.orgId });
  if (f.username) all.push(text(field('username'), f.username));
  if (f.email) all.push(text(field('email'), f.email));
  if (f.displayNamePrefix !== undefined) all.push(text(field('displayName'), { op: 'PREFIX', value: f.displayNamePrefix }));
  if (f.firstNamePrefix !== undefined) all.push(text(field('firstName'), { op: 'PREFIX', value: f.firstNamePrefix }));
  if (f.lastNamePrefix !== undefined) all.push(text(field('lastName'), { op: 'PREFIX', value: f.lastNamePrefix }));
  if (f.state !== undefined) all.push({ [field('state')]: f.state });
  if (f.emailVerified !== undefined) all.push({ [field('emailVerified')]: f.emailVerified });
  if (f.createdFrom || f.createdTo) {
    all.push({ creationDate: { ...(f.createdFrom && { $gte: f.createdFrom }), ...(f.createdTo && { $lt: f.createdTo }) } });
  }
  return all;
}

/**
 * Rows after (value, id): `$or: [{v > value}, {v = value, _id > id}]` (mirrored for
 * DESC). The bound on v alone in front of it is implied by the $or; it gives the
 * planner a tight range on the sort index even when it keeps the $or as a filter.
 */
function after(path: string, key: UserKey, descending: boolean): Filter<Document>[] {
  const value = path === sortPath.USERNAME ? key.value : new Date(key.value);
  const [beyond, from] = descending ? ['$lt', '$lte'] : ['$gt', '$gte'];
  return [{ [path]: { [from]: value } }, { $or: [{ [path]: { [beyond]: value } }, { [path]: value, _id: { [beyond]: key.id } }] }];
}

const and = (all: Filter<Document>[]): Filter<Document> => (all.length === 0 ? {} : all.length === 1 ? all[0]! : { $and: all });

export const userFilterQuery = (filter: UserFilter): Filter<Document> => and(conditions(filter));

export function userSearchQuery(search: UserSearch): { filter: Filter<Document>; sort: Sort } {
  const path = sortPath[search.sort];
  const all = conditions(search.filter);
  if (search.after) all.push(...after(path, search.after, search.descending));
  const direction = search.descending ? -1 : 1;
  return { filter: and(all), sort: { [path]: direction, _id: direction } };
}

/**
 * Gives `search` to the user state documents written before it existed (an upgrade),
 * in _id order, each write conditional on the sequence it was computed from (a newer
 * document was written by saveState, with its fields).
 */
export async function backfillUserSearch(users: Collection<Document>, project: UserProjection, batch = 500): Promise<number> {
  let done = 0;
  let last: unknown;
  for (;;) {
    const missing: Document = { [SEARCH_FIELD]: { $exists: false }, ...(last !== undefined && { _id: { $gt: last } }) };
    const docs = await users.find(missing, { projection: { state: 1, sequence: 1 } }).sort({ _id: 1 }).limit(batch).toArray();
    for (const doc of docs) {
      const result = await users.updateOne({ _id: doc._id, sequence: doc.sequence }, { $set: { [SEARCH_FIELD]: project(doc.state) } });
      done += result.modifiedCount;
    }
    if (docs.length < batch) return done;
    last = docs.at(-1)!._id;
  }
}
