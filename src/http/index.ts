// The HTTP edge of the gateway, put together for src/server.ts: yoga options and
// plugins for hardening (CSRF, body cap, armor, no batching, CORS), auth and rate
// limits, idempotency keys, request facts for logs and metrics, and the node
// handler with /health, /ready, /metrics and the graceful drain.
import { createServer, type Server } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Stores } from '../stores.ts';
import { useArmor } from './armor.ts';
import { createBodyBudget } from './body-budget.ts';
import { maxRequestBodyBytes, useBodyMeter } from './body-limit.ts';
import { useJsonContainerLimit } from './json-containers.ts';
import { useJsonRequests } from './content-type.ts';
import { useJsonDepthLimit } from './json-depth.ts';
import { applyCors, corsOptions, type CorsSpec } from './cors.ts';
import { createEdge, writeGraphQLRefusal, type Edge } from './edge.ts';
import type { AppError } from '../errors.ts';
import { readiness, type ReadinessCheck } from './health.ts';
import {
  createIdempotency,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  useIdempotency,
  type Idempotency,
  type IdempotencyStore,
} from './idempotency.ts';
import { useRequestFacts } from './logging.ts';
import { timed, type GatewayMetrics } from './metrics.ts';
import { authenticate } from './authentication.ts';
import { createRateLimit } from './rate-limit.ts';
import { stateOf, useRequestState, type EdgeContext, type RequestState } from './request-state.ts';
import { createOnePortServer } from './one-port.ts';
import { createAddressWindow } from './address-window.ts';
import { connectionKey, createConnectionGuard, defaultMaxConnections } from './connections.ts';
import { destroyedByServer, guardHttp2Sessions } from './http2-sessions.ts';
import { listenMetrics, metricsResponder } from './metrics-port.ts';
import { createOutputGuard } from './output-guard.ts';

/** The wire API's node handler and the paths it serves (src/wire). */
export interface WireRoute {
  matches(path: string): boolean;
  handler(req: any, res: any, state?: RequestState): void;
  /** grpc, grpc-web, grpc-web-text, connect or rest: for the log line and metric labels. */
  protocolOf(req: any, path: string): string;
  /** What browsers may send and read on the wire's paths (CORS_ORIGINS decides who). */
  cors: CorsSpec;
  /** Answers a refusal of the edge (before the body is read) in the path's wire shape. */
  refuse(req: any, res: any, path: string, error: AppError, headers: Record<string, string>): void;
}

/**
 * The edge writes `Connection: close` while draining and on refused oversized bodies, and
 * yoga passes a status message: HTTP/2 has neither (node throws on connection headers and
 * warns on status messages), so over HTTP/2 they are left out.
 */
function forHttp2(res: Http2ServerResponse): Http2ServerResponse {
  const setHeader = res.setHeader.bind(res);
  const writeHead = res.writeHead.bind(res) as (...args: any[]) => Http2ServerResponse;
  res.setHeader = ((name: string, value: any) =>
    name.toLowerCase() === 'connection' ? res : setHeader(name, value)) as typeof res.setHeader;
  res.writeHead = ((status: number, ...rest: any[]) => {
    const args = rest
      .filter((a) => typeof a !== 'string')
      .map((a) =>
        a && typeof a === 'object' && !Array.isArray(a)
          ? Object.fromEntries(Object.entries(a).filter(([k]) => k.toLowerCase() !== 'connection'))
          : a,
      );
    return writeHead(status, ...args);
  }) as typeof res.writeHead;
  return res;
}

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HttpLayer {
  /** For createYoga: CORS, the body cap, batching off. */
  yogaOptions: { cors: ReturnType<typeof corsOptions>; maxRequestBodySize: false; batching: false };
  /** For createYoga, after the gateway's own plugins. */
  plugins: Plugin[];
  /** The request's state with its caller checked (for the GraphQL context). */
  authenticated(request: Request): Promise<RequestState>;
  /**
   * One port: HTTP/1.1 and h2c; the wire API's paths to `wire`, everything else to the edge (GraphQL, probes, metrics).
   * With METRICS_PORT, GET /metrics on a port of its own: its URL as metricsUrl.
   */
  listen(
    app: (req: any, res: any, context: any) => unknown,
    wire?: WireRoute,
  ): Promise<{ server: Server; url: string; metricsUrl?: string }>;
  /** Drains the server (SHUTDOWN_TIMEOUT_MS) and closes the idempotency store; true when nothing was cut. */
  close(): Promise<boolean>;
  /** What GET /ready answers, as a boolean: every readiness check passes and no drain is under way. */
  ready(): Promise<boolean>;
  readonly edge: Edge | undefined;
  /** Idempotency-Key for the wire API: the core the GraphQL plugin uses (one store, one key space). */
  readonly idempotency: Idempotency;
}

