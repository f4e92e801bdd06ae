// The HTTP gateway: yoga with the schema, per-request context, the error model;
// the HTTP edge (hardening, limits, idempotency, logs, metrics, probes, drain) is src/http.
import type { Server } from 'node:http';
import { GraphQLError } from 'graphql';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { stateOf } from './http/request-state.ts';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { loadOrCreateSecret } from './auth/local-key.ts';
import { createTokenVerifier } from './auth/tokens.ts';
import type { Deps } from './commands/context.ts';
import { requestContext } from './commands/request-context.ts';
import type { Config } from './config.ts';
import { callerOf } from './http/authentication.ts';
import { createHttpLayer } from './http/index.ts';
import { createMetrics, type GatewayMetrics } from './http/metrics.ts';
import { createLogger, type Logger } from './log.ts';
import { startNodeIds, type NodeIds } from './node-ids.ts';
import { createPasswordHasher } from './model/passwords.ts';
import { createNotifier, type DeliveryNotifier } from './notify/index.ts';
import type { Notifier } from './notify/port.ts';
import { introspectionSwitch, useGraphiQLPage } from './graphiql.ts';
import { buildSchema } from './schema/index.ts';
import type { GraphQLContext } from './schema/builder.ts';
import { asAppError } from './errors.ts';
import { classifyGraphQLError, maskedInternal, toGraphQLError } from './schema/errors.ts';
import { openStores, type Stores } from './stores.ts';
import { maxRequestBodyBytes } from './http/body-limit.ts';
import { lazyWireRoute } from './http/lazy-wire.ts';
import { useVariableCoercion } from './http/variable-coercion.ts';
import { isSeveralMutations, usePartialMutationStatus } from './http/partial-mutation.ts';
import { mayBeWirePath, WIRE_CORS, wireProtocolOf } from './wire/paths.ts';

