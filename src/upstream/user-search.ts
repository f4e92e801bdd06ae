// The users query over ZITADEL's ListUsers (user v2): the input checked with the command's own
// rules (parseUserSearch, the embedded INVALID_ARGUMENT), then ONE ListUsers call. What is the
// inverse of our wire face's translation (src/wire/list-users.ts):
// - username, email, displayName, firstName, lastName: user_name_query, email_query,
//   display_name_query, first_name_query, last_name_query with the _IGNORE_CASE method of the op
//   (EXACT: EQUALS, PREFIX: STARTS_WITH, CONTAINS, SUFFIX: ENDS_WITH); displayNamePrefix,
//   firstNamePrefix, lastNamePrefix: STARTS_WITH_IGNORE_CASE. The embedded search also folds NFKC;
//   ZITADEL compares case-insensitively only (our own wire face folds as the embedded search does).
// - state: state_query; ids: in_user_ids_query; emails: in_user_emails_query.
// - allOf, anyOf, not: and_query, or_query, not_query (an empty condition: an empty and_query).
// - emailVerified, createdAfter, createdBefore: ZITADEL's ListUsers has no such query:
//   INVALID_ARGUMENT naming the field (`filter.emailVerified`, `filter.anyOf.0.createdAfter`).
// - Every search carries type_query TYPE_HUMAN: machine users have no place in a User page.
// Organization: the header (x-service-orgid / x-zitadel-orgid) as organization_id_query, and
// forwarded; without it none: ZITADEL answers the users the caller may read (our own wire face
// the caller's organization). allOrganizations: neither the query nor the header, ZITADEL's
// instance-wide search; ZITADEL filters by permission where the embedded mode refuses a caller
// without an instance role, and our own wire face searches the caller's organization instead.
// Order: USERNAME and CREATION_DATE as USER_FIELD_NAME_USER_NAME and _CREATION_DATE; CHANGE_DATE has
// no column: INVALID_ARGUMENT on `orderBy.field`.
// Paging: ListQuery offset/limit/asc. A cursor is opaque and carries the edge's position (offset)
// in the query's order, bound to the search like the embedded cursors (filter, order,
// organization): another search's cursor is INVALID_ARGUMENT. Positions are offsets, so users added
// or removed before a cursor's position shift the next page (the embedded keyset cursors do not).
// `last` without `before` reads the reversed order from its start. totalCount is the same call's
// details.total_result; hasNextPage going forward is offset + page < total_result.
import { createHash } from 'node:crypto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { TextQueryMethod } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { Type, UserFieldName, type SearchQuerySchema } from '@zitadel/proto/zitadel/user/v2/query_pb.js';
import { UserStateSchema } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { invalid, invalidArgument, type FieldViolation } from '../errors.ts';
import { fold } from '../model/text.ts';
import type { User } from '../model/users.ts';
import { DEFAULT_PAGE, parseUserSearch, type UserPage } from '../operations.ts';
import type { Snapshot } from '../store/port.ts';
import type { UpstreamContext } from './context.ts';
import { enumOf, userOf } from './convert.ts';
import { read, requireCaller } from './send.ts';

type Query = MessageInitShape<typeof SearchQuerySchema>;
type Input = ReturnType<typeof parseUserSearch>;
type Conditions = NonNullable<Input['filter']>;
type Op = 'EXACT' | 'PREFIX' | 'CONTAINS' | 'SUFFIX';

const METHODS: Record<Op, TextQueryMethod> = {
  EXACT: TextQueryMethod.EQUALS_IGNORE_CASE,
  PREFIX: TextQueryMethod.STARTS_WITH_IGNORE_CASE,
  CONTAINS: TextQueryMethod.CONTAINS_IGNORE_CASE,
  SUFFIX: TextQueryMethod.ENDS_WITH_IGNORE_CASE,
};

