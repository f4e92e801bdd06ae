// The history of an aggregate, newest first, a page at a time (Relay paging).
// Sequences run 1..n without gaps, so the snapshot's sequence is the count and a
// page is a sequence range: one read of the snapshot, one of the range.
import { invalidArgument, notFound, permissionDenied } from '../errors.ts';
import type { Snapshot } from '../store/port.ts';
import { actingOrg, authenticate, permissionReads } from './access.ts';
import { chargeReads, type CommandContext } from './context.ts';
import { readUser, type UserScope } from './reads.ts';
import { weightOf } from '../store/weight.ts';
import { visibleMany } from './entities.ts';
import {
  checkArgs,
  cursorWindow,
  historyPage,
  pageRange,
  sequencePage,
  sequenceWindow,
  type HistoryKind,
  type HistoryPage,
  type HistoryWindow,
  type PageArgs,
  type SequenceQuery,
} from './history-inputs.ts';

export { DEFAULT_PAGE, MAX_PAGE, type HistoryKind, type HistoryPage, type PageArgs, type SequenceQuery } from './history-inputs.ts';

/**
 * A user's history: for a user the caller may read (readUser in `scope`: the user itself, or
 * user.read in its organization, instance roles counting). The refusal order (docs/authentication.md): a
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
  const window = cursorWindow(cursors, (await readable(ctx, kind, id)).sequence);
  return windowPage(ctx, kind, id, window, page);
}

/** The page of the window: one range read of the store, charged to the request's read budget. */
async function windowPage(ctx: CommandContext, kind: HistoryKind, id: string, window: HistoryWindow, page: PageArgs): Promise<HistoryPage> {
  const range = pageRange(window, page);
  const events = range[0] <= range[1] ? await ctx.deps.store.eventRange(kind, id, range[0], range[1]) : [];
  await chargeReads(
    ctx.reads,
    events.reduce((sum, e) => sum + weightOf(e.payload), 0),
  );
  return historyPage(kind, id, window, page, range, events.reverse());
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
  const asked = sequencePage(kind, id, query);
  let target = id;
  if (target === null) {
    if (kind !== 'org') throw invalidArgument([{ field: 'id', description: 'must be given' }]);
    target = (await actingOrg(ctx, await authenticate(ctx, permissionReads(ctx)))).id;
  }
  const window = sequenceWindow(asked, (await readable(ctx, kind, target, userScope)).sequence);
  return windowPage(ctx, kind, target, window, asked.page);
}
