// The HTTP edge of the gateway, put together for src/server.ts: the idempotency core both
// faces share, readiness, the admission of every request (token, rate limit, body caps and
// budgets), the one port with its probes and limits, the metrics port, and the graceful drain.
// It knows no protocol: the faces (GraphQL, the wire API) are handed to `listen` (face.ts).
import type { Server } from 'node:http';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { RateLimiter } from '../notify/port.ts';
import { createAddressWindow } from './address-window.ts';
import { createAdmission } from './admission.ts';
import { createBodyBudget } from './body-budget.ts';
import { maxRequestBodyBytes } from './body-limit.ts';
import { createEdge, type Edge } from './edge.ts';
import { faceOf, type Faces } from './face.ts';
import { readiness, type ReadinessCheck } from './health.ts';
import {
  createIdempotency,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  type Idempotency,
  type IdempotencyStore,
} from './idempotency-core.ts';
import { timed, type GatewayMetrics } from './metrics.ts';
import { listenMetrics, metricsResponder } from './metrics-port.ts';
import { createOutputGuard } from './output-guard.ts';
import { openPort } from './port.ts';
import { createProbes, PROBE_PATHS } from './probes.ts';
import { createRateLimit } from './rate-limit.ts';

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HttpLayer {
  /**
   * One port: HTTP/1.1 and h2c, each path to its face (face.ts), /health, /ready and /metrics to the edge.
   * With METRICS_PORT, GET /metrics on a port of its own: its URL as metricsUrl.
   */
  listen(faces: Faces): Promise<{ server: Server; url: string; metricsUrl?: string }>;
  /** Drains the server (SHUTDOWN_TIMEOUT_MS) and closes the idempotency store; true when nothing was cut. */
  close(): Promise<boolean>;
  /** What GET /ready answers, as a boolean: every readiness check passes and no drain is under way. */
  ready(): Promise<boolean>;
  readonly edge: Edge | undefined;
  /** Idempotency-Key, for both faces: one store, one key space (idempotency-core.ts). */
  readonly idempotency: Idempotency;
  /** The largest request body accepted from a caller with a valid token (body-limit.ts). */
  readonly maxBodyBytes: number;
}

export interface HttpLayerOptions {
  config: Config;
  logger: Logger;
  metrics: GatewayMetrics;
  /** What the edge needs of the stores: the key its request ids and idempotency records are
   *  keyed with, the readiness pings, the request limiter (src/stores.ts opens them). */
  stores: {
    secretKey: string | Buffer;
    /** What serves the operations (the event store; upstream mode: the upstream API), named in /ready as `name`. */
    store: { ping(): Promise<unknown>; name?: string };
    /** Redis, when REDIS_URL is set: the codes' store (upstream mode: a connection kept for this probe). */
    codeStore?: { ping(): Promise<unknown> };
    rateLimiter: RateLimiter;
  };
  tokens: TokenVerifier;
  /** Readiness beyond the stores (the node-id lease, when ids are leased). */
  extraChecks?: ReadinessCheck[];
}

async function idempotencyStoreOf(config: Config, metrics: GatewayMetrics): Promise<IdempotencyStore> {
  if (!config.redis) return createMemoryIdempotencyStore();
  const store = await createRedisIdempotencyStore({ url: config.redis });
  return timed(store, ['claim', 'complete', 'release'], metrics.redisObserver('idempotency'));
}

/** GET /metrics on the port: per client address at most METRICS_RATE_LIMIT_PER_IP_PER_MINUTE a minute (0: unlimited). */
function metricsOnThePort(config: Config, metrics: GatewayMetrics) {
  const window = createAddressWindow({ windowMs: 60_000 });
  const perMinute = config.http.metricsPerIpPerMinute;
  return {
    serveMetrics: metricsResponder(metrics),
    metricsLimit: (ip: string) => (perMinute > 0 && window.hit(ip) > perMinute ? Math.max(1, Math.ceil(window.msLeft() / 1000)) : null),
  };
}

