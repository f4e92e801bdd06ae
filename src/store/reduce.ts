// Helpers shared by the store adapters: folding events into a snapshot, and
// freezing what the embedded store shares with its readers.
import type { Reducer, Snapshot, StoredEvent } from './port.ts';

/** Applies events (in sequence order) on top of a snapshot; null stays null when there are none. */
export function reduceEvents<S>(reducer: Reducer<S>, base: Snapshot<S> | null, events: readonly StoredEvent[]): Snapshot<S> | null {
  let snap = base;
  for (const event of events) {
    snap = {
      id: event.aggregateId,
      state: reducer(snap?.state, event),
      sequence: event.sequence,
      resourceOwner: event.resourceOwner,
      creationDate: snap?.creationDate ?? event.createdAt,
      changeDate: event.createdAt,
    };
  }
  return snap;
}

/**
 * Freezes a value and everything it holds (Dates and byte arrays excepted,
 * which cannot be frozen), so one committed snapshot can be handed to every
 * reader without copying.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (value instanceof Date || value instanceof Uint8Array) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
