// The MongoDB store's claims of unique values (src/store/mongo.ts, the protocol in port.ts):
// one document per key in `constraints`, inserted before the event that needs it and
// confirmed by that event listing the key. An unconfirmed claim of another aggregate blocks
// the key for `graceMs`, then may be taken over; one of the same aggregate is taken at once.
import { randomUUID } from 'node:crypto';
import type { ConstraintDoc } from './mongo-docs.ts';
import { isDuplicate, type MongoConnection } from './mongo-connection.ts';
import { ConcurrencyError, ConstraintError, type NewEvent } from './port.ts';

export interface MongoClaims {
  /** Claims key for event; returns the claim to release on failure, or null when an earlier event of the same aggregate already holds it. */
  claim(key: string, event: NewEvent): Promise<ConstraintDoc | null>;
  /** Best effort: a claim left behind is taken over after the grace period. */
  release(claims: ConstraintDoc[]): Promise<void>;
  /** Whether the claim's event is stored and lists it. */
  isConfirmed(claim: ConstraintDoc, signal?: AbortSignal): Promise<boolean>;
  /** Older than the grace period: taken over unless confirmed. */
  isStale(claim: ConstraintDoc): boolean;
}

/** A claim told by all it holds, for a release or takeover that must not touch another's. */
function sameClaim(claim: ConstraintDoc) {
  const { _id, aggregateType, aggregateId, sequence, claimedAt, token } = claim;
  return { _id, aggregateType, aggregateId, sequence, claimedAt, ...(token ? { token } : {}) };
}

export function createMongoClaims(conn: MongoConnection, graceMs: number): MongoClaims {
  async function isConfirmed(claim: ConstraintDoc, signal?: AbortSignal): Promise<boolean> {
    const { aggregateType, aggregateId, sequence } = claim;
    const event = await conn.events.findOne({ aggregateType, aggregateId, sequence }, { projection: { claims: 1 }, signal });
    return event?.claims?.includes(claim._id) ?? false;
  }

  const isStale = (claim: ConstraintDoc) => Date.now() - claim.claimedAt.getTime() > graceMs;

  async function claim(key: string, event: NewEvent): Promise<ConstraintDoc | null> {
    const { aggregateType, aggregateId, sequence } = event;
    for (;;) {
      const mine: ConstraintDoc = {
        _id: key,
        aggregateType,
        aggregateId,
        sequence,
        claimedAt: new Date(),
        token: randomUUID(),
      };
      try {
        await conn.constraints.insertOne(mine);
        return mine;
      } catch (e) {
        if (!isDuplicate(e)) throw e;
      }
      const holder = await conn.constraints.findOne({ _id: key });
      if (!holder) continue; // released meanwhile
      const confirmed = await isConfirmed(holder);
      if (holder.aggregateType === aggregateType && holder.aggregateId === aggregateId) {
        if (holder.sequence > sequence || (confirmed && holder.sequence === sequence)) {
          throw new ConcurrencyError(aggregateType, aggregateId, sequence);
        }
        if (confirmed) return null;
        // An unconfirmed claim of our own aggregate (a crashed or concurrent attempt): ours now.
      } else if (confirmed || !isStale(holder)) {
        throw new ConstraintError(key);
      }
      const { _id, ...replacement } = mine;
      const taken = await conn.constraints.replaceOne(sameClaim(holder), replacement);
      if (taken.matchedCount === 1) return mine;
    }
  }

  async function release(claims: ConstraintDoc[]): Promise<void> {
    await Promise.allSettled(
      claims.map(async (c) => {
        // A same-aggregate writer at our sequence may have won with this very claim.
        if (!(await isConfirmed(c))) await conn.constraints.deleteOne(sameClaim(c));
      }),
    );
  }

  return { claim, release, isConfirmed, isStale };
}
