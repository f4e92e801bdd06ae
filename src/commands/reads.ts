// Read use cases: the caller, and users of the acting organization.
import { permissionDenied } from '../errors.ts';
import type { Org } from '../model/orgs.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { actingOrg, authenticate, can, permissionReads } from './access.ts';
import { load, type CommandContext } from './context.ts';

/** One read: the caller's state document. */
export async function me(ctx: CommandContext): Promise<Snapshot<User>> {
  return (await authenticate(ctx)).user;
}

/**
 * A user of the acting organization, for the user itself or a caller holding
 * user.read there (or from an instance role), as ZITADEL's GetUserByID; null
 * when it is not in that organization, PERMISSION_DENIED for a caller without
 * user.read there. A user's email, phone and metadata are personal data: the
 * other roles (settings, projects) reach no further than their permissions.
 */
export async function user(ctx: CommandContext, id: string): Promise<Snapshot<User> | null> {
  const own = id === ctx.callerId && !ctx.orgHeader;
  const caller = await authenticate(ctx, own ? {} : { ...permissionReads(ctx), user: [id] });
  if (id === caller.id && !ctx.orgHeader) return caller.user;
  const org: Snapshot<Org> = await actingOrg(ctx, caller);
  // The permission before the target: a caller without it gets the same answer whether the id
  // exists in the organization or not, so it cannot probe which ids do.
  if (id !== caller.id && !(await can(ctx, caller, org, 'user.read'))) throw permissionDenied();
  const target = id === caller.id ? caller.user : await load<User>(ctx, 'user', id);
  if (!target || target.resourceOwner !== org.id) return null;
  return target;
}
