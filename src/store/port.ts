// The event store port (docs/architecture.md, Persistence). Events are the truth; the state
// document per aggregate is a cache of their reduction, written right after each
// append, with the sequence of the last event folded into it.
//
// The write protocol, one read per aggregate and request:
//   1. load: the state document as stored (MongoDB: one findOne, nothing else).
//   2. decide, then append at the loaded sequence + 1, passing the loaded
//      snapshot as `base`: the store reduces the new state from it, no reload.
//   3. The unique (aggregateType, aggregateId, sequence) index is the judge: a
//      concurrent writer, or a state document left behind its events by a crash
//      between the two writes, makes the insert a duplicate: ConcurrencyError.
//   4. Only then catchUp: the events after the known sequence folded in (the state
//      document written back), and the command decides and appends again.
// So no write is lost and nothing is read twice on the hot path. Reads serve the
// state document as it is, never looking at the events.
//
// How long a state document can stay behind its events (reads, and permission
// checks: org and instance documents hold the roles):
//   - A failed state write in a process that lives on: repaired in the background
//     by that process (MongoDB: retried with backoff, from 0.5 s).
//   - A crash between the event and its state write (MongoDB): the repair loop in
//     every gateway (src/store/mongo.ts) reads the events created since its last
//     sweep (minus an overlap for clocks that differ between gateways) and catches
//     up each state document behind an event older than a grace period (2 s, so a
//     writer between its two writes is left alone; catching up is conditional on
//     the sequence and idempotent, so a race is harmless). Bound: about grace +
//     interval (2 s + 1 s) while any gateway runs; longer when more events arrive
//     than a pass reads (a batch), or when a pass itself is slow (the next waits 4
//     times as long). A gateway starting sweeps the last hour first, for a crash of
//     every gateway; an event older than that (or written by a clock further behind
//     than the overlap, 10 s) waits for the next write to its aggregate (step 3).
//   - The embedded store is one process and replays its log at start: never behind.
//     Its append check also sees appends waiting for their disk sync; catchUp waits
//     for such an append, so a loser of a race sees the winner after its error.

import type { AggregateType, NewEvent, Reducer, Reducers, StoredEvent } from '../model/events.ts';
import type { UserFilter, UserSearch, UserSearchFields } from './read-models.ts';

// The events are the model's (src/model/events.ts); the store keeps them as they are.
export type { AggregateType, NewEvent, Reducer, Reducers, StoredEvent };

/** A reduced aggregate with the metadata that `details` is built from. */
export interface Snapshot<S> {
  id: string;
  state: S;
  sequence: number;
  resourceOwner: string;
  creationDate: Date;
  changeDate: Date;
}

/** What a user search looks at in a user's state (src/model/users.ts userSearchFields). */
export type UserProjection = (state: any) => UserSearchFields;

/** Two writers appended the same (aggregate, sequence): reload and retry. */
export class ConcurrencyError extends Error {
  readonly aggregateType: AggregateType;
  readonly aggregateId: string;
  readonly sequence: number;
  constructor(aggregateType: AggregateType, aggregateId: string, sequence: number) {
    super(`sequence ${sequence} of ${aggregateType} ${aggregateId} already written`);
    this.aggregateType = aggregateType;
    this.aggregateId = aggregateId;
    this.sequence = sequence;
    this.name = 'ConcurrencyError';
  }
}

/** A uniqueness key is held by another aggregate. */
export class ConstraintError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`constraint ${key} is taken`);
    this.key = key;
    this.name = 'ConstraintError';
  }
}

export interface AppendOptions<S = unknown> {
  /** Uniqueness keys to claim before the append; released if the append fails. */
  claims?: string[];
  /**
   * The snapshot the event was decided on (null: a new aggregate); event.sequence
   * must be its sequence + 1. The new state is reduced from it without reading
   * anything. Left out, the store first reads the aggregate caught up (tools, setup).
   */
  base?: Snapshot<S> | null;
}

export interface EventStore {
  /**
   * The aggregate's state document as stored (one read); null when there is none.
   * After a crash between an append and its state write it may be behind its
   * events (for a bounded time: see the top of this file): an append on it then
   * fails with ConcurrencyError, and catchUp repairs it.
   */
  load<S>(type: AggregateType, id: string): Promise<Snapshot<S> | null>;
  /**
   * Load several aggregates of one type in one read (missing ones are absent from the map).
   * With `maxBytes`, throws ReadLimitError instead of holding more state than that (weight.ts).
   */
  loadMany<S>(type: AggregateType, ids: readonly string[], maxBytes?: number): Promise<Map<string, Snapshot<S>>>;
  /**
   * The aggregate with every event after `known` folded in (known null: from its
   * first event), the state document written back when it was behind; null when
   * the aggregate has no events. For the retry after a ConcurrencyError: it shows
   * at least the event that caused the error (embedded: once it is on disk).
   */
  catchUp<S>(type: AggregateType, id: string, known: Snapshot<S> | null): Promise<Snapshot<S> | null>;
  /**
   * Append one event at event.sequence. Throws ConcurrencyError when that
   * sequence exists, ConstraintError when a claim is held elsewhere. On success
   * the state document is updated and the new snapshot returned.
   */
  append<S>(event: NewEvent, options?: AppendOptions<S>): Promise<{ event: StoredEvent; snapshot: Snapshot<S> }>;
  /** The aggregate id holding a uniqueness key, or null. */
  lookup(key: string): Promise<{ aggregateType: AggregateType; aggregateId: string } | null>;
  /** All events of one aggregate in sequence order (tests, audits). */
  events(type: AggregateType, id: string): Promise<StoredEvent[]>;
  /**
   * The events of one aggregate with from <= sequence <= to, in sequence order: a page
   * of its history (sequences run 1..n without gaps, so a page is a range).
   */
  eventRange(type: AggregateType, id: string, from: number, to: number): Promise<StoredEvent[]>;
  /**
   * Users matching a search, in its order, after its key, at most its limit and, when it
   * sets maxBytes, at most that weight or a ReadLimitError (src/store/read-models.ts).
   */
  searchUsers<S>(search: UserSearch): Promise<Snapshot<S>[]>;
  /** How many users match a filter. */
  countUsers(filter: UserFilter): Promise<number>;
  /** Resolves when the backing server answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
