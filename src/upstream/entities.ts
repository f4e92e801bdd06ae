// The federation entity loads over ZITADEL's API. Users: one ListUsers (user v2, an in-user-ids
// query) for every representation of a request, not one call per entity; the organization header,
// when sent, narrows them as the embedded loads do. Organizations, projects and identity providers
// have no read of many by id in ZITADEL's API: one read each (a page names few of them). A caller
// the search refuses (no user.read there) sees only its own user among them, as the embedded loads.
import { AppError } from '../errors.ts';
import type { EntityKind } from '../operations.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import type { UpstreamContext } from './context.ts';
import { userOf } from './convert.ts';
import { identityProvider, me, organization, project } from './reads.ts';
import { read } from './send.ts';

async function users(ctx: UpstreamContext, ids: readonly string[]): Promise<Map<string, Snapshot<User>>> {
  const found = new Map<string, Snapshot<User>>();
  if (ids.length === 0) return found;
  const r = await listed(ctx, ids);
  if (!r) {
    // A caller that may list no users still sees itself, as in the embedded loads.
    const mine = await me(ctx);
    if (ids.includes(mine.id) && (!ctx.orgHeader || mine.resourceOwner === ctx.orgHeader)) found.set(mine.id, mine);
    return found;
  }
  for (const u of r.result) {
    const user = userOf(u);
    if (user && (!ctx.orgHeader || user.resourceOwner === ctx.orgHeader)) found.set(user.id, user);
  }
  return found;
}

/** One ListUsers for the ids; null when the caller may list none (PERMISSION_DENIED). */
async function listed(ctx: UpstreamContext, ids: readonly string[]) {
  try {
    return await read(ctx, 'ListUsers', (o) =>
      ctx.upstream.clients.users.listUsers(
        { query: { limit: ids.length }, queries: [{ query: { case: 'inUserIdsQuery', value: { userIds: [...ids] } } }] },
        o,
      ),
    );
  } catch (err) {
    if (err instanceof AppError && err.code === 'PERMISSION_DENIED') return null;
    throw err;
  }
}

export async function entities<S>(ctx: UpstreamContext, kind: EntityKind, ids: readonly string[]): Promise<Map<string, Snapshot<S>>> {
  if (ctx.authError) throw ctx.authError;
  if (kind === 'user') return (await users(ctx, ids)) as unknown as Map<string, Snapshot<S>>;
  const one = kind === 'org' ? organization : kind === 'project' ? project : identityProvider;
  const found = new Map<string, Snapshot<S>>();
  const settled = await Promise.allSettled(ids.map((id) => one(ctx, id)));
  settled.forEach((s, i) => {
    // What the caller may not see is left out, as the embedded loads leave it out.
    if (s.status === 'fulfilled' && s.value) found.set(ids[i]!, s.value as unknown as Snapshot<S>);
    else if (s.status === 'rejected' && !(s.reason as { code?: string })?.code?.match(/PERMISSION_DENIED|NOT_FOUND/)) throw s.reason;
  });
  return found;
}
