// The users of an organization (or of every one), for admin consoles: filtered,
// ordered and paged Relay-style with keyset cursors (issue 13; src/store/read-models.ts).
import { INSTANCE_ID } from '../model/orgs.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { fold } from '../model/text.ts';
import type { TextMatch, UserConditions, UserFilter, UserKey, UserSortField } from '../store/read-models.ts';
import { actingOrg, authenticate, permissionReads, requireIn, requireInstance } from './access.ts';
import { settleReads, takeReads, type CommandContext } from './context.ts';
import { snapshotWeight } from '../store/weight.ts';
import { ReadLimitError } from '../errors.ts';
import {
  DEFAULT_PAGE,
  decodeCursor,
  encodeCursor,
  parseUserSearch,
  scopeHash,
  type UserConditionsInput,
  type UserSearchInput,
} from './user-search-inputs.ts';

export interface UserPage {
  edges: { node: Snapshot<User>; cursor: string }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  /** How many users match the filter, all pages together: counted only when asked for. */
  totalCount(): Promise<number>;
}

const match = (m: { op?: TextMatch['op'] | null; value: string } | null | undefined): TextMatch | undefined =>
  m ? { op: m.op ?? 'EXACT', value: fold(m.value) } : undefined;
const prefix = (v: string | null | undefined) => (v === null || v === undefined ? undefined : fold(v));

/** The input's conditions for the store: text folded, nested ones likewise, absent fields left out. */
function toConditions(c: UserConditionsInput): UserConditions {
  const conditions: UserConditions = {
    username: match(c.username),
    email: match(c.email),
    displayName: match(c.displayName),
    firstName: match(c.firstName),
    lastName: match(c.lastName),
    displayNamePrefix: prefix(c.displayNamePrefix),
    firstNamePrefix: prefix(c.firstNamePrefix),
    lastNamePrefix: prefix(c.lastNamePrefix),
    state: c.state ?? undefined,
    emailVerified: c.emailVerified ?? undefined,
    createdFrom: c.createdAfter ?? undefined,
    createdTo: c.createdBefore ?? undefined,
    ids: c.ids ? [...new Set(c.ids)] : undefined,
    emails: c.emails ? [...new Set(c.emails.map(fold))] : undefined,
    allOf: c.allOf?.map(toConditions),
    anyOf: c.anyOf?.map(toConditions),
    not: c.not ? toConditions(c.not) : undefined,
  };
  // Absent fields left out, so that the scope of a cursor does not depend on how they were absent.
  return Object.fromEntries(Object.entries(conditions).filter(([, v]) => v !== undefined)) as UserConditions;
}

function toFilter(f: UserSearchInput['filter'], orgId: string | undefined): UserFilter {
  const conditions = f ? toConditions(f) : {};
  return orgId === undefined ? conditions : { orgId, ...conditions };
}

/** The sort's value of a user (the folded username, or a time) and its id: a cursor's key. */
function keyOf(sort: UserSortField, user: Snapshot<User>): UserKey {
  const value =
    sort === 'USERNAME' ? fold(user.state.username) : sort === 'CREATION_DATE' ? user.creationDate.getTime() : user.changeDate.getTime();
  return { value, id: user.id };
}

/**
 * In the acting organization (x-service-orgid, else the caller's) with user.read
 * there; with allOrganizations, in every organization, for an instance role with
 * user.read. Backward paging (last/before) reads the reversed order after `before`
 * and turns the page around. The flag away from the paging direction
 * (hasPreviousPage going forward, hasNextPage going backward) is true when a cursor
 * was given: its row lies that way.
 */
export async function searchUsers(ctx: CommandContext, raw: unknown): Promise<UserPage> {
  const input = parseUserSearch(raw);
  const caller = await authenticate(ctx, input.allOrganizations ? { instance: [INSTANCE_ID] } : permissionReads(ctx));
  let orgId: string | undefined;
  if (input.allOrganizations) {
    await requireInstance(ctx, caller, 'user.read');
  } else {
    const org = await actingOrg(ctx, caller);
    await requireIn(ctx, caller, org, 'user.read');
    orgId = org.id;
  }

  const filter = toFilter(input.filter, orgId);
  const sort = input.orderBy?.field ?? 'USERNAME';
  const descending = input.orderBy?.direction === 'DESC';
  const scope = scopeHash({ filter, sort, descending });
  const backward = input.last != null || input.before != null;
  const size = (backward ? input.last : input.first) ?? DEFAULT_PAGE;
  const cursor = backward ? input.before : input.after;
  const after = cursor != null ? decodeCursor(cursor, scope, sort, backward ? 'before' : 'after') : undefined;

  const { store } = ctx.deps;
  // A page holds what is left of the request's read budget (context.ts): past it, the page
  // ends with the users that fit and says there is more, as a shorter Relay page may. Not one
  // fits: one is read all the same, and counted (RESOURCE_EXHAUSTED when that passes the budget).
  const query = { filter, sort, descending: descending !== backward, after };
  const taken = takeReads(ctx.reads);
  let limit = size + 1;
  let cut = false;
  let rows: Snapshot<User>[] = [];
  try {
    for (;;) {
      try {
        rows = await store.searchUsers<User>({ ...query, limit, maxBytes: limit > 1 ? taken : undefined });
        break;
      } catch (err) {
        if (!(err instanceof ReadLimitError)) throw err;
        limit = Math.max(1, err.fitted);
        cut = true;
      }
    }
  } finally {
    settleReads(
      ctx.reads,
      taken,
      rows.reduce((sum, user) => sum + snapshotWeight(user), 0),
    );
  }
  const more = cut || rows.length > size;
  const page = rows.slice(0, size);
  if (backward) page.reverse();
  // Cursors are encoded only when asked for (a page usually asks for endCursor alone).
  const cursorOf = (node: Snapshot<User>) => encodeCursor(keyOf(sort, node), scope);
  const edges = page.map((node) => ({
    node,
    get cursor() {
      return cursorOf(node);
    },
  }));
  return {
    edges,
    pageInfo: {
      hasNextPage: backward ? after !== undefined : more,
      hasPreviousPage: backward ? more : after !== undefined,
      get startCursor() {
        return page[0] ? cursorOf(page[0]) : null;
      },
      get endCursor() {
        return page.length > 0 ? cursorOf(page.at(-1)!) : null;
      },
    },
    totalCount: () => store.countUsers(filter),
  };
}
