// The gateway in upstream mode (ZITADEL_URL): the HTTP edge and the GraphQL face in front of a
// ZITADEL (src/upstream), no stores of its own. Redis, when set, still carries the idempotency
// records and the rate limits, so gateways sharing it answer a retried Idempotency-Key from the
// record. The wire face is not served here: ZITADEL's clients call ZITADEL.
import type { Server } from 'node:http';
import { loadOrCreateSecret } from './auth/local-key.ts';
import { createUpstreamTokenVerifier } from './auth/upstream-tokens.ts';
import type { Config } from './config.ts';
import { createGraphQLFace, type GraphQLYoga } from './graphql/face.ts';
import { createHttpLayer } from './http/index.ts';
import { notServedFace } from './http/not-served.ts';
import { createMetrics, type GatewayMetrics } from './http/metrics.ts';
import { createLogger, logFormatFor, type Logger } from './log.ts';
import { createMemoryRateLimiter, createRedisRateLimiter } from './notify/rate-limit.ts';
import { faceOperations, type OperationContext, type Operations } from './operations.ts';
import { buildSchema } from './schema/index.ts';
import { closeRedis, failFastRedis } from './redis.ts';
import { redisUnreachable } from './start-errors.ts';
import { timed } from './timed.ts';
import { createUpstream, type Upstream } from './upstream/client.ts';
import { upstreamContext } from './upstream/context.ts';
import { upstreamOperations } from './upstream/operations.ts';
import { mayBeWirePath } from './wire/paths.ts';
import { startTracingFor } from './tracing/start.ts';
import { tracedOperations } from './tracing/wrap.ts';

export interface UpstreamGateway {
  yoga: GraphQLYoga;
  ops: Operations<OperationContext>;
  upstream: Upstream;
  logger: Logger;
  metrics: GatewayMetrics;
  listen(): Promise<{ server: Server; url: string; metricsUrl?: string }>;
  shutdown(): Promise<boolean>;
  close(): Promise<void>;
}

export async function createUpstreamGateway(config: Config, options: { logger?: Logger } = {}): Promise<UpstreamGateway> {
  const settings = config.upstream;
  if (!settings) throw new Error('ZITADEL_URL is not set');
  const logger = options.logger ?? createLogger(config.logLevel, undefined, undefined, logFormatFor(config.logFormat, config.production));
  const metrics = createMetrics();
  // Before the Redis clients are made: they are wrapped in spans only when tracing is on.
  const tracing = await startTracingFor(config);
  const redis = config.redis;
  let rateLimiter = redis
    ? await createRedisRateLimiter({ url: redis }).catch((err: unknown) => {
        throw redisUnreachable(redis, err);
      })
    : createMemoryRateLimiter();
  if (redis) rateLimiter = timed(rateLimiter, ['hit'], metrics.redisObserver('rate_limit'));
  if (redis && !config.codeHmacKey)
    logger.log('warn', 'CODE_HMAC_KEY is not set: using the key in the data folder; gateways sharing one Redis need the same key');
  const secretKey = config.codeHmacKey ?? (await loadOrCreateSecret(config.dataDir, 'code-hmac.key'));
  // /ready pings the Redis of the idempotency records and rate limits, as in the embedded mode.
  const redisProbe = redis ? failFastRedis(redis) : undefined;
  const upstream = createUpstream(settings, metrics.upstreamCall, logger);
  const tokens = createUpstreamTokenVerifier(settings.jwksUrl, secretKey, settings.ca);
  const http = await createHttpLayer({
    config,
    logger,
    metrics,
    stores: {
      secretKey,
      rateLimiter,
      store: { name: 'upstream', ping: () => upstream.ping() },
      ...(redisProbe ? { codeStore: { ping: () => redisProbe.ping() } } : {}),
    },
    tokens,
  });
  const operations = faceOperations(
    (headers, caller) => upstreamContext(upstream, headers, caller),
    tracedOperations(upstreamOperations(config)),
  );
  const graphql = createGraphQLFace({
    config,
    logger,
    schema: buildSchema(config),
    tokens,
    idempotency: http.idempotency,
    operations,
    // The quick start's GraphiQL token is the embedded mode's: here each caller brings ZITADEL's.
    instanceAdminId: async () => null,
  });
  logger.log('info', 'upstream mode', { upstream: settings.url, transport: settings.transport, timeoutMs: settings.timeoutMs });

  let stopping: Promise<boolean> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      const clean = await http.close();
      upstream.close();
      await rateLimiter.close();
      if (redisProbe) await closeRedis(redisProbe);
      await tracing.shutdown();
      return clean;
    })());
  return {
    yoga: graphql.yoga,
    ops: operations.ops,
    upstream,
    logger,
    metrics,
    listen: () =>
      http.listen({
        routed: [notServedFace(mayBeWirePath, `ZITADEL's API is not served in upstream mode: call ${settings.url}`)],
        otherwise: graphql.face,
      }),
    shutdown,
    async close() {
      await shutdown();
    },
  };
}
