// User search on MongoDB (src/store/read-models.ts): each user state document carries
// its searchable fields in a `search` sub-document, written by the same update as the
// state (mongo.ts saveState), so catch-up and repair keep it right. Here: the indexes,
// the queries, and the backfill of documents written before the fields existed.
import type { Collection, Document, Filter, IndexDescription, Sort } from 'mongodb';
import type { Logger } from '../log.ts';
import { startProgress, type ProgressObserver } from '../progress.ts';
import type { UserProjection } from './port.ts';
import type { TextMatch, UserConditions, UserFilter, UserKey, UserSearch, UserSortField } from './read-models.ts';

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

const and = (all: Filter<Document>[]): Filter<Document> => (all.length === 0 ? {} : all.length === 1 ? all[0]! : { $and: all });

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// PREFIX is an anchored, case-sensitive regex on the folded field: MongoDB turns it
// into an index range. CONTAINS and SUFFIX cannot use one, but run on the index keys.
// SUFFIX ends in \z, not $: $ also matches before a final newline.
function text(path: string, match: TextMatch): Filter<Document> {
  const escaped = escapeRegex(match.value);
  if (match.op === 'EXACT') return { [path]: match.value };
  const pattern = match.op === 'PREFIX' ? `^${escaped}` : match.op === 'SUFFIX' ? `${escaped}\\z` : escaped;
  return { [path]: { $regex: pattern } };
}

/** Matches no document when empty (MongoDB refuses an empty $or). The driver types _id as an ObjectId; ids here are strings. */
const idIn = (ids: readonly string[]) => ({ _id: { $in: ids } }) as unknown as Filter<Document>;
const NOTHING = idIn([]);

function conditions(c: UserConditions, all: Filter<Document>[] = []): Filter<Document>[] {
  const field = (name: string) => `${SEARCH_FIELD}.${name}`;
  if (c.username) all.push(text(field('username'), c.username));
  if (c.email) all.push(text(field('email'), c.email));
  if (c.displayName) all.push(text(field('displayName'), c.displayName));
  if (c.firstName) all.push(text(field('firstName'), c.firstName));
  if (c.lastName) all.push(text(field('lastName'), c.lastName));
  if (c.displayNamePrefix !== undefined) all.push(text(field('displayName'), { op: 'PREFIX', value: c.displayNamePrefix }));
  if (c.firstNamePrefix !== undefined) all.push(text(field('firstName'), { op: 'PREFIX', value: c.firstNamePrefix }));
  if (c.lastNamePrefix !== undefined) all.push(text(field('lastName'), { op: 'PREFIX', value: c.lastNamePrefix }));
  if (c.state !== undefined) all.push({ [field('state')]: c.state });
  if (c.emailVerified !== undefined) all.push({ [field('emailVerified')]: c.emailVerified });
  if (c.createdFrom || c.createdTo) {
    all.push({ creationDate: { ...(c.createdFrom && { $gte: c.createdFrom }), ...(c.createdTo && { $lt: c.createdTo }) } });
  }
  // One index lookup per id (the _id index), per email (search_org_email with the organization).
  if (c.ids) all.push(idIn(c.ids));
  if (c.emails) all.push({ [field('email')]: { $in: c.emails } });
  for (const sub of c.allOf ?? []) conditions(sub, all);
  if (c.anyOf) all.push(c.anyOf.length > 0 ? { $or: c.anyOf.map((sub) => and(conditions(sub))) } : NOTHING);
  if (c.not) all.push({ $nor: [and(conditions(c.not))] });
  return all;
}

const filterConditions = (f: UserFilter): Filter<Document>[] => conditions(f, f.orgId !== undefined ? [{ resourceOwner: f.orgId }] : []);

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

/** True when an id list must hold (at the top, or in an allOf there). */
const listsIds = (c: UserConditions): boolean => c.ids !== undefined || (c.allOf ?? []).some(listsIds);

export const userFilterQuery = (filter: UserFilter): Filter<Document> => and(filterConditions(filter));

export function userSearchQuery(search: UserSearch): { filter: Filter<Document>; sort: Sort; hint?: Document } {
  const path = sortPath[search.sort];
  const all = filterConditions(search.filter);
  if (search.after) all.push(...after(path, search.after, search.descending));
  const direction = search.descending ? -1 : 1;
  // An id list bounds the rows to its length: looked up in _id and sorted, rather than the
  // organization's range of the order's index walked to save the sort (which a planner may
  // prefer when it cannot tell how many users the organization has).
  const hint = listsIds(search.filter) ? { _id: 1 } : undefined;
  return { filter: and(all), sort: { [path]: direction, _id: direction }, ...(hint && { hint }) };
}

export const BACKFILL_WORK = 'user_search_backfill';

/** Where the backfill's progress goes. */
export interface BackfillReport {
  logger: Logger;
  intervalMs: number;
  observe?: ProgressObserver;
}

/**
 * Gives `search` to the user state documents written before it existed (an upgrade),
 * in _id order, each write conditional on the sequence it was computed from (a newer
 * document was written by saveState, with its fields).
 */
export async function backfillUserSearch(
  users: Collection<Document>,
  project: UserProjection,
  report: BackfillReport,
  batch = 500,
): Promise<number> {
  let done = 0;
  let seen = 0;
  let last: unknown;
  // Counted first, so that a long backfill (an upgrade of a large database) says how far it is;
  // nothing is logged when there is nothing to do (every start after the first).
  const total = await users.countDocuments({ [SEARCH_FIELD]: { $exists: false } });
  if (total === 0) return 0;
  const progress = startProgress({ work: BACKFILL_WORK, unit: 'users', total, ...report });
  for (;;) {
    const missing: Document = { [SEARCH_FIELD]: { $exists: false }, ...(last !== undefined && { _id: { $gt: last } }) };
    const docs = await users
      .find(missing, { projection: { state: 1, sequence: 1 } })
      .sort({ _id: 1 })
      .limit(batch)
      .toArray();
    for (const doc of docs) {
      const result = await users.updateOne({ _id: doc._id, sequence: doc.sequence }, { $set: { [SEARCH_FIELD]: project(doc.state) } });
      done += result.modifiedCount;
      progress.update(++seen);
    }
    if (docs.length < batch) {
      progress.finish(seen);
      return done;
    }
    last = docs.at(-1)!._id;
  }
}
