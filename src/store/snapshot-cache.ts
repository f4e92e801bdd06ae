// The SQLite store's snapshots in memory: at most `capacity`, the least recently used
// dropped first (a Map iterates in insertion order; a hit moves its entry to the end).
import type { Snapshot } from './port.ts';

export class SnapshotCache {
  private readonly entries = new Map<string, Snapshot<unknown>>();
  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Snapshot<unknown> | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  /** Keeps the newer of the cached snapshot and this one (a late read never undoes an append); returns it. */
  offer(key: string, snapshot: Snapshot<unknown>): Snapshot<unknown> {
    const cached = this.get(key);
    if (cached && cached.sequence >= snapshot.sequence) return cached;
    this.entries.delete(key);
    this.entries.set(key, snapshot);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return snapshot;
  }
}
