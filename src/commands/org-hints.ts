// Which organization each user was last seen in, for the whole process (Deps.orgHints).
import type { AggregateType, Snapshot } from '../store/port.ts';

/**
 * Which organization a user belongs to, as last seen by this process: a user's
 * organization never changes, so it only tells which organization to read in the
 * first round trip, beside the user. A wrong or missing hint costs one more
 * round trip, never a wrong answer (the user's document decides). Ids only, no
 * roles: permissions always come from documents read by the request.
 */
export type OrgHints = Map<string, string>;
const MAX_HINTS = 20_000;

/** The hints of one gateway (Deps.orgHints): at most MAX_HINTS users, the oldest forgotten first. */
export const newOrgHints = (): OrgHints => new Map();

export function noteOrgs(hints: OrgHints, type: AggregateType, snapshots: Iterable<Snapshot<unknown> | null>): void {
  if (type !== 'user') return;
  for (const s of snapshots) {
    if (!s || hints.get(s.id) === s.resourceOwner) continue;
    if (hints.size >= MAX_HINTS) hints.delete(hints.keys().next().value!);
    hints.set(s.id, s.resourceOwner);
  }
}

/** The organization `userId` belonged to when this process last read it (a guess, see orgHints). */
export function orgHint(ctx: { deps: { orgHints: OrgHints } }, userId: string | null | undefined): string | undefined {
  return userId ? ctx.deps.orgHints.get(userId) : undefined;
}
