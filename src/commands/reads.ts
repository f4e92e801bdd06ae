// Read use cases: the caller, and users by id (GraphQL's `user`, the wire's GetUserByID v1 and
// v2, and the user a change list is of), under the refusal order (docs/authentication.md).
import { permissionDenied } from '../errors.ts';
import { INSTANCE_ID, type Org } from '../model/orgs.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { authenticate, can, holdsAnywhere, type Caller } from './access.ts';
import { load, orgHint, type CommandContext } from './context.ts';

/** One read: the caller's state document. */
export async function me(ctx: CommandContext): Promise<Snapshot<User>> {
  return (await authenticate(ctx)).user;
}

/**
 * Where a user is looked for:
 * - 'acting': in the acting organization (the header, else the caller's own), as ZITADEL's
 *   management GetUserByID and ListUserChanges and the GraphQL `user` query;
 * - 'anywhere': in the user's own organization, or only in the header's when one is sent, as
 *   ZITADEL's v2 GetUserByID;
 * - 'owner': in the user's own organization, the header not considered: for a user already
 *   found under the read rules (GraphQL's `history` of a User).
 */
export type UserScope = 'acting' | 'anywhere' | 'owner';

/**
 * A user the caller may read (the user itself, or user.read in the organization it is looked
 * for in: instance roles count), or null when there is none it may read: a user it may not read
 * and a missing one are the same answer. The refusal order (docs/authentication.md), before the
 * target counts for anything:
 * 1. another user, and the caller holds user.read nowhere: PERMISSION_DENIED;
 * 2. a header naming an organization that does not exist, or where the caller holds no
 *    user.read: PERMISSION_DENIED (the caller reading itself in its own organization needs none);
 * 3. then a user that is not there, or that the caller may not read there: null (NOT_FOUND).
 * A user's email, phone and metadata are personal data: the other roles (settings, projects)
 * reach no further than their permissions.
 */
export async function readUser(ctx: CommandContext, id: string, scope: UserScope): Promise<Snapshot<User> | null> {
  const header = scope === 'owner' ? null : ctx.orgHeader;
  const selfOnly = id === ctx.callerId && !header;
  // One round trip for the caller, the target, the organizations they likely belong to, and the instance roles.
  const wanted = selfOnly ? {} : { user: [id], org: [header, orgHint(ctx, ctx.callerId), orgHint(ctx, id)], instance: [INSTANCE_ID] };
  const caller = await authenticate(ctx, wanted);
  const self = id === caller.id;
  if (self && (!header || header === caller.user.resourceOwner)) return caller.user;
  if (!self && !(await holdsAnywhere(ctx, caller, 'user.read'))) throw permissionDenied();
  if (header) {
    const org = await load<Org>(ctx, 'org', header);
    if (!org || !(await can(ctx, caller, org, 'user.read'))) throw permissionDenied();
  }
  const target = self ? caller.user : await load<User>(ctx, 'user', id);
  if (!target) return null;
  const orgId = scope === 'acting' ? (header ?? caller.user.resourceOwner) : (header ?? target.resourceOwner);
  if (target.resourceOwner !== orgId) return null;
  return (await mayReadUsersIn(ctx, caller, orgId)) ? target : null;
}

/** user.read in the organization (checked already when it is the header's). */
async function mayReadUsersIn(ctx: CommandContext, caller: Caller, orgId: string): Promise<boolean> {
  const org = await load<Org>(ctx, 'org', orgId);
  return !!org && (await can(ctx, caller, org, 'user.read'));
}

/** A user of the acting organization the caller may read (readUser 'acting'): GraphQL's `user`, management GetUserByID. */
export const user = (ctx: CommandContext, id: string) => readUser(ctx, id, 'acting');
