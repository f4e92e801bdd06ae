// EventStore for the quick start: an append-only JSON-lines log replayed into
// memory at start. One line per event, its claims inside it, so an event and
// its claims are on disk together or not at all. Appends resolve after fsync;
// appends arriving while a sync is in flight share the next one (group commit).
import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import { FILE_MODE, makeDataDir } from '../data-dir.ts';
import { join } from 'node:path';
import {
  ConcurrencyError,
  ConstraintError,
  type AggregateType,
  type AppendOptions,
  type EventStore,
  type NewEvent,
  type Reducers,
  type Snapshot,
  type StoredEvent,
  type UserProjection,
} from './port.ts';
import { createMemoryUserSearch } from './memory-user-search.ts';
import { snapshotWeight } from './weight.ts';
import { ReadLimitError, UnavailableError } from '../errors.ts';
import { keyOf, PendingAppends } from './pending-appends.ts';
import { deepFreeze, reduceEvents } from './reduce.ts';

export interface EmbeddedStoreOptions {
  dataDir: string;
  reducers: Reducers;
  /** Accepted for symmetry with the MongoDB store; claims here cannot be left behind. */
  claimGraceMs?: number;
  /** What user searches look at (src/model/users.ts userSearchFields); without it searchUsers and countUsers throw. */
  userFields?: UserProjection;
}

export interface EmbeddedStore extends EventStore {
  /** How many appends and disk syncs happened since start (group commit makes syncs < appends). */
  readonly stats: { appends: number; syncs: number };
}

export const LOG_FILE = 'events.log';

type Holder = { aggregateType: AggregateType; aggregateId: string };

const aggregateTypes = new Set<string>(['instance', 'org', 'user', 'idp', 'project']);

// Dates and binaries inside payloads are tagged so they come back as Date and Buffer.
// Tagging and untagging walk the value themselves (returning it as it is when there is
// nothing to tag) so that JSON.stringify and JSON.parse run without a replacer or
// reviver function, which would take them off their fast paths.
export function mapDeep(value: unknown, leaf: (v: object) => unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const mapped = leaf(value);
  if (mapped !== value) return mapped;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const m = mapDeep(v, leaf);
      if (m !== v) (out ??= [...value])[i] = m;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    const m = mapDeep(v, leaf);
    if (m !== v) (out ??= { ...(value as Record<string, unknown>) })[key] = m;
  }
  return out ?? value;
}

export const tag = (v: object): unknown =>
  v instanceof Date ? { $date: v.toISOString() } : v instanceof Uint8Array ? { $binary: Buffer.from(v).toString('base64') } : v;

export function untag(v: object): unknown {
  const tagged = v as { $date?: unknown; $binary?: unknown };
  if (typeof tagged.$date === 'string' && Object.keys(v).length === 1) return new Date(tagged.$date);
  if (typeof tagged.$binary === 'string' && Object.keys(v).length === 1) return Buffer.from(tagged.$binary, 'base64');
  return v;
}

function encode(event: StoredEvent): string {
  return JSON.stringify({ ...event, payload: mapDeep(event.payload, tag), createdAt: event.createdAt.toISOString() }) + '\n';
}

export function decode(line: string): StoredEvent {
  const raw = JSON.parse(line) as Omit<StoredEvent, 'createdAt'> & { createdAt: string };
  raw.payload = mapDeep(raw.payload, untag) as StoredEvent['payload'];
  const createdAt = new Date(raw.createdAt);
  if (
    !aggregateTypes.has(raw.aggregateType) ||
    typeof raw.aggregateId !== 'string' ||
    !Number.isInteger(raw.sequence) ||
    Number.isNaN(createdAt.getTime())
  ) {
    throw new Error('not an event');
  }
  return { ...raw, createdAt, claims: raw.claims ?? [] };
}

