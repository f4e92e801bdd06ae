// The federation entity loads over ZITADEL's API. Users: one ListUsers (user v2, an in-user-ids
// query) for every representation of a request, not one call per entity; the organization header,
// when sent, narrows them as the embedded loads do. Organizations, projects and identity providers
// have no read of many by id in ZITADEL's API: one read each (a page names few of them). A caller
// the search refuses (no user.read there) sees only its own user among them, as the embedded loads.
import type { User as UserV2 } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
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
  let listed: UserV2[];
  try {
    const r = await read(ctx, 'ListUsers', (o) =>
      ctx.upstream.clients.users.listUsers(
        { query: { limit: ids.length }, queries: [{ query: { case: 'inUserIdsQuery', value: { userIds: [...ids] } } }] },
        o,
      ),
    );
    listed = r.result;
  } catch (err) {
    // A caller with no user.read where the upstream searches reads none of them but its own user (as embedded).
    if (!(err instanceof AppError) || err.code !== 'PERMISSION_DENIED') throw err;
    listed = [];
    if (ctx.callerId && ids.includes(ctx.callerId)) {
      const self = await me(ctx);
      if (!ctx.orgHeader || self.resourceOwner === ctx.orgHeader) found.set(self.id, self);
    }
  }
  for (const u of listed) {
    const user = userOf(u);
    if (user && (!ctx.orgHeader || user.resourceOwner === ctx.orgHeader)) found.set(user.id, user);
  }
  return found;
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
