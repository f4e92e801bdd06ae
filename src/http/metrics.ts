// Prometheus metrics at GET /metrics (prom-client, one registry per gateway).
//
//   gateway_http_requests_total{protocol,operation_type,root_field,status}     protocol: graphql, grpc, grpc-web, grpc-web-text, connect, rest
//   gateway_http_request_duration_seconds{protocol,operation_type,root_field}  histogram
//   gateway_graphql_errors_total{code}                                      one per error in an answer
//   gateway_store_duration_seconds{backend,operation,outcome}               event store calls (MongoDB or embedded)
//   gateway_mongodb_commands_total{command}                                 commands sent to MongoDB (find, insert, update, ...)
//   gateway_store_repaired_total{aggregate_type}                            state documents caught up by the repair loop
//   gateway_long_work_done{work}, gateway_long_work_ratio{work}              long work at start (src/progress.ts): items done, share done 0..1; work: log_import, user_search_backfill
//   gateway_redis_duration_seconds{component,operation,outcome}             Redis calls: codes, rate_limit, idempotency
//   gateway_rate_limited_total{scope}, gateway_rate_limiter_unavailable_total
//   gateway_idempotency_total{outcome}
//   gateway_http_requests_in_flight
//   gateway_http_body_bytes_in_flight                                       request-body bytes reserved (body-budget.ts)
//   gateway_http_body_refused_total{reason}                                 refused before or while the body was read: unauthenticated, too_large, client_budget, process_budget
//   gateway_http_connections_open, gateway_http_connections_refused_total{reason}   reason: limit, blocked
//   gateway_http_cut_total{reason}                                          connections and HTTP/2 streams cut: write_timeout, unsent_cap, request_timeout, idle_session, resets, evicted
//   gateway_http_unsent_bytes                                               answer bytes queued for peers that have not taken them yet
//   gateway_metrics_refused_total                                           /metrics on the main port over its per-address limit
//   gateway_delivery_{queued,enqueue_failed,sent,retried,dead_lettered}_total   this process's delivery counters
//   plus prom-client's process and Node.js metrics.
//
// Labels stay bounded: operation_type is query/mutation/subscription/none and
// root_field a field of the schema (or "multiple"/"none"), never a client-chosen name.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryMetrics } from '../notify/worker.ts';
import type { RequestState } from './request-state.ts';
import type { Observe } from '../timed.ts';

// The observer type and the wrapper live below the edge (src/timed.ts); kept importable from here.
export { timed, type Observe } from '../timed.ts';

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const IO_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export interface GatewayMetrics {
  registry: Registry;
  contentType: string;
  render(): Promise<string>;
  requestStarted(): void;
  requestFinished(state: RequestState, status: number): void;
  storeObserver(backend: string): Observe;
  redisObserver(component: string): Observe;
  /** Counts one command sent to MongoDB (the store's command monitoring). */
  mongoCommand(command: string): void;
  /** A state document the store's repair loop caught up (src/store/mongo.ts). */
  stateRepaired(aggregateType: string): void;
  /** How far long work is (src/progress.ts): an old log's import, the search backfill. */
  longWork(work: string, done: number, share: number): void;
  rateLimited(scope: 'caller' | 'ip'): void;
  rateLimiterUnavailable(): void;
  idempotency(outcome: string): void;
  bodyRefused(reason: 'unauthenticated' | 'too_large' | 'client_budget' | 'process_budget'): void;
  /** Exposes the request-body bytes in flight (read at each scrape). */
  watchBodyBytes(read: () => number): void;
  /** Exposes a delivery counters object (read at each scrape). */
  watchDelivery(delivery: DeliveryMetrics): void;
  /** A connection closed as it came (connections.ts). */
  connectionRefused(reason: 'limit' | 'blocked'): void;
  /** A connection or HTTP/2 stream the gateway cut (output-guard.ts, http2-sessions.ts, connections.ts). */
  cut(reason: 'write_timeout' | 'unsent_cap' | 'request_timeout' | 'idle_session' | 'resets' | 'evicted'): void;
  /** Exposes the open connections and the unsent answer bytes (read at each scrape). */
  watchConnections(read: { open: () => number; unsentBytes: () => number }): void;
  metricsRefused(): void;
  /** One call to the upstream API (upstream mode, src/upstream): its method, the gRPC code name it ended with, its time. */
  upstreamCall(method: string, code: string, seconds: number): void;
}

