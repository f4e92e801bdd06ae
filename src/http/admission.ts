// Whether the edge lets a request's body in, decided before a byte of it is read: the bearer
// token is checked (authentication.ts), the per-caller / per-address rate limit applied
// (rate-limit.ts; a stream that carries several requests counts the others through
// RequestState.countAnother), a body too big for the caller refused (401 without a valid token
// over UNAUTHENTICATED_BODY_BYTES, body-limit.ts), and the body's bytes reserved in the client's
// and the process's budget (body-budget.ts; 429 / 503 when full). A body of unknown length
// (chunked; HTTP/2 without Content-Length, as every gRPC call) is metered instead: its readers
// pass each chunk through RequestState.meter, which reserves as bytes arrive and cuts the body
// when a budget is full.
import type { IncomingMessage } from 'node:http';
import type { TokenVerifier } from '../auth/tokens.ts';
import { AppError } from '../errors.ts';
import { authenticate } from './authentication.ts';
import type { BodyBudget, BudgetFull } from './body-budget.ts';
import { bodyNeedsToken, bodyTooLarge, UNAUTHENTICATED_BODY_BYTES } from './body-limit.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { Refusal } from './rate-limit.ts';
import type { RequestState } from './request-state.ts';

export interface AdmissionOptions {
  metrics: GatewayMetrics;
  tokens: TokenVerifier;
  /** The body cap for a caller with a valid token (body-limit.ts). */
  maxBodyBytes: number;
  budget: BodyBudget;
  /** The per-caller / per-address request limit (rate-limit.ts). */
  rateLimit?: (state: RequestState) => Promise<Refusal | null>;
}

/** Let in: `release` gives the body's reservation back. */
export interface Admitted {
  release: () => void;
}

/** Kept out: the refusal, and the body's declared size (a large one is not read: the connection closes after the answer). */
export interface Refused {
  refusal: Refusal;
  declaredBytes: number;
}

export type Admission = (req: IncomingMessage, state: RequestState) => Promise<Admitted | Refused>;

/**
 * The body's size as the headers give it: Content-Length; Infinity when unknown (chunked
 * HTTP/1.1, or HTTP/2 without Content-Length, as every gRPC call); 0 without a body.
 */
function declaredBodyBytes(req: IncomingMessage): number {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length); // node's parsers accept only digits here
  const stream = (req as unknown as { stream?: { endAfterHeaders?: boolean } }).stream;
  if (stream) return stream.endAfterHeaders ? 0 : Infinity;
  return req.headers['transfer-encoding'] ? Infinity : 0;
}

export function createAdmission(options: AdmissionOptions): Admission {
  const { metrics, tokens, maxBodyBytes, budget, rateLimit } = options;

  const budgetFull = (full: BudgetFull): Refusal => {
    const retryInfo = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }];
    metrics.bodyRefused(full === 'client' ? 'client_budget' : 'process_budget');
    // Reservations last one request; a second is a fair guess at when one has ended.
    const headers = { 'retry-after': '1' };
    return full === 'client'
      ? {
          error: new AppError(
            'RESOURCE_EXHAUSTED',
            'Too many request-body bytes in flight from this client address; retry after 1 s.',
            retryInfo,
          ),
          headers,
        }
      : { error: new AppError('UNAVAILABLE', 'The gateway is receiving too many request bodies; retry after 1 s.', retryInfo), headers };
  };

  /**
   * For a body of unknown length: each chunk reserved in the budgets as it arrives, and the
   * body cut at the caller's cap (the small one without a valid token).
   */
  function bodyMeter(state: RequestState, cap: number): Admitted & { meter: (bytes: number) => AppError | null } {
    const releases: (() => void)[] = [];
    let seen = 0;
    let refused: AppError | null = null;
    return {
      release: () => releases.forEach((r) => r()),
      meter(bytes) {
        if (refused) return refused;
        const reserved = Math.min(seen, cap);
        seen += bytes;
        if (seen > cap) {
          metrics.bodyRefused(state.caller ? 'too_large' : 'unauthenticated');
          return (refused = state.caller ? bodyTooLarge(cap) : bodyNeedsToken(state));
        }
        const more = Math.min(seen, cap) - reserved;
        if (more <= 0) return null;
        const release = budget.reserve(state.ip, more);
        if (typeof release === 'function') releases.push(release);
        else refused = budgetFull(release).error;
        return refused;
      },
    };
  }

  /** The token, the rate limit, then the body's size against the caller's cap and the budgets, all before the body is read. */
  return async (req, state) => {
    await authenticate(state, req.headers.authorization ?? null, tokens);
    const declaredBytes = declaredBodyBytes(req);
    if (req.method !== 'OPTIONS' && rateLimit) {
      const limited = await rateLimit(state);
      if (limited) return { refusal: limited, declaredBytes };
      state.countAnother = async () => (await rateLimit(state))?.error ?? null;
    }
    const cap = state.caller ? maxBodyBytes : UNAUTHENTICATED_BODY_BYTES;
    if (declaredBytes === Infinity) {
      const metered = bodyMeter(state, cap);
      state.meter = metered.meter;
      return { release: metered.release };
    }
    if (declaredBytes > cap) {
      metrics.bodyRefused(state.caller ? 'too_large' : 'unauthenticated');
      return { refusal: { error: state.caller ? bodyTooLarge(cap) : bodyNeedsToken(state), headers: {} }, declaredBytes };
    }
    const release = budget.reserve(state.ip, Math.min(declaredBytes, cap));
    return typeof release === 'function' ? { release } : { refusal: budgetFull(release), declaredBytes };
  };
}
