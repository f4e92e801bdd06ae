// The history of an aggregate, newest first, a page at a time (Relay paging).
// Sequences run 1..n without gaps, so the snapshot's sequence is the count and a
// page is a sequence range: one read of the snapshot, one of the range.
import { invalidArgument, notFound, permissionDenied, type FieldViolation } from '../errors.ts';
import type { Snapshot, StoredEvent } from '../store/port.ts';
import { actingOrg, authenticate, permissionReads } from './access.ts';
import { chargeReads, type CommandContext } from './context.ts';
import { readUser, type UserScope } from './reads.ts';
import { weightOf } from '../store/weight.ts';
import { visibleMany, type EntityKind } from './entities.ts';

export type HistoryKind = EntityKind;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface HistoryPage {
  totalCount: number;
  /** Newest first. */
  edges: { cursor: string; node: StoredEvent }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

// Opaque to clients, bound to one aggregate: a cursor of another one is refused.
const encodeCursor = (kind: HistoryKind, id: string, sequence: number) =>
  Buffer.from(JSON.stringify([kind, id, sequence])).toString('base64url');

function decodeCursor(kind: HistoryKind, id: string, cursor: string): number | null {
  try {
    const [k, i, sequence] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (k !== kind || i !== id || !Number.isSafeInteger(sequence) || (sequence as number) < 1) return null;
    // Only the canonical spelling: base64url decoding skips characters it does not know.
    return encodeCursor(kind, id, sequence as number) === cursor ? (sequence as number) : null;
  } catch {
    return null;
  }
}

/** The arguments checked without I/O, as every violated field. */
function checkArgs(kind: HistoryKind, id: string, page: PageArgs) {
  const violations: FieldViolation[] = [];
  if (page.first != null && page.last != null) violations.push({ field: 'last', description: 'first and last cannot be given together' });
  for (const field of ['first', 'last'] as const) {
    const n = page[field];
    if (n != null && (!Number.isInteger(n) || n < 0 || n > MAX_PAGE))
      violations.push({ field, description: `must be between 0 and ${MAX_PAGE}` });
  }
  const cursors = { after: null as number | null, before: null as number | null };
  for (const field of ['after', 'before'] as const) {
    const cursor = page[field];
    if (cursor == null) continue;
    cursors[field] = decodeCursor(kind, id, cursor);
    if (cursors[field] === null) violations.push({ field, description: 'is not a cursor of this history' });
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return cursors;
}

/**
 * A user's history: for a user the caller may read (readUser in `scope`: the user itself, or
 * user.read in its organization, instance roles counting). The refusal order (README, Authentication and permissions): a
 * caller holding user.read nowhere is PERMISSION_DENIED; a user it may not read is NOT_FOUND,
 * exactly like a missing one, so ids cannot be probed.
 */
async function readableUser(ctx: CommandContext, id: string, scope: UserScope): Promise<Snapshot<unknown>> {
  const user = await readUser(ctx, id, scope);
  if (!user) throw notFound('User');
  return user;
}

/** Organizations, projects and IDPs: whoever may read the object (the entity read rules, src/commands/entities.ts). */
async function readable(ctx: CommandContext, kind: HistoryKind, id: string, userScope: UserScope = 'owner'): Promise<Snapshot<unknown>> {
  if (kind === 'user') return readableUser(ctx, id, userScope);
  const found = (await visibleMany<unknown>(ctx, kind, [id])).get(id);
  if (!found) throw permissionDenied();
  return found;
}

/**
 * A page of the aggregate's events, newest first: `first` after `after` walks
 * back in time, `last` before `before` forward from the oldest end (at most 100,
 * 20 when neither is given).
 */
export async function history(ctx: CommandContext, kind: HistoryKind, id: string, page: PageArgs): Promise<HistoryPage> {
  const cursors = checkArgs(kind, id, page);
  const total = (await readable(ctx, kind, id)).sequence;
  for (const field of ['after', 'before'] as const) {
    if ((cursors[field] ?? 0) > total) throw invalidArgument([{ field, description: 'is not a cursor of this history' }]);
  }
  // The window in sequences: `after` a cursor is older, `before` it newer (the list is newest first).
  const newest = cursors.after !== null ? cursors.after - 1 : total;
  const oldest = cursors.before !== null ? cursors.before + 1 : 1;
  return windowPage(ctx, kind, id, total, newest, oldest, page);
}

/** The page of the window [oldest, newest]: `last` from its oldest end, else `first` from its newest. */
async function windowPage(
  ctx: CommandContext,
  kind: HistoryKind,
  id: string,
  total: number,
  newest: number,
  oldest: number,
  page: PageArgs,
): Promise<HistoryPage> {
  const [from, to] =
    page.last != null
      ? [oldest, Math.min(newest, oldest + page.last - 1)]
      : [Math.max(oldest, newest - (page.first ?? DEFAULT_PAGE) + 1), newest];
  const events = from <= to ? await ctx.deps.store.eventRange(kind, id, from, to) : [];
  await chargeReads(
    ctx.reads,
    events.reduce((sum, e) => sum + weightOf(e.payload), 0),
  );
  const edges = events.reverse().map((node) => ({ cursor: encodeCursor(kind, id, node.sequence), node }));
  return {
    totalCount: total,
    edges,
    // Relay's rules: the direction paged in looks inside the window (more edges than asked for);
    // the other looks past the cursor that bounds the window (events beyond it exist).
    pageInfo: {
      hasNextPage: page.last != null ? from > 1 : from > oldest,
      hasPreviousPage: page.last != null ? to < newest : to < total,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

export interface SequenceQuery {
  /** Events older than this sequence, newest first (past the newest, or absent: from the newest). */
  beforeSequence?: number | null;
  /** Events newer than this sequence, oldest first (absent or 0: from the oldest). */
  afterSequence?: number | null;
  /** The page size: null for the default, at most MAX_PAGE (else INVALID_ARGUMENT on `first`, or `last` going forward). */
  limit?: number | null;
}

/**
 * The history paged by sequence instead of cursor, for the wire's ChangeQuery: the same
 * permissions, page sizes and window as `history` with the cursor of that sequence
 * (`first`/`after` back in time, `last`/`before` forward), except that a sequence past
 * the newest is not refused (back in time it starts at the newest, forward the page is
 * empty). `id` null for an organization: the acting one (the header, else the caller's own).
 * A user is looked for in `userScope` (reads.ts readUser; `history` looks in the user's own
 * organization, the parent User having been found under the read rules already).
 * Edges newest first, as `history` gives them.
 */
export async function historyFromSequence(
  ctx: CommandContext,
  kind: HistoryKind,
  id: string | null,
  query: SequenceQuery,
  userScope: UserScope = 'owner',
): Promise<HistoryPage> {
  const forward = query.afterSequence != null;
  const page: PageArgs = forward ? { last: query.limit ?? DEFAULT_PAGE } : { first: query.limit ?? DEFAULT_PAGE };
  checkArgs(kind, id ?? '', page);
  const sequence = (forward ? query.afterSequence : query.beforeSequence) ?? 0;
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw invalidArgument([{ field: forward ? 'afterSequence' : 'beforeSequence', description: 'must be a sequence (0 or more)' }]);
  }
  let target = id;
  if (target === null) {
    if (kind !== 'org') throw invalidArgument([{ field: 'id', description: 'must be given' }]);
    target = (await actingOrg(ctx, await authenticate(ctx, permissionReads(ctx)))).id;
  }
  const total = (await readable(ctx, kind, target, userScope)).sequence;
  const newest = forward || sequence === 0 ? total : Math.min(total, sequence - 1);
  const oldest = forward ? sequence + 1 : 1;
  return windowPage(ctx, kind, target, total, newest, oldest, page);
}