export async function createHttpLayer(options: HttpLayerOptions): Promise<HttpLayer> {
  const { config, logger, metrics, stores, tokens } = options;
  const limits = config.http;
  const idempotencyStore = await idempotencyStoreOf(config, metrics);
  const idempotency = createIdempotency({
    store: idempotencyStore,
    secret: stores.secretKey,
    ttlSeconds: limits.idempotencyTtlSeconds,
    onOutcome: metrics.idempotency,
  });
  const readinessChecks: ReadinessCheck[] = [
    { name: stores.store.name ?? (config.mongodbUrl ? 'mongodb' : 'store'), ping: () => stores.store.ping() },
    ...(config.redis && stores.codeStore ? [{ name: 'redis', ping: () => stores.codeStore!.ping() }] : []),
    ...(options.extraChecks ?? []),
  ];
  // Every request but preflights, before its body: GraphQL and the wire API alike.
  const rateLimit = createRateLimit({
    limiter: stores.rateLimiter,
    limits,
    logger,
    onLimiterUnavailable: metrics.rateLimiterUnavailable,
    onLimited: metrics.rateLimited,
  });
  // Each budget holds at least one largest legal body, so such a request always gets through on its own.
  const maxBodyBytes = maxRequestBodyBytes(config);
  const perClient = Math.max(maxBodyBytes, limits.maxInflightBytesPerClient ?? 2 * maxBodyBytes);
  const budget = createBodyBudget({ perClient, total: Math.max(perClient, limits.maxInflightBytes ?? 4 * maxBodyBytes) });
  metrics.watchBodyBytes(() => budget.bytesInFlight);
  const admit = createAdmission({ metrics, tokens, maxBodyBytes, budget, rateLimit });

  let edge: Edge | undefined;
  let server: Server | undefined;
  let stopListening: (() => { closed: Promise<void>; cut: () => void }) | undefined;
  return {
    idempotency,
    maxBodyBytes,
    get edge() {
      return edge;
    },
    ready: async () => (await readiness(readinessChecks, edge?.draining ?? false)).ready,
    async listen(faces) {
      const metricsElsewhere = config.metrics.port !== undefined;
      const onThePort = metricsElsewhere ? {} : metricsOnThePort(config, metrics);
      const probes = createProbes({
        metrics,
        trustProxy: limits.trustProxy,
        readinessChecks,
        draining: () => theEdge.draining,
        ...onThePort,
      });
      const theEdge = createEdge({
        faceOf: (path) => faceOf(faces, path),
        probes: { paths: PROBE_PATHS, answer: probes },
        admit,
        logger,
        metrics,
        trustProxy: limits.trustProxy,
        maxBodyBytes,
        corsOrigins: limits.corsOrigins,
      });
      edge = theEdge;
      const output = createOutputGuard({
        writeTimeoutMs: limits.writeTimeoutMs,
        maxUnsentBytes: limits.maxUnsentBytesPerConnection,
        onCut: metrics.cut,
      });
      const port = await openPort({ config, logger, metrics, output, handler: theEdge.handler });
      server = port.server;
      const metricsPort = metricsElsewhere
        ? await listenMetrics({
            host: config.metrics.host,
            port: config.metrics.port!,
            respond: metricsResponder(metrics),
            requestTimeoutMs: limits.requestTimeoutMs,
            watch: (req, res) => output.watch(req, res),
          }).catch((err: unknown) => {
            port.stop();
            throw err;
          })
        : undefined;
      stopListening = () => {
        const stopped = port.stop();
        return {
          closed: stopped.closed,
          cut: () => {
            stopped.cut();
            output.stop();
            void metricsPort?.close();
          },
        };
      };
      return {
        server: port.server,
        url: `${config.tls ? 'https' : 'http'}://${config.host}:${port.port}/graphql`,
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
