// ListUsers of zitadel.user.v2.UserService and zitadel.management.v1.ManagementService over
// the user search command (src/commands/user-search.ts): a translation of the request to the
// command's input and of its pages to the response, nothing more. The command's rules, limits
// and permission (user.read in the acting organization) apply as on GraphQL's Query.users.
//
// Queries (a list: all must hold), as the command's filter conditions (src/store/read-models.ts):
// - user_name_query and login_name_query (a user's only login name here is its username),
//   email_query, first_name_query, last_name_query, display_name_query: text matches. EQUALS is
//   EXACT, STARTS_WITH PREFIX, ENDS_WITH SUFFIX, CONTAINS CONTAINS, each with its _IGNORE_CASE
//   twin. The search compares text case-insensitively (after NFKC folding), so the case-sensitive
//   methods answer what their twins answer: a superset of ZITADEL's answer when case differs.
// - in_user_ids_query: the users with those ids (one index lookup per id, in one query);
//   in_user_emails_query: those emails, exactly (folded as above). An empty list matches none.
// - state_query: the state by its name (the command accepts the states users have here).
// - type_query: every user here is human; TYPE_HUMAN matches them all, any other type none.
// - and_query, or_query, not_query: the conditions' allOf (a field queried twice goes there
//   too), anyOf (an empty or_query matches none, as in ZITADEL) and not. The command bounds how
//   deep they nest, how many there are and how many list values (user-search-inputs.ts).
// - organization_id_query (v2): the acting organization, as x-zitadel-orgid is for v1; without
//   it, v2 acts as v1 does: the header when sent, else the caller's own organization. Once, and
//   not inside or_query or not_query (it chooses where to search, and the permission checked).
// - nick_name_query and phone_query: INVALID_ARGUMENT naming them (no search field holds them).
// Every refusal is found before anything is read, and listed with the command's own input
// violations, all in the request's field names (`queries[0].user_name_query.user_name`).
//
// Order: sorting_column USER_NAME or CREATION_DATE (others: INVALID_ARGUMENT); UNSPECIFIED is
// creation date, the nearest to ZITADEL's order by id (its ids follow creation). Direction:
// ListQuery.asc, false (proto3's default) is descending, as ZITADEL documents.
// Paging: ListQuery.limit is the command's page size (0: the command's default; past its maximum
// the command's INVALID_ARGUMENT, named `query.limit`; a page of users heavier than what is left
// of the request's read budget, which GraphQL answers as a shorter page, is RESOURCE_EXHAUSTED
// here). ListQuery.offset walks the command's keyset pages, each of its maximum size, up to
// MAX_OFFSET rows; a larger offset is INVALID_ARGUMENT (`query.offset`), since every skipped page
// is a search of its own (and the users it skips count in the read budget).
// Answer: ListDetails with total_result (the command's count of matches) and the time of the read.
import { type DescEnum, type DescField, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampNow } from '@bufbuild/protobuf/wkt';
import {
  ListUsersRequestSchema as ListUsersRequestV1Schema,
  type ListUsersRequest as ListUsersRequestV1,
  type ListUsersResponseSchema as ListUsersResponseV1Schema,
} from '@zitadel/proto/zitadel/management_pb.js';
import { SearchQuerySchema as SearchQueryV1Schema } from '@zitadel/proto/zitadel/user_pb.js';
import { SearchQuerySchema as SearchQueryV2Schema } from '@zitadel/proto/zitadel/user/v2/query_pb.js';
import {
  ListUsersRequestSchema as ListUsersRequestV2Schema,
  type ListUsersRequest as ListUsersRequestV2,
  type ListUsersResponseSchema as ListUsersResponseV2Schema,
} from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import {
  READ_BUDGET_BYTES,
  DEFAULT_PAGE,
  MAX_PAGE,
  parseUserSearch,
  type CommandContext,
  type UserPage,
  type Operations,
} from '../operations.ts';
import { AppError, BAD_REQUEST_TYPE, invalidArgument, readTooLarge, type FieldViolation } from '../errors.ts';
import type { User } from '../model/users.ts';
import type { TextMatch } from '../store/read-models.ts';
import type { Snapshot } from '../store/port.ts';
import { UNSUPPORTED } from './convert.ts';
import { userMessageV2 } from './user-message.ts';
import { userV1 } from './users-v1.ts';

/** The deepest offset served: ten of the command's largest pages walked, then the page asked for. */
export const MAX_OFFSET = 10 * MAX_PAGE;

