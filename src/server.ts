// The gateway, wired: the stores and what the operations need (src/stores.ts, Deps), the HTTP
// edge (src/http), and its two faces on one port: GraphQL (src/graphql over the schema of
// src/schema) and the wire API (src/wire, loaded at its first request).
import type { Server } from 'node:http';
import { loadOrCreateLocalKey, loadOrCreateSecret } from './auth/local-key.ts';
import { createTokenVerifier } from './auth/tokens.ts';
import { instanceAdminId } from './commands/bootstrap.ts';
import type { Deps } from './commands/context.ts';
import { commandOperations } from './commands/operations.ts';
import { newOrgHints } from './commands/org-hints.ts';
import { requestContext } from './commands/request-context.ts';
import type { Config } from './config.ts';
import { createGraphQLFace, type GraphQLYoga } from './graphql/face.ts';
import { createHttpLayer } from './http/index.ts';
import { jwksFace } from './http/jwks.ts';
import { createMetrics, type GatewayMetrics } from './http/metrics.ts';
import { createLogger, logFormatFor, type Logger } from './log.ts';
import { createPasswordHasher } from './model/passwords.ts';
import { startNodeIds, type NodeIds } from './node-ids.ts';
import { createNotifier, type DeliveryNotifier } from './notify/index.ts';
import type { Notifier } from './notify/port.ts';
import { buildSchema } from './schema/index.ts';
import { faceOperations, type Operations } from './operations.ts';
import { openStores, type Stores } from './stores.ts';
import { startTracingFor } from './tracing/start.ts';
import { tracedOperations } from './tracing/wrap.ts';
import { lazyWireRoute } from './wire/lazy.ts';
import { mayBeWirePath, WIRE_CORS, wireProtocolOf } from './wire/paths.ts';

export interface Gateway {
  yoga: GraphQLYoga;
  deps: Deps;
  /** What serves the operations the faces call (src/operations.ts). */
  ops: Operations;
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

/** The stores, the notifier and the node-id lease, and the Deps of the commands over them. */
async function openDeps(config: Config, logger: Logger, metrics: GatewayMetrics, options: GatewayOptions) {
  const stores = await openStores(config, logger, {
    store: metrics.storeObserver,
    redis: metrics.redisObserver,
    mongoCommand: metrics.mongoCommand,
    stateRepaired: metrics.stateRepaired,
    longWork: metrics.longWork,
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
    orgHints: newOrgHints(),
  };
  return { stores, delivery, nodeIds, deps };
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel, undefined, undefined, logFormatFor(config.logFormat, config.production));
  const metrics = createMetrics();
  // Before the stores open: their clients are wrapped in spans only when tracing is on.
  const tracing = await startTracingFor(config);
  const { stores, delivery, nodeIds, deps } = await openDeps(config, logger, metrics, options).catch(async (err: unknown) => {
    await tracing.shutdown();
    throw err;
  });
  const ops = tracedOperations(commandOperations);
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

  const graphql = createGraphQLFace({
    config,
    logger,
    schema: buildSchema(config),
    tokens,
    idempotency: http.idempotency,
    operations: faceOperations((headers, caller) => requestContext(deps, headers, caller), ops),
    instanceAdminId: () => instanceAdminId({ deps }),
  });
  // The wire API (gRPC, gRPC-web, Connect, REST/JSON) over the same commands, on the same port.
  // Loaded at its first request, not at start (src/wire/lazy.ts).
  const wire = lazyWireRoute({
    mayMatch: mayBeWirePath,
    protocolOf: wireProtocolOf,
    cors: WIRE_CORS,
    load: async () =>
      (await import('./wire/rest-route.ts')).createWireRoute({
        deps,
        ops,
        tokens,
        logger,
        readMaxBytes: http.maxBodyBytes,
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
      await tracing.shutdown(); // the spans of the last requests are exported before the process ends
      return clean;
    })());
  return {
    yoga: graphql.yoga,
    deps,
    ops,
    stores,
    logger,
    delivery,
    nodeIds,
    metrics,
    listen: () =>
      http.listen({
        // With its own signing key, its public half at ZITADEL's key-set path (src/http/jwks.ts).
        routed: config.jwksUrl ? [wire] : [wire, jwksFace(async () => (await loadOrCreateLocalKey(config.dataDir)).publicJwk)],
        otherwise: graphql.face,
      }),
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