/** What the edge refuses and cuts: bodies, connections, streams, scrapes; and what it holds (read at each scrape). */
function edgeMetrics(
  registry: Registry,
): Pick<GatewayMetrics, 'bodyRefused' | 'watchBodyBytes' | 'connectionRefused' | 'cut' | 'watchConnections' | 'metricsRefused'> {
  const bodyRefused = new Counter({
    name: 'gateway_http_body_refused_total',
    help: "Requests refused before or while their body was read: too big without a valid token (401), over the cap (413), over the client's (429) or the process's (503) body budget.",
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  let bodyBytes = () => 0;
  new Gauge({
    name: 'gateway_http_body_bytes_in_flight',
    help: 'Request-body bytes reserved by requests in flight (Content-Length, or the cap of a body of unknown length).',
    registers: [registry],
    collect() {
      this.set(bodyBytes());
    },
  });

  const connectionsRefused = new Counter({
    name: 'gateway_http_connections_refused_total',
    help: 'Connections closed as they came: over HTTP_MAX_CONNECTIONS with none idle to make room for them (limit), or from an address refused for its HTTP/2 resets (blocked).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const cuts = new Counter({
    name: 'gateway_http_cut_total',
    help: 'Connections and HTTP/2 streams the gateway cut: an answer its peer does not read (write_timeout, unsent_cap), a request that did not arrive in time (request_timeout), an idle HTTP/2 session (idle_session), an address resetting too many streams (resets), an idle connection closed to make room (evicted).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  let connections = { open: () => 0, unsentBytes: () => 0 };
  new Gauge({
    name: 'gateway_http_connections_open',
    help: 'Open client connections on the main port.',
    registers: [registry],
    collect() {
      this.set(connections.open());
    },
  });
  new Gauge({
    name: 'gateway_http_unsent_bytes',
    help: 'Answer bytes queued for peers that have not taken them yet.',
    registers: [registry],
    collect() {
      this.set(connections.unsentBytes());
    },
  });
  const metricsRefused = new Counter({
    name: 'gateway_metrics_refused_total',
    help: 'GET /metrics on the main port refused over its per-address limit (429).',
    registers: [registry],
  });

  return {
    bodyRefused: (reason) => bodyRefused.inc({ reason }),
    watchBodyBytes: (read) => void (bodyBytes = read),
    connectionRefused: (reason) => connectionsRefused.inc({ reason }),
    cut: (reason) => cuts.inc({ reason }),
    watchConnections: (read) => void (connections = read),
    metricsRefused: () => metricsRefused.inc(),
  };
}

/** The delivery counters of this process's queues and workers, summed at each scrape. */
function deliveryMetrics(registry: Registry): Pick<GatewayMetrics, 'watchDelivery'> {
  const deliveries: DeliveryMetrics[] = [];
  const deliveryCounter = (name: string, help: string, field: keyof DeliveryMetrics) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(deliveries.reduce((sum, d) => sum + d[field], 0));
      },
    });
  deliveryCounter('gateway_delivery_queued_total', 'Delivery jobs queued by this process.', 'queued');
  deliveryCounter(
    'gateway_delivery_enqueue_failed_total',
    'Delivery jobs that could not be queued (their mutation still succeeded).',
    'enqueueFailed',
  );
  deliveryCounter('gateway_delivery_sent_total', "Mails and SMS sent by this process's workers.", 'sent');
  deliveryCounter('gateway_delivery_retried_total', 'Failed sends scheduled for another try.', 'retried');
  deliveryCounter('gateway_delivery_dead_lettered_total', 'Jobs given up after their last try.', 'deadLettered');

  return { watchDelivery: (d) => void deliveries.push(d) };
}

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'Requests answered (GraphQL and the wire API), by protocol, operation type, root field (wire: service/method) and HTTP status.',
    labelNames: ['protocol', 'operation_type', 'root_field', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from the request arriving to the answer being sent.',
    labelNames: ['protocol', 'operation_type', 'root_field'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'Errors in answers, by error code (docs/graphql.md, Errors).',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const inFlight = new Gauge({ name: 'gateway_http_requests_in_flight', help: 'Requests being handled.', registers: [registry] });
  const store = new Histogram({
    name: 'gateway_store_duration_seconds',
    help: 'Event store calls.',
    labelNames: ['backend', 'operation', 'outcome'] as const,
    buckets: IO_BUCKETS,
    registers: [registry],
  });
  const redis = new Histogram({
    name: 'gateway_redis_duration_seconds',
    help: 'Redis calls of the verification codes, rate limits and idempotency keys.',
    labelNames: ['component', 'operation', 'outcome'] as const,
    buckets: IO_BUCKETS,
    registers: [registry],
  });
  const mongoCommands = new Counter({
    name: 'gateway_mongodb_commands_total',
    help: 'Commands sent to MongoDB by the event store, by command name (docs/performance.md: the round-trip budget).',
    labelNames: ['command'] as const,
    registers: [registry],
  });
  const repaired = new Counter({
    name: 'gateway_store_repaired_total',
    help: 'State documents the background repair loop caught up with their events (left behind by a crash between the two writes of an append).',
    labelNames: ['aggregate_type'] as const,
    registers: [registry],
  });
  const workDone = new Gauge({
    name: 'gateway_long_work_done',
    help: 'Items done by long work (log_import: events; user_search_backfill: users), as last reported (PROGRESS_INTERVAL_MS).',
    labelNames: ['work'] as const,
    registers: [registry],
  });
  const workRatio = new Gauge({
    name: 'gateway_long_work_ratio',
    help: 'Share of long work done, 0 to 1 (1 once it has finished), as last reported.',
    labelNames: ['work'] as const,
    registers: [registry],
  });
  const limited = new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Requests answered 429.',
    labelNames: ['scope'] as const,
    registers: [registry],
  });
  const limiterDown = new Counter({
    name: 'gateway_rate_limiter_unavailable_total',
    help: 'Requests let through unlimited because the rate limiter could not be reached.',
    registers: [registry],
  });
  const idem = new Counter({
    name: 'gateway_idempotency_total',
    help: 'Mutations sent with an Idempotency-Key, by outcome (stored, replayed, conflict, in_progress, not_stored).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  const upstream = new Histogram({
    name: 'gateway_upstream_duration_seconds',
    help: 'Calls to the upstream API in upstream mode (ZITADEL_URL), by method and gRPC code name (OK for an answer).',
    labelNames: ['method', 'code'] as const,
    buckets: IO_BUCKETS,
    registers: [registry],
  });

  const edge = edgeMetrics(registry);
  const delivery = deliveryMetrics(registry);

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    requestStarted: () => inFlight.inc(),
    requestFinished(state, status) {
      inFlight.dec();
      const labels = { protocol: state.protocol, operation_type: state.operationType ?? 'none', root_field: state.rootField ?? 'none' };
      requests.inc({ ...labels, status: String(status) });
      duration.observe(labels, Number(process.hrtime.bigint() - state.startedAt) / 1e9);
      for (const code of state.errorCodes) errors.inc({ code });
    },
    storeObserver: (backend) => (operation, seconds, ok) => store.observe({ backend, operation, outcome: ok ? 'ok' : 'error' }, seconds),
    redisObserver: (component) => (operation, seconds, ok) =>
      redis.observe({ component, operation, outcome: ok ? 'ok' : 'error' }, seconds),
    mongoCommand: (command) => mongoCommands.inc({ command }),
    stateRepaired: (aggregateType) => repaired.inc({ aggregate_type: aggregateType }),
    longWork: (work, done, share) => {
      workDone.set({ work }, done);
      workRatio.set({ work }, share);
    },
    rateLimited: (scope) => limited.inc({ scope }),
    rateLimiterUnavailable: () => limiterDown.inc(),
    idempotency: (outcome) => idem.inc({ outcome }),
    upstreamCall: (method, code, seconds) => upstream.observe({ method, code }, seconds),
    ...edge,
    ...delivery,
  };
}
