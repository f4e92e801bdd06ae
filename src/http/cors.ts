// CORS from CORS_ORIGINS: exact origins ("https://app.example.com"), any port of a
// host ("http://localhost:*") or "*" (any origin). An origin not listed gets no
// CORS headers at all, so the browser keeps the answer from the page. Bearer
// tokens, not cookies, authenticate: credentials are never allowed.
// The edge applies it on the wire's paths (applyCors); yoga applies the same rule on GraphQL's
// (src/graphql/cors.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';

export const ALLOWED_REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'x-service-orgid',
  'x-zitadel-orgid',
  'idempotency-key',
  'x-request-id',
  'x-graphql-yoga-csrf',
];
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

/** What a CORS answer allows for a group of paths. */
export interface CorsSpec {
  methods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
}

/**
 * CORS done by the edge (for paths yoga does not serve): an allowed origin gets its headers on
 * every answer, refusals included; a preflight is answered here (204). True when it was a preflight.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, allowed: readonly string[], spec: CorsSpec): boolean {
  const origin = req.headers.origin;
  const ok = typeof origin === 'string' && allowed.length > 0 && originAllowed(origin, allowed);
  if (ok) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', spec.exposeHeaders.join(', '));
  }
  if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return false;
  if (ok) {
    res.setHeader('access-control-allow-methods', spec.methods.join(', '));
    res.setHeader('access-control-allow-headers', spec.allowHeaders.join(', '));
    res.setHeader('access-control-max-age', '600');
  }
  res.writeHead(204, { 'content-length': '0' });
  res.end();
  return true;
}
