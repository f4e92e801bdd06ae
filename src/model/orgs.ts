// The organization aggregate and the instance aggregate (first administrator, default organization).
import type { StoredEvent } from './events.ts';

export interface Org {
  name: string;
  domain: string;
  /** Roles granted in this organization. A list, not a map: user ids may hold dots, which MongoDB-wire servers refuse as keys. */
  members: Member[];
}

export type Member = {
  userId: string;
  roles: string[];
};

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

/** Every event of the organization aggregate. */
export type OrgEvent =
  { type: typeof orgEvents.added; payload: { name: string; domain: string } } | { type: typeof orgEvents.memberAdded; payload: Member };

/** Every event of the instance aggregate. */
export type InstanceEvent = { type: typeof instanceEvents.setUp; payload: { adminUserId: string; defaultOrgId: string } };

export const orgEvent = {
  added: (name: string, domain: string): OrgEvent => ({ type: orgEvents.added, payload: { name, domain } }),
  memberAdded: (userId: string, roles: string[]): OrgEvent => ({ type: orgEvents.memberAdded, payload: { userId, roles } }),
};

export const instanceEvent = {
  setUp: (adminUserId: string, defaultOrgId: string): InstanceEvent => ({
    type: instanceEvents.setUp,
    payload: { adminUserId, defaultOrgId },
  }),
};

export function reduceOrg(state: Org | undefined, event: StoredEvent & OrgEvent): Org {
  if (event.type === orgEvents.added) return { name: event.payload.name, domain: event.payload.domain, members: [] };
  if (!state) throw new Error(`${event.type} before ${orgEvents.added} for org ${event.aggregateId}`);
  if (event.type === orgEvents.memberAdded) {
    const { userId, roles } = event.payload;
    return { ...state, members: [...state.members.filter((m) => m.userId !== userId), { userId, roles }] };
  }
  return state;
}

export function reduceInstance(state: Instance | undefined, event: StoredEvent & InstanceEvent): Instance {
  if (event.type === instanceEvents.setUp)
    return { defaultOrgId: event.payload.defaultOrgId, members: [{ userId: event.payload.adminUserId, roles: ['IAM_OWNER'] }] };
  if (!state) throw new Error(`${event.type} before ${instanceEvents.setUp}`);
  return state;
}