/** zitadel.v1.TextQueryMethod and zitadel.object.v2.TextQueryMethod (same names and numbers), as the search's operators. */
const TEXT_OPS: Record<string, TextMatch['op']> = {
  TEXT_QUERY_METHOD_EQUALS: 'EXACT',
  TEXT_QUERY_METHOD_EQUALS_IGNORE_CASE: 'EXACT',
  TEXT_QUERY_METHOD_STARTS_WITH: 'PREFIX',
  TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE: 'PREFIX',
  TEXT_QUERY_METHOD_CONTAINS: 'CONTAINS',
  TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE: 'CONTAINS',
  TEXT_QUERY_METHOD_ENDS_WITH: 'SUFFIX',
  TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE: 'SUFFIX',
};

/** Text queries (oneof case of SearchQuery) and the command's condition each one sets. */
const TEXT_QUERIES: Record<string, string> = {
  userNameQuery: 'username',
  loginNameQuery: 'username',
  emailQuery: 'email',
  firstNameQuery: 'firstName',
  lastNameQuery: 'lastName',
  displayNameQuery: 'displayName',
};

/** Queries the gateway has no search field for, and why. */
const REFUSED: Record<string, string> = {
  nickNameQuery: `${UNSUPPORTED}: nick names are not among the searched fields`,
  phoneQuery: `${UNSUPPORTED}: phone numbers are not among the searched fields`,
};

/** zitadel.user.v1 / v2 UserFieldName (same names) as the search's order; unlisted columns are refused. */
const SORTS: Record<string, 'USERNAME' | 'CREATION_DATE'> = {
  USER_FIELD_NAME_UNSPECIFIED: 'CREATION_DATE',
  USER_FIELD_NAME_USER_NAME: 'USERNAME',
  USER_FIELD_NAME_CREATION_DATE: 'CREATION_DATE',
};

/** A SearchQuery of either version, as its oneof. */
interface AnyQuery {
  query: { case: string | undefined; value?: unknown };
}

interface AnyListRequest {
  query?: { offset: bigint; limit: number; asc: boolean };
  sortingColumn: number;
  queries: AnyQuery[];
}

/** The command's conditions (user-search-inputs.ts) as they are built. */
type Conditions = Record<string, unknown>;

/** What the request says, for the command; refusals collected, command field paths renamed to the request's. */
interface Translation {
  filter: Conditions;
  /** organization_id_query (v2), and the request path that named it. */
  orgId?: string;
  orgBy?: string;
  violations: FieldViolation[];
  /** Command field path (`filter.username.value`) -> request field path. */
  renames: Map<string, string>;
}

const nameOf = (desc: DescEnum | undefined, n: number) => desc?.value[n]?.name ?? String(n);

/** The first field of a query message (its value: user_name, email_address, state, ...) and its `method`, if it has one. */
function partsOf(message: DescMessage): { value: DescField; method?: DescField } {
  return { value: message.fields.find((f) => f.number === 1)!, method: message.fields.find((f) => f.name === 'method') };
}

/**
 * Where a condition named `key` goes in `into` (at command path `at`): into itself when it
 * has none yet, else into a new member of its allOf (the same field queried twice, ANDed).
 */
function slot(into: Conditions, at: string, key: string, t: Translation, by: string): { into: Conditions; at: string } {
  if (!(key in into)) return { into, at };
  // The list named as the request list the queries came from (a limit on it names that).
  if (!into.allOf) t.renames.set(`${at}.allOf`, t.renames.get(at) ?? 'queries');
  const allOf = ((into.allOf as Conditions[] | undefined) ??= []);
  const member: Conditions = {};
  const path = `${at}.allOf.${allOf.length}`;
  allOf.push(member);
  t.renames.set(path, by);
  return { into: member, at: path };
}

/**
 * A list of queries (all must hold) into the conditions `into` at command path `at`. `top`:
 * the request's own list (or an and_query in it), where organization_id_query may stand.
 */
function translateQueries(
  schema: DescMessage,
  queries: readonly AnyQuery[],
  path: string,
  into: Conditions,
  at: string,
  top: boolean,
  t: Translation,
): void {
  queries.forEach((q, i) => translateQuery(schema, q, `${path}[${i}]`, into, at, top, t));
}

