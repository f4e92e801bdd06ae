// The documents the MongoDB store keeps (src/store/mongo.ts): events, one state document per
// aggregate, and the claims of unique values (constraints).
import type { ObjectId } from 'mongodb';
import type { AggregateType, StoredEvent } from './port.ts';

export type EventDoc = StoredEvent & { _id?: ObjectId };

export interface StateDoc {
  _id: string;
  state: unknown;
  sequence: number;
  resourceOwner: string;
  creationDate: Date;
  changeDate: Date;
}

/** A claim; confirmed when the event (aggregateType, aggregateId, sequence) lists the key. */
export interface ConstraintDoc {
  _id: string;
  aggregateType: AggregateType;
  aggregateId: string;
  sequence: number;
  claimedAt: Date;
  /** Tells apart two claims of one aggregate at one sequence, for conditional release and takeover. */
  token?: string;
}