/** The conditions ZITADEL's ListUsers has no query for, and why. */
const REFUSED: Record<string, string> = {
  emailVerified: 'is not served in upstream mode: ZITADEL’s ListUsers has no query on whether an email is verified',
  createdAfter: 'is not served in upstream mode: ZITADEL’s ListUsers has no query on the creation date',
  createdBefore: 'is not served in upstream mode: ZITADEL’s ListUsers has no query on the creation date',
};

type TextKey = 'username' | 'email' | 'displayName' | 'firstName' | 'lastName';

/** A text query of ZITADEL for a condition's field. */
function textQuery(key: TextKey, value: string, op: Op): Query {
  const method = METHODS[op];
  switch (key) {
    case 'username':
      return { query: { case: 'userNameQuery', value: { userName: value, method } } };
    case 'email':
      return { query: { case: 'emailQuery', value: { emailAddress: value, method } } };
    case 'displayName':
      return { query: { case: 'displayNameQuery', value: { displayName: value, method } } };
    case 'firstName':
      return { query: { case: 'firstNameQuery', value: { firstName: value, method } } };
    case 'lastName':
      return { query: { case: 'lastNameQuery', value: { lastName: value, method } } };
  }
}

/** A condition object as ZITADEL's queries (all must hold); what cannot be sent, in `violations`. */
function queriesOf(c: Conditions, path: string, violations: FieldViolation[]): Query[] {
  const out: Query[] = [];
  for (const key of ['username', 'email', 'displayName', 'firstName', 'lastName'] as const) {
    const m = c[key];
    if (m) out.push(textQuery(key, m.value, m.op ?? 'EXACT'));
  }
  for (const [key, field] of [
    ['displayNamePrefix', 'displayName'],
    ['firstNamePrefix', 'firstName'],
    ['lastNamePrefix', 'lastName'],
  ] as const) {
    const v = c[key];
    if (v != null) out.push(textQuery(field, v, 'PREFIX'));
  }
  if (c.state != null) out.push({ query: { case: 'stateQuery', value: { state: enumOf(UserStateSchema, c.state) } } });
  if (c.ids != null) out.push({ query: { case: 'inUserIdsQuery', value: { userIds: [...new Set(c.ids)] } } });
  if (c.emails != null) out.push({ query: { case: 'inUserEmailsQuery', value: { userEmails: [...new Set(c.emails)] } } });
  for (const key of Object.keys(REFUSED) as (keyof typeof REFUSED & keyof Conditions)[]) {
    if (c[key] != null) violations.push({ field: `${path}.${key}`, description: REFUSED[key]! });
  }
  c.allOf?.forEach((sub, i) => out.push(oneQuery(sub, `${path}.allOf.${i}`, violations)));
  if (c.anyOf != null) {
    const queries = c.anyOf.map((sub, i) => oneQuery(sub, `${path}.anyOf.${i}`, violations));
    out.push({ query: { case: 'orQuery', value: { queries } } });
  }
  if (c.not != null) out.push({ query: { case: 'notQuery', value: { query: oneQuery(c.not, `${path}.not`, violations) } } });
  return out;
}

/** A condition object as one query: itself when it is one, else an and_query (empty: holds for all). */
function oneQuery(c: Conditions, path: string, violations: FieldViolation[]): Query {
  const queries = queriesOf(c, path, violations);
  return queries.length === 1 ? queries[0]! : { query: { case: 'andQuery', value: { queries } } };
}

/** The input without its absent fields and with text folded: what a cursor is bound to. */
function normalized(value: unknown): unknown {
  if (typeof value === 'string') return fold(value);
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map(normalized);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => [k, normalized(v)]),
    );
  return value;
}

const scopeHash = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
const encodeCursor = (position: number, scope: string) =>
  Buffer.from(JSON.stringify({ v: 1, o: position, s: scope })).toString('base64url');

