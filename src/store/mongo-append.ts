// The MongoDB store's append (src/store/mongo.ts, the protocol in port.ts): the claims of its
// unique values, then the event (the unique (aggregate, sequence) index turns a stale base into
// a ConcurrencyError), then the state document; an event written though its answer was lost
// stands, and a state write that failed is repaired in the background.
import type { ObjectId } from 'mongodb';
import type { MongoClaims } from './mongo-claims.ts';
import { duplicateOfId, isDuplicate, type MongoConnection } from './mongo-connection.ts';
import type { EventDoc } from './mongo-docs.ts';
import type { MongoStates } from './mongo-states.ts';
import {
  ConcurrencyError,
  type AppendOptions,
  type EventStore,
  type NewEvent,
  type Reducers,
  type Snapshot,
  type StoredEvent,
} from './port.ts';
import { reduceEvents } from './reduce.ts';

export function createMongoAppend(
  conn: MongoConnection,
  states: MongoStates,
  claims: MongoClaims,
  reducers: Reducers,
): EventStore['append'] {
  /**
   * Whether an event whose insert failed without a definite answer is stored after all: asked
   * once, waiting for the answer as long as the insert would (a bound here would answer
   * UNAVAILABLE for an event that was written). Undefined when the lookup failed too.
   */
  async function wasWritten(id: ObjectId): Promise<boolean | undefined> {
    try {
      return (await conn.events.findOne({ _id: id }, { projection: { _id: 1 } })) !== null;
    } catch {
      return undefined;
    }
  }

  /** The state the event follows: the caller's base as given (nothing read), or the stored one caught up. */
  async function expectedBase<S>(event: NewEvent, opts: AppendOptions<S> | undefined): Promise<Snapshot<S> | null> {
    const { aggregateType, aggregateId, sequence } = event;
    if (opts?.base !== undefined) {
      // The caller's snapshot is the expected state: nothing is read. A stale one
      // makes the insert below a duplicate (ConcurrencyError), never a lost update.
      const current = opts.base;
      if (current && current.id !== aggregateId) throw new Error(`append: the base is ${current.id}, the event is for ${aggregateId}`);
      if (sequence !== (current?.sequence ?? 0) + 1)
        throw new Error(`append: sequence ${sequence} does not follow the base's ${current?.sequence ?? 0}`);
      return current;
    }
    const current = await states.catchUpFrom<S>(aggregateType, aggregateId, await states.loadOne<S>(aggregateType, aggregateId));
    const expected = (current?.sequence ?? 0) + 1;
    if (sequence < expected) throw new ConcurrencyError(aggregateType, aggregateId, sequence);
    if (sequence > expected) throw new Error(`sequence gap: ${aggregateType} ${aggregateId} expects ${expected}, got ${sequence}`);
    return current;
  }

  /** The claims, then the event; on failure the claims taken are released and the error thrown. */
  async function insertEvent(stored: StoredEvent, event: NewEvent, current: Snapshot<unknown> | null): Promise<void> {
    const { aggregateType, aggregateId, sequence } = event;
    const results = await Promise.allSettled(stored.claims.map((key) => claims.claim(key, event)));
    const taken = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    // The driver gives the document its _id before sending it: what tells, after a timeout or
    // a dropped connection, whether the server wrote it after all.
    const doc: EventDoc = { ...stored };
    try {
      if (failures.length > 0) throw failures.find((f) => f instanceof ConcurrencyError) ?? failures[0];
      await conn.events.insertOne(doc);
    } catch (e) {
      // A lost answer (timeout, dropped connection), or a duplicate key from the driver's
      // retry of a write the server had made: this very document may be stored.
      const mayBeOurs =
        failures.length === 0 && doc._id !== undefined && (isDuplicate(e) ? duplicateOfId(e) : !(e instanceof ConcurrencyError));
      const written = mayBeOurs ? await wasWritten(doc._id!) : false;
      if (written !== true) {
        // Not known (the server gone again): if it was written, its state document is caught up later.
        if (written === undefined) states.repairLater(aggregateType, aggregateId, current);
        // The claims' release keeps any claim its event did get (isConfirmed).
        await claims.release(taken);
        throw isDuplicate(e) ? new ConcurrencyError(aggregateType, aggregateId, sequence) : e;
      }
      // Written though its answer was lost: the append stands (UNAVAILABLE would be a lie).
    }
  }

  return <S>(event: NewEvent, opts?: AppendOptions<S>) =>
    conn.run(async () => {
      const { aggregateType, aggregateId, sequence } = event;
      const current = await expectedBase<S>(event, opts);
      const stored: StoredEvent = {
        aggregateType,
        aggregateId,
        sequence,
        type: event.type,
        payload: event.payload,
        creator: event.creator,
        resourceOwner: event.resourceOwner,
        createdAt: new Date(),
        claims: [...new Set(opts?.claims ?? [])],
      };
      await insertEvent(stored, event, current);

      const snapshot = reduceEvents<S>(reducers[aggregateType], current, [stored])!;
      // The event is committed: the answer stands even if the state write fails.
      await states.saveState(aggregateType, snapshot).catch((e: unknown) => {
        states.warnNotSaved(aggregateType, aggregateId, e);
        states.repairLater(aggregateType, aggregateId, current);
        return false;
      });
      return { event: stored, snapshot };
    });
}
