// The events every aggregate is made of, as the model defines them: what a command appends
// and what a reducer folds. The event store (src/store/port.ts) stores exactly these; the
// model never looks at a store.

export type AggregateType = 'instance' | 'org' | 'user' | 'idp' | 'project';

export interface NewEvent {
  aggregateType: AggregateType;
  aggregateId: string;
  /** The aggregate's new sequence: the loaded sequence + 1 (1 for a new aggregate). */
  sequence: number;
  type: string;
  /** Never a secret in clear. */
  payload: Record<string, unknown>;
  /** The caller's user id ('system' for bootstrap). */
  creator: string;
  /** The owning organization (or the instance id). */
  resourceOwner: string;
}

export interface StoredEvent extends NewEvent {
  createdAt: Date;
  /** Uniqueness keys claimed together with this event. */
  claims: string[];
}

/** How one event changes an aggregate's state (undefined: the aggregate's first event). */
export type Reducer<S = unknown> = (state: S | undefined, event: StoredEvent) => S;
export type Reducers = Record<AggregateType, Reducer<any>>;