export interface Gateway {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  deps: Deps;
  stores: Stores;
  logger: Logger;
  /** Queue, senders and delivery metrics; null when options.notifier replaced them. */
  delivery: DeliveryNotifier | null;
  /** The node id of generated ids, and its lease. */
  nodeIds: NodeIds;
  metrics: GatewayMetrics;
  /** metricsUrl: GET /metrics on its own port (METRICS_PORT), when set. */
  listen(): Promise<{ server: Server; url: string; metricsUrl?: string }>;
  /**
   * Graceful stop: refuse new connections, let in-flight requests finish (up to
   * SHUTDOWN_TIMEOUT_MS), stop the delivery worker, close the stores. True when
   * no request had to be cut.
   */
  shutdown(): Promise<boolean>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  notifier?: Notifier;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const metrics = createMetrics();
  const stores = await openStores(config, logger, {
    store: metrics.storeObserver,
    redis: metrics.redisObserver,
    mongoCommand: metrics.mongoCommand,
    stateRepaired: metrics.stateRepaired,
  });
  const delivery = options.notifier ? null : await createNotifier(config, logger);
  // Leased in Redis or MongoDB so that no two gateways share one (src/node-ids.ts); refused: nothing stays open.
  const nodeIds = await startNodeIds(config, logger).catch(async (err: unknown) => {
    await Promise.allSettled([stores.close(), delivery?.close()]);
    throw err;
  });
  if (delivery) metrics.watchDelivery(delivery.metrics);
  const deps: Deps = {
    config,
    store: stores.store,
    codes: stores.codes,
    notifier: options.notifier ?? delivery!,
    rateLimiter: stores.rateLimiter,
    hasher: createPasswordHasher({ cost: config.bcryptCost }),
    newId: nodeIds.next,
    idpSecretKey: await idpSecretKey(config),
  };
  const tokens = createTokenVerifier(config);
  // Without a lease a gateway cannot create anything: the balancer should route around it.
  const leaseCheck = {
    name: 'node_id',
    ping: async () => {
      if (nodeIds.nodeId === null) throw new Error('no node id lease held');
    },
  };
  const http = await createHttpLayer({
    config,
    logger,
    metrics,
    stores,
    tokens,
    extraChecks: nodeIds.lease === 'none' ? [] : [leaseCheck],
  });
  if (delivery && config.delivery.runWorker) delivery.startWorker();

  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema: buildSchema(config),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Served by useGraphiQLPage (below): compressed, cached, and the quick start's token only where it belongs.
    graphiql: false,
    logging: false,
    ...http.yogaOptions,
    maskedErrors: {
      maskError(error, _message) {
        const located = error instanceof GraphQLError ? error : undefined;
        let cause: unknown = located?.originalError ?? error;
        if (cause instanceof GraphQLError && cause.extensions?.grpcCode !== undefined) {
          return new GraphQLError(cause.message, {
            nodes: located?.nodes,
            positions: located?.positions,
            path: located?.path,
            extensions: cause.extensions,
          });
        }
        const known = asAppError(cause);
        if (known) return toGraphQLError(known, located);
        if (located && !located.originalError) return classifyGraphQLError(located);
        // Variable coercion (firstName: 42, isVerified: "yes", a missing field, bad Base64):
        // graphql-js wraps its own GraphQLError, before execution, so there is no path.
        if (located && !located.path && cause instanceof GraphQLError) return classifyGraphQLError(located);
        // Logged with its request id once the answer is processed (errorClassification).
        const masked = maskedInternal(PENDING_REQUEST_ID, located);
        unexpected.set(masked, cause);
        return masked;
      },
    },
    context: async ({ request }): Promise<GraphQLContext> => {
      // The token was checked at the edge (src/http/rate-limit.ts), before the rate limit.
      const state = await http.authenticated(request);
      // x-service-orgid or x-zitadel-orgid, read as every face reads them (two different ones: INVALID_ARGUMENT).
      const cmd = requestContext(deps, request.headers, callerOf(state));
      return { cmd, requestId: state.requestId };
    },
    plugins: [
      useGraphiQLPage(config, deps),
      errorClassification(logger),
      usePartialMutationStatus(),
      introspectionSwitch(config),
      ...http.plugins,
      useVariableCoercion(classifyGraphQLError),
      useGraphQlJit({}, { enableIf: (args) => !isSeveralMutations(args) }),
    ],
  });

  // The wire API (gRPC, gRPC-web, Connect, REST/JSON) over the same commands, on the same port.
  // Loaded at its first request, not at start (src/http/lazy-wire.ts).
  const wire = lazyWireRoute({
    mayMatch: mayBeWirePath,
    protocolOf: wireProtocolOf,
    cors: WIRE_CORS,
    load: async () =>
      (await import('./wire/rest-route.ts')).createWireRoute({
        deps,
        tokens,
        logger,
        readMaxBytes: maxRequestBodyBytes(config),
        ready: http.ready,
        idempotency: http.idempotency,
      }),
  });

  let stopping: Promise<boolean> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      const clean = await http.close();
      await nodeIds.close(); // no request left to need an id: the lease is released
      await deps.notifier.close(); // stops the worker after the job in hand
      await stores.close();
      return clean;
    })());
  return {
    yoga,
    deps,
    stores,
    logger,
    delivery,
    nodeIds,
    metrics,
    listen: () => http.listen(yoga, wire),
    shutdown,
    async close() {
      await shutdown();
    },
  };
}

async function idpSecretKey(config: Config): Promise<Buffer> {
  if (!config.idpSecretKey) return loadOrCreateSecret(config.dataDir, 'idp-secret.key', 32);
  const key = Buffer.from(config.idpSecretKey, 'hex');
  if (key.length !== 32) throw new Error('IDP_SECRET_KEY must be 64 hex characters (32 bytes)');
  return key;
}

/** Masked INTERNAL errors waiting for their request id, with what was thrown. */
const unexpected = new WeakMap<GraphQLError, unknown>();
const PENDING_REQUEST_ID = 'pending';

/**
 * Syntax, validation and variable errors of graphql-js get the INVALID_ARGUMENT
 * extensions too; masked INTERNAL errors get the request id and are logged with it.
 */
function errorClassification(logger: Logger): Plugin {
  return {
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || !('errors' in result) || !result.errors) return;
      const errors = (result.errors as GraphQLError[]).map((e) => {
        if (unexpected.has(e)) {
          const { requestId } = stateOf(request);
          logger.log('error', 'unexpected error', { requestId, error: String((unexpected.get(e) as Error)?.stack ?? unexpected.get(e)) });
          return maskedInternal(requestId, e);
        }
        return e instanceof GraphQLError && e.extensions?.grpcCode === undefined && !e.originalError ? classifyGraphQLError(e) : e;
      });
      setResult({ ...result, errors } as any);
    },
  };
}
