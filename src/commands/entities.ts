// Reads by id for the federation subgraph: an organization, and many aggregates
// of one type at once (the `_entities` representations of one request), with
// the read rules of the queries. What the caller may not see is left out.
import { permissionDenied } from '../errors.ts';
import type { Org } from '../model/orgs.ts';
import type { Snapshot } from '../store/port.ts';
import { INSTANCE_ID } from '../model/orgs.ts';
import { authenticate, readerFor, type Caller } from './access.ts';
import { load, loadMany, type CommandContext } from './context.ts';

export type EntityKind = 'user' | 'org' | 'project' | 'idp';

/**
 * An organization for a caller holding any role there, an instance role, or
 * belonging to it; null when it does not exist (instance roles only: for anyone
 * else a missing and a hidden organization are both PERMISSION_DENIED, so ids
 * cannot be probed).
 */
export async function organization(ctx: CommandContext, id: string): Promise<Snapshot<Org> | null> {
  const caller = await authenticate(ctx, { org: [id], instance: [INSTANCE_ID] });
  const [org, reader] = await Promise.all([load<Org>(ctx, 'org', id), readerFor(ctx, caller)]);
  if (org && (isOwnOrg(caller, org) || reader.mayRead(org))) return org;
  if (!org && reader.instanceRole) return null;
  throw permissionDenied();
}

/**
 * The aggregates among `ids` the caller may see, in one store round trip for the
 * aggregates (plus one for their organizations):
 * - the caller's own user, and organization it belongs to;
 * - users where the caller holds user.read (in their organization, or from an instance role),
 *   as the `user` query;
 * - anything else in an organization where the caller holds a role, or anywhere with an instance role;
 * - with an x-service-orgid header, only what lives in that organization (users, projects,
 *   identity providers), as the `user`, `project` and `identityProvider` queries do.
 */
export async function visibleMany<S>(ctx: CommandContext, kind: EntityKind, ids: readonly string[]): Promise<Map<string, Snapshot<S>>> {
  const caller = await authenticate(ctx, { [kind]: ids, instance: [INSTANCE_ID] });
  const [found, reader] = await Promise.all([loadMany<S>(ctx, kind, ids), readerFor(ctx, caller)]);
  const orgIdOf = (s: Snapshot<S>) => (kind === 'org' ? s.id : s.resourceOwner);
  const orgs =
    kind === 'org'
      ? (found as unknown as Map<string, Snapshot<Org>>)
      : found.size === 0
        ? new Map<string, Snapshot<Org>>()
        : await loadMany<Org>(ctx, 'org', [...new Set([...found.values()].map(orgIdOf))]);
  const visible = new Map<string, Snapshot<S>>();
  for (const [id, snapshot] of found) {
    const org = orgs.get(orgIdOf(snapshot));
    if (kind !== 'org' && ctx.orgHeader && snapshot.resourceOwner !== ctx.orgHeader) continue;
    const own = kind === 'user' ? id === caller.id : kind === 'org' && !!org && isOwnOrg(caller, org);
    const readable = !!org && (kind === 'user' ? reader.may(org, 'user.read') : reader.mayRead(org));
    if (own || readable) visible.set(id, snapshot);
  }
  return visible;
}

const isOwnOrg = (caller: Caller, org: Snapshot<Org>) => caller.user.resourceOwner === org.id;
