// The verification-code store port (DESIGN.md section 4). It holds only the
// code's HMAC, never the clear code.

export type CodeChannel = 'email' | 'phone';

export interface PendingCode {
  /** HMAC-SHA256 of the code with the server key, hex. */
  hash: string;
  /** The address (email or E.164 phone) the code was issued for. */
  address: string;
}

export type CheckResult =
  | { status: 'ok'; address: string }
  | { status: 'wrong'; attemptsLeft: number }
  | { status: 'missing' } // none pending, expired, or voided by too many attempts
  ;

export interface CodeStore {
  /** Store a pending code, replacing (voiding) any earlier one for this user and channel. */
  put(userId: string, channel: CodeChannel, code: PendingCode, ttlSeconds: number): Promise<void>;
  /**
   * Atomically compare `hash` with the pending code: a match consumes it
   * (single use); a mismatch counts an attempt and voids the code at maxAttempts.
   */
  check(userId: string, channel: CodeChannel, hash: string, maxAttempts: number): Promise<CheckResult>;
  /** Remove any pending code (e.g. the address was verified another way). */
  clear(userId: string, channel: CodeChannel): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
