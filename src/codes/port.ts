// The verification-code store port (docs/architecture.md, Persistence). It holds only the
// code's HMAC, never the clear code.

export type CodeChannel = 'email' | 'phone';

export interface PendingCode {
  /** HMAC-SHA256 of the code with the server key, hex. */
  hash: string;
  /** The address (email or E.164 phone) the code was issued for. */
  address: string;
}

/** A pending code as the store held it: with its attempts so far and the rest of its lifetime. */
export interface StoredCode extends PendingCode {
  attempts: number;
  /** Milliseconds left before it expires. */
  ttlMs: number;
}

/** What a put or a clear replaced, and how to take it back (restore). */
export interface Replaced {
  /** The code pending before (null: none, expired or cleared). */
  previous: StoredCode | null;
  /** Names this put or clear for restore; random, so no other request can undo it. */
  token: string;
}

export type CheckResult = { status: 'ok'; address: string } | { status: 'wrong'; attemptsLeft: number } | { status: 'missing' }; // none pending, expired, or voided by too many attempts

/**
 * Undoing a put or a clear (a mutation issues its code before appending its
 * event, and takes the code back when the append fails):
 *
 * Per user and channel the store keeps a short stack: on top the pending code
 * (or a "cleared" mark), below it the entries it replaced, each with its own
 * attempts and expiry. put and clear push, atomically returning what was on
 * top. restore(token) removes that request's entry, atomically, wherever it
 * is: on top, the entry below becomes the pending code again, with its
 * attempts and remaining lifetime (compare-and-set: only the request whose
 * entry is still on top changes what verifies); below, the pending code stays
 * as it is and the entry is simply gone, so that it can never come back.
 *
 * So the pending code is always the latest put or clear not undone, whatever
 * the order of the steps. Two requests W (wins) and L (loses its append), with
 * P pending before; each pushes, appends, and L undoes after its append fails:
 *   W, L pushed; L undone: L was on top  -> W on top again.             W
 *   L, W pushed; L undone: L was below W -> W stays, L removed.         W
 *   L pushed, L undone, W pushed         -> P back, then W over it.     W
 * Both fail (e.g. the event store is down), pushed A then B: undo A then B
 * -> A removed below B, then B removed: P; undo B then A -> A back, then A
 * removed: P. A plain compare-and-set restore of the previous record would get
 * the first of these wrong (B would put back A, whose append failed).
 * A verify in between only ever sees the top (a code below cannot be used),
 * and a voided code takes the whole stack with it. A match is undoable too
 * (verifyEmail consumes the code before appending its event): it pushes a
 * clear named by the check's token over the code it consumed, so restore(token)
 * makes that code pending again, with its attempts and remaining lifetime,
 * unless a later put or clear has replaced it meanwhile, exactly as above.
 */
/** Entries a store keeps below the pending one: how many requests on one user and channel may be undone at once. */
export const MAX_BELOW = 8;

export interface CodeStore {
  /**
   * Store a pending code, replacing (voiding) any earlier one for this user and channel;
   * atomically returns the one replaced. `token` names it for restore (random when not given;
   * a caller that gives it can undo the put even when its answer was lost).
   */
  put(userId: string, channel: CodeChannel, code: PendingCode, ttlSeconds: number, token?: string): Promise<Replaced>;
  /**
   * Atomically compare `hash` with the pending code: a match consumes it
   * (single use) with a clear named `token` (restore(token) takes the match back;
   * the caller makes the token, so it can do so even when the answer was lost);
   * a mismatch counts an attempt and voids the code at maxAttempts.
   */
  check(userId: string, channel: CodeChannel, hash: string, maxAttempts: number, token?: string): Promise<CheckResult>;
  /** Remove any pending code (e.g. the address was verified another way); atomically returns the one removed. `token` as for put. */
  clear(userId: string, channel: CodeChannel, token?: string): Promise<Replaced>;
  /**
   * Undoes the put or clear named by `token` (see above), atomically. True when
   * that changed the pending code (the entry was still on top); false when a
   * later put or clear is pending (or the code was used, voided or expired):
   * then the pending code is left as it is.
   */
  restore(userId: string, channel: CodeChannel, token: string): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