export async function createEmbeddedStore(options: EmbeddedStoreOptions): Promise<EmbeddedStore> {
  const { dataDir, reducers } = options;
  const path = join(dataDir, LOG_FILE);
  // Only the reduced snapshots stay in memory; the events are on disk (events() reads them back).
  const snapshots = new Map<string, Snapshot<unknown>>();
  const constraints = new Map<string, Holder>();
  // Accepted but not yet on disk: consulted by the checks, invisible to load and
  // loadMany; catchUp waits for it (see there).
  const pending = new PendingAppends<string>();
  let flushing: Promise<void> | undefined;
  let broken: unknown;
  let closed = false;
  const stats = { appends: 0, syncs: 0 };

  // Committed events and snapshots are frozen: readers share them, nobody copies.
  function commit(event: StoredEvent, snapshot: Snapshot<unknown>): void {
    deepFreeze(event);
    deepFreeze(snapshot);
    const key = keyOf(event.aggregateType, event.aggregateId);
    snapshots.set(key, snapshot);
    for (const claim of event.claims) constraints.set(claim, { aggregateType: event.aggregateType, aggregateId: event.aggregateId });
  }

  // Replay. Text after the last newline is a write torn by a crash: drop it.
  await makeDataDir(dataDir);
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    content = Buffer.alloc(0);
  }
  let size = content.lastIndexOf(0x0a) + 1;
  if (size < content.length) {
    console.warn(`embedded store: dropping a torn last line (${content.length - size} bytes) in ${path}`);
    await truncate(path, size);
  }
  const lines = content.subarray(0, size).toString('utf8').split('\n');
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      const event = decode(line);
      const current = snapshots.get(keyOf(event.aggregateType, event.aggregateId)) ?? null;
      if (event.sequence !== (current?.sequence ?? 0) + 1) throw new Error(`sequence ${event.sequence} out of order`);
      commit(event, reduceEvents(reducers[event.aggregateType], current, [event])!);
    } catch (e) {
      throw new Error(`embedded store: ${path} line ${index + 1} is corrupt: ${(e as Error).message}`, { cause: e });
    }
  });

  const file: FileHandle = await open(path, 'a', FILE_MODE);
  if (content.length === 0) {
    // Make a new file's directory entry durable too (not possible on every platform).
    await open(dataDir, 'r')
      .then(async (dir) => {
        await dir.sync().finally(() => dir.close());
      })
      .catch(() => {});
  }

  async function flush(): Promise<void> {
    await null; // appends made in the same tick join the first batch
    while (pending.queued > 0) {
      const batch = pending.take();
      const data = Buffer.from(batch.map((item) => item.write).join(''));
      try {
        await file.appendFile(data);
        await file.datasync();
        stats.syncs++;
        size += data.length;
      } catch (e) {
        // Unknown what reached the disk: cut it off and refuse further writes.
        broken = e;
        await file.truncate(size).catch(() => {});
        for (const item of [...batch, ...pending.take()]) {
          pending.forget(item);
          item.reject(new UnavailableError('store unavailable', { cause: e }));
        }
        break;
      }
      for (const item of batch) {
        commit(item.event, item.snapshot);
        pending.forget(item);
        item.resolve();
      }
    }
    flushing = undefined;
  }

  const snapshotOf = (type: AggregateType, id: string) => snapshots.get(keyOf(type, id));
  const userSearch = createMemoryUserSearch(function* () {
    for (const [key, snapshot] of snapshots) if (key.startsWith('user\u0000')) yield snapshot;
  }, options.userFields);

  const store: EmbeddedStore = {
    stats,
    ...userSearch,

    load: async <S>(type: AggregateType, id: string) => {
      const snapshot = snapshotOf(type, id);
      return (snapshot as Snapshot<S> | undefined) ?? null;
    },

    loadMany: async <S>(type: AggregateType, ids: readonly string[], maxBytes?: number) => {
      const result = new Map<string, Snapshot<S>>();
      let weight = 0;
      for (const id of new Set(ids)) {
        const snapshot = snapshotOf(type, id);
        if (!snapshot) continue;
        if (maxBytes !== undefined && (weight += snapshotWeight(snapshot)) > maxBytes) throw new ReadLimitError(maxBytes, result.size);
        result.set(id, snapshot as Snapshot<S>);
      }
      return result;
    },

    // Memory holds every committed event folded in: never behind, nothing to fold.
    // But the append check also sees appends still waiting for their disk sync, so a
    // ConcurrencyError can name a winner not committed yet: catchUp waits for the
    // append pending at the time of the call (on disk or failed), so that a caller
    // retrying after the error sees the winner (as on MongoDB, where the winner's
    // event is readable once it conflicts).
    catchUp: async <S>(type: AggregateType, id: string, known: Snapshot<S> | null) => {
      await pending.settled(keyOf(type, id));
      const snapshot = (snapshotOf(type, id) as Snapshot<S> | undefined) ?? null;
      return snapshot && snapshot.sequence >= (known?.sequence ?? 0) ? snapshot : known;
    },

    // Everything up to the promise runs synchronously: checks and reservation are atomic.
    // The tip (committed or accepted) is the expected state, so a base given by the
    // caller is only checked: a stale one is a ConcurrencyError, as on MongoDB.
    append: async <S>(event: NewEvent, opts?: AppendOptions<S>) => {
      if (closed) throw new Error('embedded store is closed');
      if (broken) throw new UnavailableError('store unavailable', { cause: broken });
      const { aggregateType, aggregateId, sequence } = event;
      const key = keyOf(aggregateType, aggregateId);
      const tip = pending.tip(key) ?? snapshotOf(aggregateType, aggregateId) ?? null;
      const expected = (tip?.sequence ?? 0) + 1;
      if (opts?.base !== undefined && sequence !== (opts.base?.sequence ?? 0) + 1)
        throw new Error(`append: sequence ${sequence} does not follow the base's ${opts.base?.sequence ?? 0}`);
      if (sequence < expected) throw new ConcurrencyError(aggregateType, aggregateId, sequence);
      if (sequence > expected) throw new Error(`sequence gap: ${aggregateType} ${aggregateId} expects ${expected}, got ${sequence}`);

      const claims = [...new Set(opts?.claims ?? [])];
      for (const claim of claims) {
        const holder = pending.claimedBy(claim) ?? constraints.get(claim);
        if (holder && (holder.aggregateType !== aggregateType || holder.aggregateId !== aggregateId)) {
          throw new ConstraintError(claim);
        }
      }

      const { type, payload, creator, resourceOwner } = event;
      const line = encode({
        aggregateType,
        aggregateId,
        sequence,
        type,
        payload,
        creator,
        resourceOwner,
        createdAt: new Date(),
        claims,
      });
      const stored = decode(line); // exactly what a replay will see
      const snapshot = reduceEvents(reducers[aggregateType], tip, [stored])!;

      stats.appends++;
      const done = pending.add(stored, snapshot, line);
      flushing ??= flush();
      await done;
      return { event: stored, snapshot: snapshot as Snapshot<S> };
    },

    lookup: async (key) => {
      const holder = constraints.get(key);
      return holder ? { ...holder } : null;
    },

    // Rare (tests, audits): read back from the log, which holds every committed event.
    events: async (type, id) => {
      while (flushing) await flushing;
      const text = (await readFile(path)).subarray(0, size).toString('utf8');
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map(decode)
        .filter((e) => e.aggregateType === type && e.aggregateId === id);
    },

    // A history page: the log read back like events() (the embedded store keeps no index on disk).
    eventRange: async (type, id, from, to) => (await store.events(type, id)).filter((e) => e.sequence >= from && e.sequence <= to),

    ping: async () => {
      if (broken) throw new UnavailableError('store unavailable', { cause: broken });
    },

    close: async () => {
      if (closed) return;
      closed = true;
      while (flushing) await flushing;
      await file.close();
    },
  };
  return store;
}
