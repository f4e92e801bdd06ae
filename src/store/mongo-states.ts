// The MongoDB store's state documents (src/store/mongo.ts): one per aggregate, its events
// folded, written conditionally on sequence after each event; caught up from the events
// when behind (after a conflict, or a write lost to a crash or a failed update); and a
// failed write repaired in the background while the process lives.
import type { Logger } from '../log.ts';
import type { EventDoc, StateDoc } from './mongo-docs.ts';
import { isDuplicate, type MongoConnection } from './mongo-connection.ts';
import { SEARCH_FIELD } from './mongo-user-search.ts';
import type { AggregateType, Reducers, Snapshot, StoredEvent, UserProjection } from './port.ts';
import { reduceEvents } from './reduce.ts';

export type SaveState<S = unknown> = (type: AggregateType, snap: Snapshot<S>) => Promise<boolean>;

export interface MongoStates {
  /**
   * Conditional on sequence: an older writer never overwrites a newer document.
   * True when this call wrote it; false when one at this sequence or newer was there.
   */
  saveState: SaveState;
  /**
   * Folds the events after `known` into it (known null: from the first event) and
   * writes the state document back when there were any (with `save`; by default failures
   * are only warned about: the events are the truth, the next catch-up retries).
   */
  catchUpFrom<S>(type: AggregateType, id: string, known: Snapshot<S> | null, save?: SaveState<S>): Promise<Snapshot<S> | null>;
  /** The state document as stored: one findOne, no look at the events (see port.ts). */
  loadOne<S>(type: AggregateType, id: string, signal?: AbortSignal): Promise<Snapshot<S> | null>;
  /** Catches the document up from `base` in the background, a few times with backoff, until it is. */
  repairLater(type: AggregateType, id: string, base: Snapshot<unknown> | null): void;
  /** Drops the repairs not yet run (close). */
  cancelRepairs(): void;
  /** Logs a state write that failed: the events are the truth, the document catches up later. */
  warnNotSaved(type: AggregateType, id: string, e: unknown): void;
}

export function toEvent(doc: EventDoc): StoredEvent {
  const { _id, ...event } = doc;
  return { ...event, claims: event.claims ?? [] };
}

export function toSnapshot<S>(doc: StateDoc): Snapshot<S> {
  const { _id, state, sequence, resourceOwner, creationDate, changeDate } = doc;
  return { id: _id, state: state as S, sequence, resourceOwner, creationDate, changeDate };
}

export function createMongoStates(
  conn: MongoConnection,
  reducers: Reducers,
  userFields: UserProjection | undefined,
  logger: Logger,
): MongoStates {
  const warnNotSaved = (aggregateType: AggregateType, aggregateId: string, e: unknown) =>
    logger.log('warn', 'mongo store: state document not updated (caught up on its next write)', {
      aggregateType,
      aggregateId,
      error: (e as Error).message,
    });

  // A user's searchable fields go with its state, in the same update: no extra round trip.
  const withSearch = (type: AggregateType, fields: Omit<Snapshot<unknown>, 'id'>) =>
    type === 'user' && userFields ? { ...fields, [SEARCH_FIELD]: userFields(fields.state) } : fields;

  async function saveState(type: AggregateType, snap: Snapshot<unknown>): Promise<boolean> {
    const { id, ...fields } = snap;
    // A duplicate key means a document with a sequence >= ours exists, or a racing
    // upsert inserted first; the second attempt settles which.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const result = await conn
          .states(type)
          .updateOne({ _id: id, sequence: { $lt: snap.sequence } }, { $set: withSearch(type, fields) }, { upsert: true });
        return result.modifiedCount + result.upsertedCount > 0;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
      }
    }
    return false;
  }

  const saveOrWarn = (type: AggregateType, snap: Snapshot<unknown>) =>
    saveState(type, snap).catch((e: unknown) => {
      warnNotSaved(type, snap.id, e);
      return false;
    });

  // One find on the hot path's miss only: after a ConcurrencyError, or for an append given no base.
  async function catchUpFrom<S>(
    type: AggregateType,
    id: string,
    known: Snapshot<S> | null,
    save: SaveState<S> = saveOrWarn,
  ): Promise<Snapshot<S> | null> {
    const behind = await conn.events
      .find({ aggregateType: type, aggregateId: id, sequence: { $gt: known?.sequence ?? 0 } })
      .sort({ sequence: 1 })
      .toArray();
    if (behind.length === 0) return known;
    const snap = reduceEvents<S>(reducers[type], known, behind.map(toEvent));
    if (snap) await save(type, snap);
    return snap;
  }

  async function loadOne<S>(type: AggregateType, id: string, signal?: AbortSignal): Promise<Snapshot<S> | null> {
    const doc = await conn.states(type).findOne({ _id: id }, { signal });
    return doc ? toSnapshot<S>(doc) : null;
  }

  // A state write that failed after its event was committed (the process lives on):
  // repaired in the background, so reads do not serve the old state until the next
  // write. A crash in between is repaired by that next write (see port.ts).
  const repairs = new Set<NodeJS.Timeout>();
  function repairLater(type: AggregateType, id: string, base: Snapshot<unknown> | null, attempt = 1): void {
    if (conn.closed || attempt > 5) return;
    const timer = setTimeout(
      () => {
        repairs.delete(timer);
        conn
          .run(async () => {
            const doc = await loadOne(type, id);
            // Settled when the document has caught up (by us or by a later write).
            const from = doc && doc.sequence > (base?.sequence ?? 0) ? doc : base;
            const caught = await catchUpFrom(type, id, from);
            const saved = await loadOne(type, id);
            if ((saved?.sequence ?? 0) < (caught?.sequence ?? 0)) throw new Error('state document still behind');
          })
          .catch(() => repairLater(type, id, base, attempt + 1));
      },
      250 * 2 ** attempt,
    );
    timer.unref();
    repairs.add(timer);
  }

  return {
    saveState,
    catchUpFrom,
    loadOne,
    repairLater: (type, id, base) => repairLater(type, id, base),
    cancelRepairs() {
      for (const timer of repairs) clearTimeout(timer);
      repairs.clear();
    },
    warnNotSaved,
  };
}
