// The event store port (DESIGN.md section 3). Events are the truth; the state
// document per aggregate is a cache caught up from events on read.

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

/** A reduced aggregate with the metadata that `details` is built from. */
export interface Snapshot<S> {
  id: string;
  state: S;
  sequence: number;
  resourceOwner: string;
  creationDate: Date;
  changeDate: Date;
}

export type Reducer<S = unknown> = (state: S | undefined, event: StoredEvent) => S;
export type Reducers = Record<AggregateType, Reducer<any>>;

/** Two writers appended the same (aggregate, sequence): reload and retry. */
export class ConcurrencyError extends Error {
  constructor(readonly aggregateType: AggregateType, readonly aggregateId: string, readonly sequence: number) {
    super(`sequence ${sequence} of ${aggregateType} ${aggregateId} already written`);
    this.name = 'ConcurrencyError';
  }
}

/** A uniqueness key is held by another aggregate. */
export class ConstraintError extends Error {
  constructor(readonly key: string) {
    super(`constraint ${key} is taken`);
    this.name = 'ConstraintError';
  }
}


export interface AppendOptions {
  /** Uniqueness keys to claim before the append; released if the append fails. */
  claims?: string[];
}

export interface EventStore {
  /** The aggregate's state, caught up from its events; null when it has none. */
  load<S>(type: AggregateType, id: string): Promise<Snapshot<S> | null>;
  /** Load several aggregates of one type (missing ones are absent from the map). */
  loadMany<S>(type: AggregateType, ids: readonly string[]): Promise<Map<string, Snapshot<S>>>;
  /**
   * Append one event at event.sequence. Throws ConcurrencyError when that
   * sequence exists, ConstraintError when a claim is held elsewhere. On success
   * the state document is updated and the new snapshot returned.
   */
  append<S>(event: NewEvent, options?: AppendOptions): Promise<{ event: StoredEvent; snapshot: Snapshot<S> }>;
  /** The aggregate id holding a uniqueness key, or null. */
  lookup(key: string): Promise<{ aggregateType: AggregateType; aggregateId: string } | null>;
  /** All events of one aggregate in sequence order (tests, audits). */
  events(type: AggregateType, id: string): Promise<StoredEvent[]>;
  /** Resolves when the backing server answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
