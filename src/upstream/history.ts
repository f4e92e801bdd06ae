// History over ZITADEL's change lists (management v1 ListUserChanges, ListOrgChanges,
// ListProjectChanges, zitadel.change.v1.ChangeQuery sequence paging); our wire face serves the
// inverse in src/wire/changes.ts.
//
// The arguments and cursors are the embedded ones (src/commands/history.ts): cursors opaque and
// bound to the object, first/last at most 100, 20 by default. A page is a sequence window of the
// object, as embedded: its newest sequence (the total, and totalCount) is the sequence of the
// object's details, from the read the parent field made (one read a request, src/upstream/reads.ts),
// then ONE change-list call: newest first below a sequence (`first`), or oldest first above one
// (`last`), with the window's size as limit. A user's changes are asked in the user's own
// organization (x-zitadel-orgid), an organization's in itself, a project's with the caller's header.
//
// What a Change carries: the event's type (event_type.key), sequence, date, editor id and resource
// owner; the aggregate type and id are the ones asked for. It carries nothing of the event's
// payload (ZITADEL's Change has no field for it), so a HistoryEvent's `changes` show only what the
// type alone tells (user.email.verified: email.isVerified true), not the fields an event set as
// embedded does; `editor` is resolved as embedded (the entity load of users).
//
// Identity providers: ZITADEL has no change list of an organization's IdPs, so their history is
// FAILED_PRECONDITION "history of identity providers is not served in upstream mode".
import type { Change } from '@zitadel/proto/zitadel/change_pb.js';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import {
  checkArgs,
  cursorWindow,
  historyPage,
  pageRange,
  sequencePage,
  sequenceWindow,
  type HistoryWindow,
  type PageArgs,
  type SequenceQuery,
} from '../commands/history-inputs.ts';
import { AppError, invalidArgument, notFound, permissionDenied } from '../errors.ts';
import type { AggregateType } from '../model/events.ts';
import type { HistoryKind, HistoryPage, UserScope } from '../operations.ts';
import type { Snapshot, StoredEvent } from '../store/port.ts';
import type { Credentials } from './client.ts';
import type { UpstreamContext } from './context.ts';
import { me, organization, project, readUser } from './reads.ts';
import { read, requireCaller } from './send.ts';

const idpRefused = () => new AppError('FAILED_PRECONDITION', 'history of identity providers is not served in upstream mode');

/** The object as read (its sequence: the total) and the credentials its change list is asked with. */
async function target(
  ctx: UpstreamContext,
  kind: HistoryKind,
  id: string,
  userScope: UserScope,
): Promise<{ object: Snapshot<unknown>; credentials: Credentials }> {
  if (kind === 'user') {
    const user = await readUser(ctx, id, userScope === 'acting' ? 'acting' : 'anywhere');
    if (!user) throw notFound('User');
    const orgId = userScope === 'acting' ? ctx.credentials.orgId : user.resourceOwner;
    return { object: user, credentials: { ...ctx.credentials, orgId } };
  }
  if (kind === 'org') {
    const org = await organization(ctx, id);
    if (!org) throw permissionDenied();
    return { object: org, credentials: { ...ctx.credentials, orgId: id } };
  }
  if (kind === 'project') {
    const found = await project(ctx, id);
    if (!found) throw permissionDenied();
    return { object: found, credentials: ctx.credentials };
  }
  throw idpRefused();
}

const AGGREGATE: Record<HistoryKind, AggregateType> = { user: 'user', org: 'org', project: 'project', idp: 'idp' };

/** A Change as the event it reports: what the Change carries, no payload. */
function eventOf(kind: HistoryKind, id: string, c: Change): StoredEvent {
  return {
    aggregateType: AGGREGATE[kind],
    aggregateId: id,
    sequence: Number(c.sequence),
    type: c.eventType?.key ?? '',
    payload: {},
    creator: c.editorId,
    resourceOwner: c.resourceOwnerId,
    createdAt: c.changeDate ? timestampDate(c.changeDate) : new Date(0),
    claims: [],
  };
}

/** One change-list call: `limit` events below `sequence` (newest first) or above it (asc), as events newest first. */
async function changes(
  ctx: UpstreamContext,
  kind: HistoryKind,
  id: string,
  credentials: Credentials,
  query: { sequence: number; limit: number; asc: boolean },
): Promise<StoredEvent[]> {
  const m = ctx.upstream.clients.management;
  const q = { sequence: BigInt(query.sequence), limit: query.limit, asc: query.asc };
  const call = <T>(method: string, send: Parameters<typeof read<T>>[2]) => read(ctx, method, send, credentials);
  const r =
    kind === 'user'
      ? await call('ListUserChanges', (o) => m.listUserChanges({ userId: id, query: q }, o))
      : kind === 'org'
        ? await call('ListOrgChanges', (o) => m.listOrgChanges({ query: q }, o))
        : await call('ListProjectChanges', (o) => m.listProjectChanges({ projectId: id, query: q }, o));
  const events = r.result.map((c) => eventOf(kind, id, c));
  return query.asc ? events.reverse() : events;
}

/** The page of the window: one change-list call for the sequences it covers. */
async function windowPage(
  ctx: UpstreamContext,
  kind: HistoryKind,
  id: string,
  credentials: Credentials,
  window: HistoryWindow,
  page: PageArgs,
): Promise<HistoryPage> {
  const [from, to] = pageRange(window, page);
  const events =
    from <= to
      ? page.last != null
        ? await changes(ctx, kind, id, credentials, { sequence: from - 1, limit: to - from + 1, asc: true })
        : await changes(ctx, kind, id, credentials, { sequence: to + 1, limit: to - from + 1, asc: false })
      : [];
  return historyPage(
    kind,
    id,
    window,
    page,
    [from, to],
    events.filter((e) => e.sequence >= from && e.sequence <= to),
  );
}

export async function history(ctx: UpstreamContext, kind: HistoryKind, id: string, raw: unknown): Promise<HistoryPage> {
  const page = (raw ?? {}) as PageArgs;
  const cursors = checkArgs(kind, id, page);
  if (kind === 'idp') throw idpRefused();
  requireCaller(ctx);
  const { object, credentials } = await target(ctx, kind, id, 'owner');
  return windowPage(ctx, kind, id, credentials, cursorWindow(cursors, object.sequence), page);
}

/** The embedded historyFromSequence's window over the same calls (`id` null: the acting organization). */
export async function historyFromSequence(
  ctx: UpstreamContext,
  kind: HistoryKind,
  id: string | null,
  raw: unknown,
  userScope: UserScope = 'owner',
): Promise<HistoryPage> {
  const query = (raw ?? {}) as SequenceQuery;
  const asked = sequencePage(kind, id, query);
  if (kind === 'idp') throw idpRefused();
  requireCaller(ctx);
  let targetId = id;
  if (targetId === null) {
    if (kind !== 'org') throw invalidArgument([{ field: 'id', description: 'must be given' }]);
    targetId = ctx.orgHeader ?? (await me(ctx)).resourceOwner;
  }
  const { object, credentials } = await target(ctx, kind, targetId, userScope);
  return windowPage(ctx, kind, targetId, credentials, sequenceWindow(asked, object.sequence), asked.page);
}