export interface HttpLayerOptions {
  config: Config;
  logger: Logger;
  metrics: GatewayMetrics;
  stores: Stores;
  tokens: TokenVerifier;
  /** Readiness beyond the stores (the node-id lease, when ids are leased). */
  extraChecks?: ReadinessCheck[];
}

export async function createHttpLayer(options: HttpLayerOptions): Promise<HttpLayer> {
  const { config, logger, metrics, stores, tokens } = options;
  const idempotencyStore: IdempotencyStore = config.redis
    ? timed(
        await createRedisIdempotencyStore({ url: config.redis }),
        ['claim', 'complete', 'release'],
        metrics.redisObserver('idempotency'),
      )
    : createMemoryIdempotencyStore();
  // One core for GraphQL (the plugin below) and the wire API (`idempotency`, src/wire/idempotency.ts).
  const idempotency = createIdempotency({
    store: idempotencyStore,
    secret: stores.secretKey,
    ttlSeconds: config.http.idempotencyTtlSeconds,
    onOutcome: metrics.idempotency,
  });

  const readinessChecks: ReadinessCheck[] = [
    { name: config.mongodbUrl ? 'mongodb' : 'store', ping: () => stores.store.ping() },
    ...(config.redis ? [{ name: 'redis', ping: () => stores.codeStore.ping() }] : []),
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
    useJsonContainerLimit(),
    useBodyMeter(),
    useJsonDepthLimit(),
    useIdempotency(idempotency),
    useRequestFacts(),
  ];

  // Every request but preflights, before its body (the edge): GraphQL and the wire API alike.
  const rateLimit = createRateLimit({
    limiter: stores.rateLimiter,
    limits: config.http,
    logger,
    onLimiterUnavailable: metrics.rateLimiterUnavailable,
    onLimited: metrics.rateLimited,
  });

  // Each budget holds at least one largest legal body, so such a request always gets through on its own.
  const maxBodyBytes = maxRequestBodyBytes(config);
  const perClient = Math.max(maxBodyBytes, config.http.maxInflightBytesPerClient ?? 2 * maxBodyBytes);
  const budget = createBodyBudget({ perClient, total: Math.max(perClient, config.http.maxInflightBytes ?? 4 * maxBodyBytes) });
  metrics.watchBodyBytes(() => budget.bytesInFlight);

  let edge: Edge | undefined;
  let server: Server | undefined;
  let stopListening: (() => { closed: Promise<void>; cut: () => void }) | undefined;
  return {
    // The body cap is the edge's (edge.ts: from Content-Length, or metered as the body arrives); yoga's
    // own limit would pipe every body through one more web stream, which costs a DOMException a request.
    yogaOptions: { cors: corsOptions(config.http.corsOrigins), maxRequestBodySize: false, batching: false },
    plugins,
    idempotency,
    async authenticated(request) {
      const state = stateOf(request);
      await authenticate(state, request.headers.get('authorization'), tokens);
      return state;
    },
    get edge() {
      return edge;
    },
    ready: async () => (await readiness(readinessChecks, edge?.draining ?? false)).ready,
    async listen(app, wire) {
      const onWire = (state: RequestState | undefined) => state !== undefined && state.protocol !== 'graphql';
      // Behind the edge (token, body caps and budgets, request id, log line, metrics, drain):
      // the wire API's paths to its handler, everything else to yoga.
      const dispatch = (req: any, res: any, context: EdgeContext) =>
        wire && onWire(context.requestState) ? wire.handler(req, res, context.requestState) : app(req, res, context);
      const writeRefusal = (req: any, res: any, path: string, error: AppError, headers: Record<string, string>, state: RequestState) =>
        wire && onWire(state) ? wire.refuse(req, res, path, error, headers) : writeGraphQLRefusal(req, res, path, error, headers);
      const cors = (req: any, res: any, _path: string, state: RequestState) =>
        wire && onWire(state) ? applyCors(req, res, config.http.corsOrigins, wire.cors) : false;
      // The path is matched once per request, here; the others go by the protocol it gave.
      const protocolOf = (req: any, path: string) => (wire?.matches(path) ? wire.protocolOf(req, path) : 'graphql');
      const limits = config.http;
      const output = createOutputGuard({
        writeTimeoutMs: limits.writeTimeoutMs,
        maxUnsentBytes: limits.maxUnsentBytesPerConnection,
        onCut: metrics.cut,
      });
      const serveMetrics = metricsResponder(metrics);
      const metricsWindow = createAddressWindow({ windowMs: 60_000 });
      const metricsLimit = (ip: string) =>
        limits.metricsPerIpPerMinute > 0 && metricsWindow.hit(ip) > limits.metricsPerIpPerMinute
          ? Math.max(1, Math.ceil(metricsWindow.msLeft() / 1000))
          : null;
      const metricsElsewhere = config.metrics.port !== undefined;
      edge = createEdge({
        app: dispatch,
        logger,
        metrics,
        trustProxy: config.http.trustProxy,
        readinessChecks,
        tokens,
        maxBodyBytes,
        budget,
        rateLimit,
        cors,
        protocolOf,
        writeRefusal,
        ...(metricsElsewhere ? {} : { serveMetrics, metricsLimit }),
      });
      const theEdge = edge;
      const connections = createConnectionGuard({
        maxConnections: limits.maxConnections ?? defaultMaxConnections(),
        onRefused: metrics.connectionRefused,
        onEvicted: () => metrics.cut('evicted'),
      });
      metrics.watchConnections({ open: () => connections.open, unsentBytes: () => output.unsentBytes });
      // Every answer under the output guard; HTTP/1.1 requests mark their connection busy (HTTP/2: http2-sessions.ts).
      const http1Handler = (req: any, res: any) => {
        output.watch(req, res);
        const key = connectionKey(req.socket);
        connections.busy(key);
        res.once('close', () => connections.done(key));
        theEdge.handler(req, res);
      };
      const http2Handler = (req: any, res: Http2ServerResponse) => {
        // node hands over a stream a tick after its headers: one its peer has reset since (a
        // "rapid reset") has nothing left to answer, and costs no token check nor rate-limit call.
        if (res.stream.destroyed || res.stream.aborted) return;
        output.watch(req, res as any);
        const destroy = res.destroy.bind(res);
        res.destroy = ((err?: Error) => (destroyedByServer(res.stream), destroy(err))) as typeof res.destroy;
        theEdge.handler(req, forHttp2(res) as any);
      };
      // node's defaults: 300 s for a request, checked every 30 s; headers within 60 s.
      server = createServer(
        {
          requestTimeout: limits.requestTimeoutMs,
          headersTimeout: Math.min(60_000, limits.requestTimeoutMs),
          connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(limits.requestTimeoutMs / 4))),
        },
        http1Handler,
      );
      // Expect: 100-continue goes to the edge too, which asks for the body only once it is admitted.
      server.on('checkContinue', http1Handler);
      // node's default allows 2^32-1 concurrent streams per session.
      const h2 = createHttp2Server({ settings: { maxConcurrentStreams: limits.http2MaxConcurrentStreams } }, http2Handler);
      h2.on('checkContinue', http2Handler);
      guardHttp2Sessions(h2, {
        requestTimeoutMs: limits.requestTimeoutMs,
        idleTimeoutMs: limits.http2IdleTimeoutMs,
        resetsPerClientPerMinute: limits.http2ResetsPerClientPerMinute,
        resetBlockMs: limits.http2ResetBlockMs,
        connections,
        logger,
        onCut: metrics.cut,
      });
      const sessions = new Set<Http2Session>();
      h2.on('session', (session: Http2Session) => {
        sessions.add(session);
        session.once('close', () => sessions.delete(session));
      });
      const port = createOnePortServer(server, h2, config.tls, (socket) => connections.admit(socket));
      await new Promise<void>((resolve, reject) => {
        port.once('error', reject);
        port.listen(config.port, config.host, () => resolve());
      });
      const { port: bound } = port.address() as AddressInfo;
      // The http server never listens itself: 'listening' starts its connection tracking, which
      // enforces headersTimeout / requestTimeout and lets the drain close idle and open connections.
      server.emit('listening');
      const metricsPort = metricsElsewhere
        ? await listenMetrics({
            host: config.metrics.host,
            port: config.metrics.port!,
            respond: serveMetrics,
            requestTimeoutMs: limits.requestTimeoutMs,
            watch: (req, res) => output.watch(req, res),
          }).catch((err: unknown) => {
            port.close();
            throw err;
          })
        : undefined;
      stopListening = () => {
        const closed = new Promise<void>((resolve) => (port as NetServer).close(() => resolve()));
        // HTTP/2: GOAWAY; the streams in flight finish (the edge's drain waits for them).
        for (const session of sessions) session.close();
        return {
          closed,
          cut: () => {
            for (const session of sessions) session.destroy();
            output.stop();
            void metricsPort?.close();
          },
        };
      };
      return {
        server,
        url: `${config.tls ? 'https' : 'http'}://${config.host}:${bound}/graphql`,
        ...(metricsPort && { metricsUrl: metricsPort.url }),
      };
    },
    async close() {
      let clean = true;
      if (server && edge && stopListening) {
        // The port first (no new connections; HTTP/2 sessions told to go away), then the edge's
        // drain of every request in flight (HTTP/1.1 and HTTP/2), then the last HTTP/2 sessions.
        const port = stopListening();
        clean = await edge.drain(server, config.http.shutdownTimeoutMs);
        port.cut();
        await Promise.race([port.closed, sleepMs(200)]);
      }
      await idempotencyStore.close();
      return clean;
    },
  };
}
