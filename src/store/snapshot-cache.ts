// The SQLite store's snapshots in memory: at most `maxEntries` of them and at most
// `maxBytes` of their weight (the length of the state's JSON, which the store has at hand
// whenever it offers one), the least recently used dropped first (a Map iterates in
// insertion order; a hit moves its entry to the end). The byte bound is what keeps memory
// bounded when users are large: one user may carry 20 metadata values of 500,000
// characters, and 20,000 of those would not fit in any heap. A snapshot heavier than the
// whole budget is served but not kept.
import type { Snapshot } from './port.ts';

export interface CacheLimits {
  maxEntries: number;
  maxBytes: number;
}

interface Entry {
  snapshot: Snapshot<unknown>;
  weight: number;
}

export class SnapshotCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private weights = 0;

  constructor(limits: CacheLimits) {
    this.maxEntries = Math.max(1, limits.maxEntries);
    this.maxBytes = Math.max(0, limits.maxBytes);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The weight of the snapshots held. */
  get bytes(): number {
    return this.weights;
  }

  get(key: string): Snapshot<unknown> | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.snapshot;
  }

  /**
   * Keeps the newer of the cached snapshot and this one (a late read never undoes an append);
   * returns it. `weight`: the length of the snapshot's state as JSON.
   */
  offer(key: string, snapshot: Snapshot<unknown>, weight: number): Snapshot<unknown> {
    const cached = this.get(key);
    if (cached && cached.sequence >= snapshot.sequence) return cached;
    this.drop(key);
    if (weight > this.maxBytes) return snapshot;
    this.entries.set(key, { snapshot, weight });
    this.weights += weight;
    while (this.entries.size > this.maxEntries || this.weights > this.maxBytes) this.drop(this.entries.keys().next().value!);
    return snapshot;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weights -= entry.weight;
  }
}