/** The position in a cursor of this scope; anything else INVALID_ARGUMENT naming `field`, as the embedded cursors. */
function decodeCursor(cursor: string, scope: string, field: string): number {
  let c: { v?: unknown; o?: unknown; s?: unknown } | undefined;
  try {
    c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof c;
  } catch {
    c = undefined;
  }
  if (c?.v !== 1 || !Number.isSafeInteger(c.o) || (c.o as number) < 0) throw invalid(field, 'is not a cursor of this query');
  if (c.s !== scope) throw invalid(field, 'is a cursor of another query (another filter, order or organization)');
  return c.o as number;
}

/** The window one ListUsers call reads: offset, limit, direction; `reversed`: the page comes in the opposite order. */
interface Window {
  offset: number;
  limit: number;
  /** How many of the answer belong to the page. */
  take: number;
  reversed: boolean;
}

function windowOf(input: Input, start: number | undefined, end: number | undefined): Window {
  if (input.last != null || input.before != null) {
    const size = input.last ?? DEFAULT_PAGE;
    if (end === undefined) return { offset: 0, limit: Math.max(1, size), take: size, reversed: true };
    const offset = Math.max(0, end - size);
    return { offset, limit: Math.max(1, end - offset), take: end - offset, reversed: false };
  }
  const size = input.first ?? DEFAULT_PAGE;
  return { offset: start ?? 0, limit: Math.max(1, size), take: size, reversed: false };
}

export async function searchUsers(ctx: UpstreamContext, raw: unknown): Promise<UserPage> {
  const input = parseUserSearch(raw);
  const violations: FieldViolation[] = [];
  const queries: Query[] = input.filter ? queriesOf(input.filter, 'filter', violations) : [];
  const field = input.orderBy?.field ?? 'USERNAME';
  if (field === 'CHANGE_DATE')
    violations.push({
      field: 'orderBy.field',
      description: 'CHANGE_DATE is not served in upstream mode: ZITADEL’s ListUsers has no such column',
    });
  if (violations.length > 0) throw invalidArgument(violations);
  requireCaller(ctx);

  const descending = input.orderBy?.direction === 'DESC';
  const orgId = input.allOrganizations ? null : ctx.orgHeader;
  const scope = scopeHash([normalized(input.filter ?? {}), field, descending, input.allOrganizations ? '*' : (orgId ?? '')]);
  const after = input.after != null ? decodeCursor(input.after, scope, 'after') : undefined;
  const before = input.before != null ? decodeCursor(input.before, scope, 'before') : undefined;
  const w = windowOf(input, after === undefined ? undefined : after + 1, before);

  queries.push({ query: { case: 'typeQuery', value: { type: Type.HUMAN } } });
  if (orgId) queries.push({ query: { case: 'organizationIdQuery', value: { organizationId: orgId } } });
  const credentials = { ...ctx.credentials, orgId };
  const r = await read(
    ctx,
    'ListUsers',
    (o) =>
      ctx.upstream.clients.users.listUsers(
        {
          query: { offset: BigInt(w.offset), limit: w.limit, asc: descending === w.reversed },
          sortingColumn: field === 'USERNAME' ? UserFieldName.USER_NAME : UserFieldName.CREATION_DATE,
          queries,
        },
        o,
      ),
    credentials,
  );
  const total = Number(r.details?.totalResult ?? 0n);
  const rows = r.result.slice(0, w.take);
  // Each row with its position in the query's order (reversed: counted from the end).
  const positioned = rows.map((u, i) => ({ u, position: w.reversed ? total - 1 - i : w.offset + i }));
  if (w.reversed) positioned.reverse();
  const edges = positioned.flatMap(({ u, position }) => {
    const node = userOf(u);
    return node ? [{ node: node as Snapshot<User>, cursor: encodeCursor(position, scope) }] : [];
  });
  const backward = input.last != null || input.before != null;
  const next = w.offset + rows.length;
  return {
    edges,
    pageInfo: {
      hasNextPage: backward ? before !== undefined : next < total,
      hasPreviousPage: backward ? (w.reversed ? total > rows.length : w.offset > 0) : after !== undefined,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
    totalCount: () => Promise.resolve(total),
  };
}
