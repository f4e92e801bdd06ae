// Delivery jobs for codes to send. Mutations hand a job over and never wait
// for the send (docs/configuration.md, Verification mail and SMS).

export type DeliveryKind = 'verify-email-on-create' | 'verify-email-on-change' | 'verify-phone';

export interface DeliveryJob {
  kind: DeliveryKind;
  userId: string;
  orgId: string;
  /** Email address or E.164 phone number. */
  to: string;
  /** The clear code: in memory only, from the mutation to the queue's seal and from the worker's open to the send. */
  code: string;
  /** Email only: link template with {{.UserID}}, {{.Code}}, {{.OrgID}}. */
  urlTemplate?: string;
}

/** A job as queued: the code sealed to the job's other fields (src/notify/seal.ts), never in clear. */
export type SealedDeliveryJob = Omit<DeliveryJob, 'code'> & { sealedCode: string };

export interface EnqueueOptions {
  /**
   * By default a job that cannot be queued (Redis unreachable) is logged and
   * dropped: the mutation's change is already written and the user can ask for
   * a new code. With `strict` the failure is thrown (resendEmailCode, whose
   * whole point is the send).
   */
  strict?: boolean;
}

export interface Notifier {
  enqueue(job: DeliveryJob, options?: EnqueueOptions): Promise<void>;
  /** True when jobs of this channel can be delivered (no SMS provider: no SMS, and phone changes still succeed). */
  canDeliver(channel: 'email' | 'sms'): boolean;
  close(): Promise<void>;
}

/** A sliding-window rate limiter (rate-limit.ts: Redis or memory), for the resend and request limits. */
export interface RateDecision {
  allowed: boolean;
  /** Hits left in the window after this one (0 when refused). */
  remaining: number;
  /** When refused: ms until the oldest hit leaves the window. */
  retryAfterMs: number;
}

export interface RateLimiter {
  /** Counts a hit for key unless the window is full. */
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}
