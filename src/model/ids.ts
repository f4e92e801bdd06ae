import { randomInt } from 'node:crypto';

// Snowflake-like ids: 41 bits of ms since EPOCH_MS, 10 bits node id, 12 bits sequence.
export const EPOCH_MS = Date.UTC(2024, 0, 1);
const NODE_BITS = 10n;
const SEQ_BITS = 12n;
const MAX_NODE = 1023;
const MAX_SEQ = 4095;
const MAX_TS = 2 ** 41 - 1;

export interface IdGenerator {
  next(): string;
  readonly nodeId: number;
  /** The timestamp (ms since 1970) of the last id issued, or `after` when none was. */
  lastTimestamp(): number;
}

/** next() would need a timestamp above the generator's `limit`: nothing was issued. */
export class IdLimitError extends RangeError {
  override name = 'IdLimitError';
}

export interface IdGeneratorOptions {
  nodeId?: number;
  now?: () => number;
  /** Every id's timestamp is above this one (ms since 1970): the last one another holder of this node id may have used. */
  after?: number;
  /** No id gets a timestamp above limit() (ms since 1970); next() throws IdLimitError instead. */
  limit?: () => number;
}

/**
 * Without nodeId, a random one per process: processes collide only when they draw the
 * same node id and generate in the same millisecond; pass distinct ids to rule that out
 * (src/node-ids.ts leases them).
 */
export function createIdGenerator(opts: IdGeneratorOptions = {}): IdGenerator {
  const nodeId = opts.nodeId ?? randomInt(MAX_NODE + 1);
  if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > MAX_NODE) throw new RangeError('nodeId must be an integer in 0..1023');
  const clock = opts.now ?? Date.now;
  const now = () => clock() - EPOCH_MS;
  // With `after`, as if an id had been issued at that millisecond with the last sequence number.
  let last = opts.after === undefined ? -1 : Math.max(-1, Math.floor(opts.after) - EPOCH_MS);
  let seq = opts.after === undefined ? 0 : MAX_SEQ;
  return {
    nodeId,
    lastTimestamp: () => last + EPOCH_MS,
    next() {
      // Never below the last timestamp, so ids stay ordered when the clock steps back.
      let ts = Math.max(now(), last);
      let s = 0;
      let borrowed = false;
      if (ts === last) {
        s = seq + 1;
        if (s > MAX_SEQ) {
          s = 0;
          ts = last + 1;
          borrowed = true;
        }
      }
      if (ts > MAX_TS) throw new RangeError('id timestamp overflow');
      if (opts.limit && ts + EPOCH_MS > opts.limit()) throw new IdLimitError('id timestamp above the limit of this node id');
      // Wait for the clock when it is current; when it is behind (stepped back) borrow the next ms.
      if (borrowed)
        for (let c = now(); c < ts && c >= last; c = now()) {
          /* spin */
        }
      last = ts;
      seq = s;
      return ((BigInt(ts) << (NODE_BITS + SEQ_BITS)) | (BigInt(nodeId) << SEQ_BITS) | BigInt(seq)).toString();
    },
  };
}

/** The creation time encoded in a generated id. */
export function idTimestamp(id: string): Date {
  return new Date(Number(BigInt(id) >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS);
}