function translateQuery(
  schema: DescMessage,
  q: AnyQuery,
  reqPath: string,
  into: Conditions,
  at: string,
  top: boolean,
  t: Translation,
): void {
  const kind = q.query.case;
  const field = kind ? schema.fields.find((f) => f.localName === kind) : undefined;
  if (!kind || !field || field.fieldKind !== 'message') {
    t.violations.push({ field: reqPath, description: 'must set one of its queries' });
    return;
  }
  const fieldPath = `${reqPath}.${field.name}`;
  const value = q.query.value as Record<string, unknown>;
  const parts = partsOf(field.message);
  const set = (key: string, v: unknown, valueRename?: string) => {
    const where = slot(into, at, key, t, fieldPath);
    where.into[key] = v;
    t.renames.set(`${where.at}.${key}`, valueRename ?? fieldPath);
    return `${where.at}.${key}`;
  };

  if (kind === 'andQuery') {
    translateQueries(schema, (value as { queries: AnyQuery[] }).queries, `${fieldPath}.queries`, into, at, top, t);
  } else if (kind === 'orQuery') {
    const branches: Conditions[] = [];
    const anyOf = set('anyOf', branches);
    (value as { queries: AnyQuery[] }).queries.forEach((sub, k) => {
      const branch: Conditions = {};
      branches.push(branch);
      t.renames.set(`${anyOf}.${k}`, `${fieldPath}.queries[${k}]`);
      translateQuery(schema, sub, `${fieldPath}.queries[${k}]`, branch, `${anyOf}.${k}`, false, t);
    });
  } else if (kind === 'notQuery') {
    const inner = (value as { query?: AnyQuery }).query;
    if (!inner) {
      t.violations.push({ field: `${fieldPath}.query`, description: 'must be given' });
      return;
    }
    const negated: Conditions = {};
    const not = set('not', negated, `${fieldPath}.query`);
    translateQuery(schema, inner, `${fieldPath}.query`, negated, not, false, t);
  } else if (TEXT_QUERIES[kind]) {
    const method = nameOf(parts.method?.enum, value[parts.method!.localName] as number);
    const op = TEXT_OPS[method];
    if (!op) {
      t.violations.push({ field: `${fieldPath}.method`, description: `${method} ${UNSUPPORTED}` });
      return;
    }
    const key = set(TEXT_QUERIES[kind], { op, value: value[parts.value.localName] });
    t.renames.set(`${key}.value`, `${fieldPath}.${parts.value.name}`);
    t.renames.set(`${key}.op`, `${fieldPath}.method`);
  } else if (kind === 'inUserIdsQuery' || kind === 'inUserEmailsQuery') {
    set(kind === 'inUserIdsQuery' ? 'ids' : 'emails', value[parts.value.localName], `${fieldPath}.${parts.value.name}`);
  } else if (kind === 'stateQuery') {
    set('state', nameOf(parts.value.enum, value[parts.value.localName] as number), `${fieldPath}.${parts.value.name}`);
  } else if (kind === 'typeQuery') {
    // Every user here is human: TYPE_HUMAN holds for all, any other type for none (an empty id list).
    if (nameOf(parts.value.enum, value[parts.value.localName] as number) !== 'TYPE_HUMAN') set('ids', []);
  } else if (kind === 'organizationIdQuery') {
    const orgId = value[parts.value.localName] as string;
    // The descriptor's rule (validate.rules min_len 1): the command has no field to check it.
    if (orgId === '') t.violations.push({ field: `${fieldPath}.${parts.value.name}`, description: 'must not be empty' });
    else if (!top)
      t.violations.push({
        field: fieldPath,
        description: `${UNSUPPORTED} inside or_query or not_query: it names the organization searched`,
      });
    else if (t.orgBy !== undefined)
      t.violations.push({ field: fieldPath, description: `${UNSUPPORTED} beside ${t.orgBy}: one organization per search` });
    else {
      t.orgId = orgId;
      t.orgBy = fieldPath;
    }
  } else {
    t.violations.push({ field: fieldPath, description: REFUSED[kind] ?? UNSUPPORTED });
  }
}

/** A command field path in the request's names: the longest renamed prefix, the rest as it is. */
function wireName(renames: Map<string, string>, path: string): string {
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n--) {
    const head = renames.get(parts.slice(0, n).join('.'));
    if (head !== undefined) return parts.slice(n).reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : `${out}.${part}`), head);
  }
  return path;
}

const violationsOf = (err: AppError): FieldViolation[] =>
  err.details
    .filter((d) => d['@type'] === BAD_REQUEST_TYPE)
    .flatMap((d) => (Array.isArray(d.fieldViolations) ? (d.fieldViolations as FieldViolation[]) : []));

/** The command's INVALID_ARGUMENT with its fields in the request's names; any other failure as it is. */
function renamed(err: unknown, renames: Map<string, string>): unknown {
  if (!(err instanceof AppError) || err.code !== 'INVALID_ARGUMENT') return err;
  const violations = violationsOf(err);
  if (violations.length === 0) return err;
  return invalidArgument(violations.map((v) => ({ field: wireName(renames, v.field), description: v.description })));
}

