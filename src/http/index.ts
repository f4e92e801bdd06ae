// The HTTP edge of the gateway, put together for src/server.ts: yoga options and
// plugins for hardening (CSRF, body cap, armor, no batching, CORS), auth and rate
// limits, idempotency keys, request facts for logs and metrics, and the node
// handler with /health, /ready, /metrics and the graceful drain.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Stores } from '../stores.ts';
import { useArmor } from './armor.ts';
import { createBodyBudget } from './body-budget.ts';
import { maxRequestBodyBytes, useUnauthenticatedBodyCap } from './body-limit.ts';
import { useJsonRequests } from './content-type.ts';
import { useJsonDepthLimit } from './json-depth.ts';
import { corsOptions } from './cors.ts';
import { createEdge, type Edge } from './edge.ts';
import type { ReadinessCheck } from './health.ts';
import { createMemoryIdempotencyStore, createRedisIdempotencyStore, useIdempotency, type IdempotencyStore } from './idempotency.ts';
import { useRequestFacts } from './logging.ts';
import { timed, type GatewayMetrics } from './metrics.ts';
import { authenticate, useEdge } from './rate-limit.ts';
import { stateOf, useRequestState, type RequestState } from './request-state.ts';

export interface HttpLayer {
  /** For createYoga: CORS, the body cap, batching off. */
  yogaOptions: { cors: ReturnType<typeof corsOptions>; maxRequestBodySize: number; batching: false };
  /** For createYoga, after the gateway's own plugins. */
  plugins: Plugin[];
  /** The request's state with its caller checked (for the GraphQL context). */
  authenticated(request: Request): Promise<RequestState>;
  listen(app: (req: any, res: any) => unknown): Promise<{ server: Server; url: string }>;
  /** Drains the server (SHUTDOWN_TIMEOUT_MS) and closes the idempotency store; true when nothing was cut. */
  close(): Promise<boolean>;
  readonly edge: Edge | undefined;
}

export interface HttpLayerOptions {
  config: Config;
  logger: Logger;
  metrics: GatewayMetrics;
  stores: Stores;
  tokens: TokenVerifier;
  /** Readiness beyond the stores (none today). */
  extraChecks?: ReadinessCheck[];
}

export async function createHttpLayer(options: HttpLayerOptions): Promise<HttpLayer> {
  const { config, logger, metrics, stores, tokens } = options;
  const idempotencyStore: IdempotencyStore = config.redisUrl
    ? timed(await createRedisIdempotencyStore({ url: config.redisUrl }), ['claim', 'complete', 'release'], metrics.redisObserver('idempotency'))
    : createMemoryIdempotencyStore();

  const readinessChecks: ReadinessCheck[] = [
    { name: config.mongodbUrl ? 'mongodb' : 'store', ping: () => stores.store.ping() },
    ...(config.redisUrl ? [{ name: 'redis', ping: () => stores.codeStore.ping() }] : []),
    ...(options.extraChecks ?? []),
  ];

  const plugins: Plugin[] = [
    useRequestState(),
    // Every request is application/json (preflighted by browsers) or carries x-graphql-yoga-csrf;
    // a form or text/plain POST and a plain GET from another site are refused (403).
    useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf'] }),
    // Then the one body format: application/graphql and other preflighted types get 415.
    useJsonRequests(),
    useArmor({ blockFieldSuggestions: !config.introspection }),
    useEdge({
      tokens,
      limiter: stores.rateLimiter,
      limits: config.http,
      logger,
      onLimiterUnavailable: metrics.rateLimiterUnavailable,
      onLimited: metrics.rateLimited,
    }),
    useUnauthenticatedBodyCap(),
    useJsonDepthLimit(),
    useIdempotency({ store: idempotencyStore, secret: stores.secretKey, ttlSeconds: config.http.idempotencyTtlSeconds, onOutcome: metrics.idempotency }),
    useRequestFacts(),
  ];

  // Each budget holds at least one largest legal body, so such a request always gets through on its own.
  const maxBodyBytes = maxRequestBodyBytes(config);
  const perClient = Math.max(maxBodyBytes, config.http.maxInflightBytesPerClient ?? 2 * maxBodyBytes);
  const budget = createBodyBudget({ perClient, total: Math.max(perClient, config.http.maxInflightBytes ?? 4 * maxBodyBytes) });
  metrics.watchBodyBytes(() => budget.bytesInFlight);

  let edge: Edge | undefined;
  let server: Server | undefined;
  return {
    yogaOptions: { cors: corsOptions(config.http.corsOrigins), maxRequestBodySize: maxBodyBytes, batching: false },
    plugins,
    async authenticated(request) {
      const state = stateOf(request);
      await authenticate(state, request.headers.get('authorization'), tokens);
      return state;
    },
    get edge() {
      return edge;
    },
    async listen(app) {
      edge = createEdge({ app, logger, metrics, trustProxy: config.http.trustProxy, readinessChecks, tokens, maxBodyBytes, budget });
      server = createServer(edge.handler);
      // Expect: 100-continue goes to the edge too, which asks for the body only once it is admitted.
      server.on('checkContinue', edge.handler);
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.port, config.host, () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      return { server, url: `http://${config.host}:${port}/graphql` };
    },
    async close() {
      const clean = server && edge ? await edge.drain(server, config.http.shutdownTimeoutMs) : true;
      await idempotencyStore.close();
      return clean;
    },
  };
}
