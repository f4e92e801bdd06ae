// CORS on GraphQL's paths, done by yoga, from the edge's rule (src/http/cors.ts: CORS_ORIGINS,
// the headers browsers may send and read).
import type { YogaServerOptions } from 'graphql-yoga';
import { ALLOWED_REQUEST_HEADERS, EXPOSED_RESPONSE_HEADERS, originAllowed } from '../http/cors.ts';

type CorsOption = NonNullable<YogaServerOptions<Record<string, unknown>, Record<string, unknown>>['cors']>;

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
