// CORS from CORS_ORIGINS: exact origins ("https://app.example.com"), any port of a
// host ("http://localhost:*") or "*" (any origin). An origin not listed gets no
// CORS headers at all, so the browser keeps the answer from the page. Bearer
// tokens, not cookies, authenticate: credentials are never allowed.
import type { YogaServerOptions } from 'graphql-yoga';

type CorsOption = NonNullable<YogaServerOptions<Record<string, unknown>, Record<string, unknown>>['cors']>;

export const ALLOWED_REQUEST_HEADERS = ['authorization', 'content-type', 'x-service-orgid', 'idempotency-key', 'x-request-id', 'x-graphql-yoga-csrf'];
export const EXPOSED_RESPONSE_HEADERS = ['x-request-id', 'retry-after', 'idempotency-replayed'];

export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    if (entry === '*') return true;
    if (entry.endsWith(':*')) {
      const base = entry.slice(0, -2);
      return origin === base || (origin.startsWith(`${base}:`) && /^\d{1,5}$/.test(origin.slice(base.length + 1)));
    }
    return origin === entry;
  });
}

export function corsOptions(allowed: readonly string[]): CorsOption {
  if (allowed.length === 0) return false;
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin || !originAllowed(origin, allowed)) return false;
    return {
      origin: [origin],
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ALLOWED_REQUEST_HEADERS,
      exposedHeaders: EXPOSED_RESPONSE_HEADERS,
      credentials: false,
      maxAge: 600,
    };
  };
}
