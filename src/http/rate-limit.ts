// Per-caller / per-IP request limits, for every path the edge serves (GraphQL and the
// wire API alike), after the token is checked (authentication.ts), so the limit can be
// per verified caller. Requests with a valid token count against their caller; requests
// without one (or with an invalid one) against their client IP. Both are sliding one-minute windows
// in the rate limiter of src/notify/rate-limit.ts: Redis when REDIS_URL is set,
// shared by every gateway, memory otherwise. A full window answers RESOURCE_EXHAUSTED
// with Retry-After (whole seconds), before the body is read, in the path's own error
// shape (HTTP 429 for GraphQL and REST, grpc-status 8 for gRPC).
//
// If the limiter's Redis is unreachable the request is let through (and
// counted in gateway_rate_limiter_unavailable_total): the operations that need
// Redis answer UNAVAILABLE by themselves, the others keep working. After a failure
// the limiter is not asked for BREAK_MS, and then by one request at a time until it
// answers: a stalled Redis (connections up, no answer) costs its command timeout to
// a few requests, not to every one.
import type { HttpConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import type { RateLimiter } from '../notify/port.ts';
import type { Logger } from '../log.ts';
import type { RequestState } from './request-state.ts';

const WINDOW_MS = 60_000;
/** How long the limiter is left alone after it failed. */
export const BREAK_MS = 1000;

export interface RateLimitOptions {
  limiter: RateLimiter;
  limits: Pick<HttpConfig, 'rateLimitPerCaller' | 'rateLimitPerIp'>;
  logger: Logger;
  onLimiterUnavailable?: () => void;
  onLimited?: (scope: 'caller' | 'ip') => void;
}

/** A request the edge answers itself: the error, and headers for the answer (Retry-After). */
export interface Refusal {
  error: AppError;
  headers: Record<string, string>;
}

/** The per-caller / per-address check, run by the edge on every request but preflights, before the body. */
export function createRateLimit(options: RateLimitOptions): (state: RequestState) => Promise<Refusal | null> {
  const { limiter, limits, logger } = options;
  let lastWarned = 0;
  /** While the limiter is failing: when it may be asked again, and whether a request is asking it. */
  let broken: { until: number; probing: boolean } | undefined;
  return async (state) => {
    const [key, limit] = state.caller
      ? [`http:caller:${state.caller}`, limits.rateLimitPerCaller]
      : [`http:ip:${state.ip}`, limits.rateLimitPerIp];
    if (limit <= 0) return null;
    if (broken && (broken.probing || Date.now() < broken.until)) {
      options.onLimiterUnavailable?.();
      return null;
    }
    if (broken) broken.probing = true;
    let decision;
    try {
      decision = await limiter.hit(key, limit, WINDOW_MS);
      broken = undefined;
    } catch (err) {
      broken = { until: Date.now() + BREAK_MS, probing: false };
      options.onLimiterUnavailable?.();
      if (Date.now() - lastWarned > 10_000) {
        lastWarned = Date.now();
        logger.log('warn', 'rate limiter unavailable: requests are not limited', { error: String((err as Error)?.message ?? err) });
      }
      return null;
    }
    if (decision.allowed) return null;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    options.onLimited?.(state.caller ? 'caller' : 'ip');
    const message = `Too many requests: at most ${limit} a minute ${state.caller ? 'per caller' : 'per client address'}; retry after ${seconds} s.`;
    return {
      error: new AppError('RESOURCE_EXHAUSTED', message, [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` },
      ]),
      headers: { 'retry-after': String(seconds) },
    };
  };
}