/** The users of a request of either version, in its order and window, and how many match in all. */
async function listUsers(
  ops: Operations,
  ctx: CommandContext,
  searchQuery: DescMessage,
  sortEnum: DescEnum | undefined,
  req: AnyListRequest,
) {
  const t: Translation = { filter: {}, violations: [], renames: new Map() };
  t.renames.set('first', 'query.limit');
  t.renames.set('filter', 'queries');
  translateQueries(searchQuery, req.queries, 'queries', t.filter, 'filter', true, t);

  const column = nameOf(sortEnum, req.sortingColumn);
  const sort = SORTS[column];
  if (!sort)
    t.violations.push({
      field: 'sorting_column',
      description: `${column} ${UNSUPPORTED} (USER_FIELD_NAME_USER_NAME and USER_FIELD_NAME_CREATION_DATE are)`,
    });
  const offset = req.query?.offset ?? 0n;
  if (offset > BigInt(MAX_OFFSET)) {
    t.violations.push({
      field: 'query.offset',
      description: `must be at most ${MAX_OFFSET} (narrow the query, or page on from a later position)`,
    });
  }

  const input = {
    filter: t.filter,
    orderBy: { field: sort ?? 'CREATION_DATE', direction: req.query?.asc ? 'ASC' : 'DESC' },
    first: req.query?.limit || undefined,
  };
  // The command's input rules, before anything is read, so that its violations and the ones above come in one answer.
  try {
    parseUserSearch(input);
  } catch (err) {
    const again = renamed(err, t.renames);
    if (!(again instanceof AppError) || again.code !== 'INVALID_ARGUMENT') throw again;
    t.violations.push(...violationsOf(again));
  }
  if (t.violations.length > 0) throw invalidArgument(t.violations);

  const acting = t.orgId === undefined ? ctx : { ...ctx, orgHeader: t.orgId };
  const search = (more: { first?: number; after?: string }): Promise<UserPage> =>
    ops.users(acting, { ...input, ...more }).catch((err: unknown) => {
      throw renamed(err, t.renames);
    });

  // The offset, in the command's own pages: each of its largest size, from the end cursor of the last.
  let after: string | undefined;
  for (let skipped = 0; skipped < offset;) {
    const step = await search({ first: Math.min(MAX_PAGE, Number(offset) - skipped), after });
    skipped += step.edges.length;
    if (!step.pageInfo.hasNextPage || !step.pageInfo.endCursor) return { users: [] as Snapshot<User>[], total: await step.totalCount() };
    after = step.pageInfo.endCursor;
  }
  const page = await search({ first: input.first, after });
  // A page the command ended early (its users passed the read budget): clients of an offset
  // API count on full pages and would skip the rest, so the answer is an error, not a short page.
  if (page.edges.length < (input.first ?? DEFAULT_PAGE) && page.pageInfo.hasNextPage) throw readTooLarge(READ_BUDGET_BYTES);
  return { users: page.edges.map((e) => e.node as Snapshot<User>), total: await page.totalCount() };
}

const sortingColumnEnum = (request: DescMessage) => request.fields.find((f) => f.name === 'sorting_column')?.enum;
const V2 = { searchQuery: SearchQueryV2Schema, sortingColumn: sortingColumnEnum(ListUsersRequestV2Schema) };
const V1 = { searchQuery: SearchQueryV1Schema, sortingColumn: sortingColumnEnum(ListUsersRequestV1Schema) };

/** zitadel.user.v2.UserService/ListUsers. */
export async function listUsersV2(
  ctx: CommandContext,
  req: ListUsersRequestV2,
  ops: Operations,
): Promise<MessageInitShape<typeof ListUsersResponseV2Schema>> {
  const { users, total } = await listUsers(ops, ctx, V2.searchQuery, V2.sortingColumn, req);
  return {
    details: { totalResult: BigInt(total), timestamp: timestampNow() },
    sortingColumn: req.sortingColumn,
    result: users.map((u) => userMessageV2(u)),
  };
}

/** zitadel.management.v1.ManagementService/ListUsers (the organization: x-zitadel-orgid, else the caller's). */
export async function listUsersV1(
  ctx: CommandContext,
  req: ListUsersRequestV1,
  ops: Operations,
): Promise<MessageInitShape<typeof ListUsersResponseV1Schema>> {
  const { users, total } = await listUsers(ops, ctx, V1.searchQuery, V1.sortingColumn, req);
  return {
    details: { totalResult: BigInt(total), viewTimestamp: timestampNow() },
    sortingColumn: req.sortingColumn,
    result: users.map(userV1),
  };
}
