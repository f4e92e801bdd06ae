// The organization aggregate and the instance aggregate (first administrator, default organization).
import type { StoredEvent } from '../store/port.ts';

export interface Org {
  name: string;
  domain: string;
  /** Roles granted in this organization. A list, not a map: user ids may hold dots, which MongoDB-wire servers refuse as keys. */
  members: Member[];
}

export interface Member {
  userId: string;
  roles: string[];
}

export interface Instance {
  defaultOrgId: string;
  /** Instance roles (IAM_OWNER). */
  members: Member[];
}

export const rolesOf = (state: { members: Member[] }, userId: string): string[] =>
  state.members.find((m) => m.userId === userId)?.roles ?? [];

export const INSTANCE_ID = 'instance';

export const orgEvents = {
  added: 'org.added',
  memberAdded: 'org.member.added',
} as const;

export const instanceEvents = {
  setUp: 'instance.set-up',
} as const;

export function reduceOrg(state: Org | undefined, event: StoredEvent): Org {
  const p = event.payload as any;
  if (event.type === orgEvents.added) return { name: p.name, domain: p.domain, members: [] };
  if (!state) throw new Error(`${event.type} before ${orgEvents.added} for org ${event.aggregateId}`);
  if (event.type === orgEvents.memberAdded) {
    return { ...state, members: [...state.members.filter((m) => m.userId !== p.userId), { userId: p.userId, roles: p.roles }] };
  }
  return state;
}

export function reduceInstance(state: Instance | undefined, event: StoredEvent): Instance {
  const p = event.payload as any;
  if (event.type === instanceEvents.setUp) return { defaultOrgId: p.defaultOrgId, members: [{ userId: p.adminUserId, roles: ['IAM_OWNER'] }] };
  if (!state) throw new Error(`${event.type} before ${instanceEvents.setUp}`);
  return state;
}
