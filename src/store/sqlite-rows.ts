// Rows of the SQLite event store as they cross to its worker thread, and their
// conversion from and to events and snapshots (on the main thread: the worker only
// moves strings and numbers). JSON keeps Dates and bytes tagged as the old log did.
import type { AggregateType, Snapshot, StoredEvent, UserProjection } from './port.ts';
import { mapDeep, tag, untag } from './json-tags.ts';

export interface EventRow {
  type: string;
  id: string;
  sequence: number;
  eventType: string;
  payload: string;
  createdAt: number;
  creator: string;
  resourceOwner: string;
  /** JSON array of the keys claimed with the event. */
  claims: string;
}

export interface StateRow {
  type: string;
  id: string;
  state: string;
  sequence: number;
  resourceOwner: string;
  creationDate: number;
  changeDate: number;
}

export interface SearchRow {
  id: string;
  org: string;
  username: string;
  email: string;
  displayName: string;
  firstName: string;
  lastName: string;
  state: string;
  emailVerified: number;
  created: number;
  changed: number;
}

/** An append as the worker writes it: event, claims, the new state and its search row. */
export interface AppendRow {
  event: EventRow;
  claims: string[];
  state: StateRow;
  search: SearchRow | null;
  /** The sequence follows the committed tip the main thread holds: the worker need not look for a gap. */
  checked?: boolean;
}

export const toJson = (value: unknown): string => JSON.stringify(mapDeep(value, tag));
export const fromJson = (text: string): any => mapDeep(JSON.parse(text), untag);

export function eventRow(e: StoredEvent, payload = toJson(e.payload)): EventRow {
  return {
    type: e.aggregateType,
    id: e.aggregateId,
    sequence: e.sequence,
    eventType: e.type,
    payload,
    createdAt: e.createdAt.getTime(),
    creator: e.creator,
    resourceOwner: e.resourceOwner,
    claims: JSON.stringify(e.claims),
  };
}

export function eventOf(r: EventRow): StoredEvent {
  return {
    aggregateType: r.type as AggregateType,
    aggregateId: r.id,
    sequence: r.sequence,
    type: r.eventType,
    payload: fromJson(r.payload),
    creator: r.creator,
    resourceOwner: r.resourceOwner,
    createdAt: new Date(r.createdAt),
    claims: JSON.parse(r.claims),
  };
}

export function stateRow(type: AggregateType, s: Snapshot<unknown>): StateRow {
  return {
    type,
    id: s.id,
    state: toJson(s.state),
    sequence: s.sequence,
    resourceOwner: s.resourceOwner,
    creationDate: s.creationDate.getTime(),
    changeDate: s.changeDate.getTime(),
  };
}

export function snapshotOf<S>(r: StateRow): Snapshot<S> {
  return {
    id: r.id,
    state: fromJson(r.state),
    sequence: r.sequence,
    resourceOwner: r.resourceOwner,
    creationDate: new Date(r.creationDate),
    changeDate: new Date(r.changeDate),
  };
}

/** The user_search row of a user's snapshot; null for other aggregates or without a projection. */
export function searchRow(type: AggregateType, s: Snapshot<unknown>, project: UserProjection | undefined): SearchRow | null {
  if (type !== 'user' || !project) return null;
  const f = project(s.state);
  return {
    id: s.id,
    org: s.resourceOwner,
    username: f.username,
    email: f.email,
    displayName: f.displayName,
    firstName: f.firstName,
    lastName: f.lastName,
    state: f.state,
    emailVerified: f.emailVerified ? 1 : 0,
    created: s.creationDate.getTime(),
    changed: s.changeDate.getTime(),
  };
}
