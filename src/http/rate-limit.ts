// Authentication at the edge and per-caller / per-IP request limits.
//
// The bearer token is checked once per request, by the node handler before the
// body is read (edge.ts; `authenticate` here is then a no-op), so the limit can
// be per verified caller (a forged `sub` buys nothing). Requests
// with a valid token count against their caller; requests without one (or with
// an invalid one) against their client IP. Both are sliding one-minute windows
// in the rate limiter of src/notify/rate-limit.ts: Redis when REDIS_URL is set,
// shared by every gateway, memory otherwise. A full window answers HTTP 429 with
// Retry-After (whole seconds) and a RESOURCE_EXHAUSTED error body.
//
// If the limiter's Redis is unreachable the request is let through (and
// counted in gateway_rate_limiter_unavailable_total): the operations that need
// Redis answer UNAVAILABLE by themselves, the others keep working.
import type { Plugin } from 'graphql-yoga';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { HttpConfig } from '../config.ts';
import { extensionsOf } from '../errors.ts';
import type { RateLimiter } from '../notify/rate-limit.ts';
import type { Logger } from '../log.ts';
import { stateOf, type RequestState } from './request-state.ts';

const WINDOW_MS = 60_000;

export interface EdgeOptions {
  tokens: TokenVerifier;
  limiter: RateLimiter;
  limits: Pick<HttpConfig, 'rateLimitPerCaller' | 'rateLimitPerIp'>;
  logger: Logger;
  onLimiterUnavailable?: () => void;
  onLimited?: (scope: 'caller' | 'ip') => void;
}

export async function authenticate(state: RequestState, authorization: string | null, tokens: TokenVerifier): Promise<void> {
  if (state.authChecked) return;
  state.authChecked = true;
  if (!authorization) return;
  try {
    state.caller = (await tokens.verify(authorization)).userId;
  } catch (err) {
    state.authError = err as Error;
  }
}

export function useEdge(options: EdgeOptions): Plugin {
  const { tokens, limiter, limits, logger } = options;
  let lastWarned = 0;
  return {
    async onRequest({ request, endResponse, fetchAPI }) {
      if (request.method === 'OPTIONS') return;
      const state = stateOf(request);
      await authenticate(state, request.headers.get('authorization'), tokens);

      const [key, limit] = state.caller ? [`http:caller:${state.caller}`, limits.rateLimitPerCaller] : [`http:ip:${state.ip}`, limits.rateLimitPerIp];
      if (limit <= 0) return;
      let decision;
      try {
        decision = await limiter.hit(key, limit, WINDOW_MS);
      } catch (err) {
        options.onLimiterUnavailable?.();
        if (Date.now() - lastWarned > 10_000) {
          lastWarned = Date.now();
          logger.log('warn', 'rate limiter unavailable: requests are not limited', { error: String((err as Error)?.message ?? err) });
        }
        return;
      }
      if (decision.allowed) return;
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      state.errorCodes.push('RESOURCE_EXHAUSTED');
      options.onLimited?.(state.caller ? 'caller' : 'ip');
      const body = {
        errors: [
          {
            message: `Too many requests: at most ${limit} a minute ${state.caller ? 'per caller' : 'per client address'}; retry after ${seconds} s.`,
            extensions: {
              code: 'RESOURCE_EXHAUSTED',
              grpcCode: extensionsOf('RESOURCE_EXHAUSTED').grpcCode,
              details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }],
            },
          },
        ],
      };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), {
          status: 429,
          headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(seconds) },
        }),
      );
    },
  };
}
