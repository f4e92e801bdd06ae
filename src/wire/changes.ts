// The change lists of zitadel.management.v1.ManagementService (ListUserChanges, ListOrgChanges,
// ListProjectChanges) over the history command (src/commands/history.ts): a translation of
// zitadel.change.v1.ChangeQuery to the command's sequence paging and of its events to
// zitadel.change.v1.Change, nothing more. The command's permissions apply as on GraphQL: a
// user's changes for a user GetUserByID would answer (management's, as GraphQL's `user { history }`:
// the user itself, or user.read in the acting organization, with the same refusals), an
// organization's or a project's for whoever may read it.
//
// ChangeQuery: asc false (proto3's default) is newest first, from below `sequence` (0: from the
// newest); asc true is oldest first, from above `sequence`. `limit` is the page size (0: the
// command's default; past its maximum the command's INVALID_ARGUMENT, named `query.limit`).
// ListOrgChanges lists the acting organization: x-zitadel-orgid / x-service-orgid, else the
// caller's own. The management API has no change list of an organization's IdPs: not served.
//
// Change: event_type's key is the event type (`user.profile.changed`), its localized_message a
// readable form of it ("User profile changed"). The editor's display and preferred login name
// (its username) are filled when the editor is a user the caller may read (the entity read rules,
// one batched read per page); otherwise, and for 'system', they are empty. No avatars here:
// editor_avatar_url is always empty. What an event changed is not part of Change: nothing of
// its payload is sent.
import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ChangeSchema, type Change, type ChangeQuery } from '@zitadel/proto/zitadel/change_pb.js';
import type { CommandContext, HistoryKind, Operations, UserScope } from '../operations.ts';
import type { User } from '../model/users.ts';
import type { StoredEvent } from '../store/port.ts';
import { unary, type WireDeps } from './context.ts';
import type { FieldRenames } from './errors.ts';

/** The command's paging fields in the request's names. */
const renames: FieldRenames = {
  first: 'query.limit',
  last: 'query.limit',
  beforeSequence: 'query.sequence',
  afterSequence: 'query.sequence',
};

const toNumber = (n: bigint): number => (n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n));

/** `user.profile.changed` -> "User profile changed". */
const readable = (type: string): string => {
  const words = type.replace(/[._-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const displayName = (u: User): string =>
  u.profile?.displayName || [u.profile?.firstName, u.profile?.lastName].filter(Boolean).join(' ') || u.username;

/** One page of the aggregate's changes, in the order the query asks for. */
export async function listChanges(
  ops: Operations,
  ctx: CommandContext,
  kind: HistoryKind,
  id: string | null,
  query: ChangeQuery | undefined,
  userScope?: UserScope,
): Promise<{ result: Change[] }> {
  const asc = query?.asc ?? false;
  const sequence = toNumber(query?.sequence ?? 0n);
  const limit = query?.limit ? query.limit : null;
  const page = await ops.historyFromSequence(
    ctx,
    kind,
    id,
    asc ? { afterSequence: sequence, limit } : { beforeSequence: sequence, limit },
    userScope,
  );
  const events: StoredEvent[] = page.edges.map((e) => e.node);
  if (asc) events.reverse();
  const editorIds = [...new Set(events.map((e) => e.creator).filter((c) => c !== 'system'))];
  const editors = editorIds.length > 0 ? await ops.entities<User>(ctx, 'user', editorIds) : new Map();
  return {
    result: events.map((e) => {
      const editor = editors.get(e.creator)?.state as User | undefined;
      return create(ChangeSchema, {
        changeDate: timestampFromDate(e.createdAt),
        eventType: { key: e.type, localizedMessage: readable(e.type) },
        sequence: BigInt(e.sequence),
        editorId: e.creator,
        editorDisplayName: editor ? displayName(editor) : '',
        resourceOwnerId: e.resourceOwner,
        editorPreferredLoginName: editor?.username ?? '',
        editorAvatarUrl: '',
      });
    }),
  };
}

export const listUserChanges = (wire: WireDeps) =>
  unary(
    wire,
    'ListUserChanges',
    (ctx, req: { userId: string; query?: ChangeQuery }, ops) => listChanges(ops, ctx, 'user', req.userId, req.query, 'acting'),
    renames,
  );

export const listOrgChanges = (wire: WireDeps) =>
  unary(wire, 'ListOrgChanges', (ctx, req: { query?: ChangeQuery }, ops) => listChanges(ops, ctx, 'org', null, req.query), renames);

export const listProjectChanges = (wire: WireDeps) =>
  unary(
    wire,
    'ListProjectChanges',
    (ctx, req: { projectId: string; query?: ChangeQuery }, ops) => listChanges(ops, ctx, 'project', req.projectId, req.query),
    renames,
  );
