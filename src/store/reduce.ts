// Helpers shared by the store adapters: folding events into a snapshot and
// copying state so callers never share mutable objects with a store.
import type { Reducer, Snapshot, StoredEvent } from './port.ts';

/** Applies events (in sequence order) on top of a snapshot; null stays null when there are none. */
export function reduceEvents<S>(
  reducer: Reducer<S>,
  base: Snapshot<S> | null,
  events: readonly StoredEvent[],
): Snapshot<S> | null {
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

/** A deep copy that keeps Dates, Buffers, Maps and Sets (structuredClone turns Buffers into Uint8Arrays). */
export function deepCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Buffer.isBuffer(value)) return Buffer.from(value) as T;
  if (value instanceof Uint8Array) return new Uint8Array(value) as T;
  if (Array.isArray(value)) return value.map(deepCopy) as T;
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, deepCopy(v)])) as T;
  if (value instanceof Set) return new Set([...value].map(deepCopy)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = deepCopy(v);
  return out as T;
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
