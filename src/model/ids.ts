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
}

/**
 * Without nodeId, a random one per process: processes collide only when they draw the
 * same node id and generate in the same millisecond; pass distinct ids to rule that out.
 */
export function createIdGenerator(opts: { nodeId?: number; now?: () => number } = {}): IdGenerator {
  const nodeId = opts.nodeId ?? randomInt(MAX_NODE + 1);
  if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > MAX_NODE) throw new RangeError('nodeId must be an integer in 0..1023');
  const clock = opts.now ?? Date.now;
  const now = () => clock() - EPOCH_MS;
  let last = -1;
  let seq = 0;
  return {
    nodeId,
    next() {
      // Never below the last timestamp, so ids stay ordered when the clock steps back.
      let ts = Math.max(now(), last);
      if (ts === last) {
        seq++;
        if (seq > MAX_SEQ) {
          seq = 0;
          ts = last + 1;
          // Wait for the clock when it is current; when it is behind (stepped back) borrow the next ms.
          for (let c = now(); c < ts && c >= last; c = now()) {
            /* spin */
          }
        }
      } else {
        seq = 0;
      }
      if (ts > MAX_TS) throw new RangeError('id timestamp overflow');
      last = ts;
      return ((BigInt(ts) << (NODE_BITS + SEQ_BITS)) | (BigInt(nodeId) << SEQ_BITS) | BigInt(seq)).toString();
    },
  };
}

/** The creation time encoded in a generated id. */
export function idTimestamp(id: string): Date {
  return new Date(Number(BigInt(id) >> (NODE_BITS + SEQ_BITS)) + EPOCH_MS);
}
