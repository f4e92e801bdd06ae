// Input rules of the user search (issue 13) and its cursors. Checked before any I/O;
// every violated argument is reported, by its name (first, filter.username.value, …).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { invalid, invalidArgument } from '../errors.ts';
import type { UserFilter, UserKey, UserSortField } from '../store/read-models.ts';
import { text } from './rules.ts';

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
/** Conditions (`allOf`, `anyOf`, `not`) nested in each other at most this deep below the filter. */
export const MAX_FILTER_DEPTH = 4;
/** Condition objects in a filter, the filter and every nested one counted. */
export const MAX_FILTER_CONDITIONS = 50;
/** Values in all `ids` and `emails` lists of a filter together. */
export const MAX_FILTER_VALUES = 1000;

// No control characters: a filter value is matched literally, and MongoDB refuses a NUL in a regex.
const value = text(200, { name: true });
const textMatch = z.object({ op: z.enum(['EXACT', 'PREFIX', 'SUFFIX', 'CONTAINS']).nullish(), value });
const pageSize = z
  .number()
  .int()
  .min(0, { message: 'must not be negative' })
  .max(MAX_PAGE, { message: `must be at most ${MAX_PAGE}` })
  .nullish();
const cursor = z.string().max(1000, { message: 'is not a cursor of this query' }).nullish();

/** The filter and each condition nested in it (the store's UserConditions, src/store/read-models.ts). */
const conditions = z.object({
  username: textMatch.nullish(),
  email: textMatch.nullish(),
  displayName: textMatch.nullish(),
  firstName: textMatch.nullish(),
  lastName: textMatch.nullish(),
  displayNamePrefix: value.nullish(),
  firstNamePrefix: value.nullish(),
  lastNamePrefix: value.nullish(),
  state: z.enum(['USER_STATE_ACTIVE', 'USER_STATE_INITIAL', 'USER_STATE_INACTIVE', 'USER_STATE_LOCKED']).nullish(),
  emailVerified: z.boolean().nullish(),
  createdAfter: z.date().nullish(),
  createdBefore: z.date().nullish(),
  ids: z.array(value).nullish(),
  emails: z.array(value).nullish(),
  get allOf() {
    return z.array(conditions).nullish();
  },
  get anyOf() {
    return z.array(conditions).nullish();
  },
  get not() {
    return conditions.nullish();
  },
});

export type UserConditionsInput = z.output<typeof conditions>;

export const userSearchRules = z
  .object({
    first: pageSize,
    after: cursor,
    last: pageSize,
    before: cursor,
    filter: conditions.nullish(),
    orderBy: z
      .object({ field: z.enum(['USERNAME', 'CREATION_DATE', 'CHANGE_DATE']).nullish(), direction: z.enum(['ASC', 'DESC']).nullish() })
      .nullish(),
    allOrganizations: z.boolean().nullish(),
  })
  .superRefine((input, ctx) => {
    const given = (v: unknown) => v !== undefined && v !== null;
    const conflict = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (given(input.first) && given(input.last)) conflict('last', 'give first or last, not both');
    if (given(input.after) && given(input.before)) conflict('before', 'give after or before, not both');
    if (given(input.after) && given(input.last)) conflict('after', 'after pages forward, with first; before goes with last');
    if (given(input.before) && given(input.first)) conflict('before', 'before pages backward, with last; after goes with first');
  });

/**
 * The filter's size, before zod walks it: its nesting, conditions and list values, each
 * against its limit. Stops at the first limit passed, so a tree of any size costs at most
 * the limits' worth of steps. Null when it fits; else the violation, at the path where the
 * limit was passed.
 */
function oversizedFilter(filter: unknown): { field: string; description: string } | null {
  const stack: { node: unknown; path: string; depth: number }[] = [{ node: filter, path: 'filter', depth: 0 }];
  let conditionCount = 1; // every one pushed: the stack never holds more than the limit
  let values = 0;
  const tooMany = (field: string) => ({ field, description: `passes ${MAX_FILTER_CONDITIONS} conditions in one filter` });
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue; // zod names what it is not
    if (depth > MAX_FILTER_DEPTH) return { field: path, description: `nests conditions deeper than ${MAX_FILTER_DEPTH} levels` };
    const c = node as Record<string, unknown>;
    for (const list of ['ids', 'emails']) {
      if (Array.isArray(c[list]) && (values += (c[list] as unknown[]).length) > MAX_FILTER_VALUES) {
        return { field: `${path}.${list}`, description: `passes ${MAX_FILTER_VALUES} values in the lists of one filter` };
      }
    }
    for (const list of ['allOf', 'anyOf']) {
      const subs = c[list];
      if (!Array.isArray(subs)) continue;
      if ((conditionCount += subs.length) > MAX_FILTER_CONDITIONS) return tooMany(`${path}.${list}`);
      subs.forEach((sub, i) => stack.push({ node: sub, path: `${path}.${list}.${i}`, depth: depth + 1 }));
    }
    if (c.not !== undefined && c.not !== null) {
      if (++conditionCount > MAX_FILTER_CONDITIONS) return tooMany(`${path}.not`);
      stack.push({ node: c.not, path: `${path}.not`, depth: depth + 1 });
    }
  }
  return null;
}

export type UserSearchInput = z.output<typeof userSearchRules>;

export function parseUserSearch(input: unknown): UserSearchInput {
  const oversized = oversizedFilter((input as { filter?: unknown } | null | undefined)?.filter);
  if (oversized) throw invalidArgument([oversized]);
  const parsed = userSearchRules.safeParse(input);
  if (parsed.success) return parsed.data;
  throw invalidArgument(parsed.error.issues.map((i) => ({ field: i.path.map(String).join('.'), description: i.message })));
}

// ---------------------------------------------------------------------------
// Cursors: opaque base64url of { v, k: [value, id], s }. `s` is a short hash of the
// query's scope (organization or instance-wide, filter, order), so a cursor only
// pages the query that issued it. Nothing in it is secret: a forged one can only
// point elsewhere in what the caller may read anyway.

/** The query a cursor belongs to: its filter (with the organization, none for instance-wide) and order. */
export interface Scope {
  filter: UserFilter;
  sort: UserSortField;
  descending: boolean;
}

export function scopeHash({ filter, sort, descending }: Scope): string {
  return createHash('sha256')
    .update(JSON.stringify([filter, sort, descending]))
    .digest('base64url')
    .slice(0, 16);
}

export const encodeCursor = (key: UserKey, scope: string): string =>
  Buffer.from(JSON.stringify({ v: 1, k: [key.value, key.id], s: scope })).toString('base64url');

/** The key in a cursor of this scope; anything else is INVALID_ARGUMENT naming `field`. */
export function decodeCursor(cursor: string, scope: string, sort: UserSortField, field: string): UserKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const c = parsed as { v?: unknown; k?: unknown; s?: unknown } | undefined;
  const [value, id] = Array.isArray(c?.k) && c.k.length === 2 ? (c.k as unknown[]) : [];
  const valueOk = sort === 'USERNAME' ? typeof value === 'string' : Number.isSafeInteger(value);
  if (c?.v !== 1 || typeof id !== 'string' || !valueOk) throw invalid(field, 'is not a cursor of this query');
  if (c.s !== scope) throw invalid(field, 'is a cursor of another query (another filter, order or organization)');
  return { value: value as string | number, id };
}
