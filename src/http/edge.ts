// The node handler in front of yoga and the wire API: /health, /ready and /metrics; a
// request id (the client's X-Request-Id when harmless, else a new UUID) sent back in
// x-request-id and handed on in the request's state (request-state.ts); the client address;
// CORS for the wire's paths; in-flight counting, the per-request log line and metrics; and
// the graceful drain on shutdown.
//
// Before yoga or the wire API reads a body: the bearer token is checked (once: the readers
// reuse the result), the per-caller / per-address rate limit applied (rate-limit.ts; a stream
// that carries several requests counts the others through RequestState.countAnother), a body
// too big for the caller refused (401 without a valid token over UNAUTHENTICATED_BODY_BYTES,
// body-limit.ts), and the body's bytes reserved in the client's and the process's budget
// (body-budget.ts; 429 / 503 when full). A body of unknown length (chunked; HTTP/2 without
// Content-Length, as every gRPC call) is metered instead: its readers pass each chunk through
// RequestState.meter, which reserves as bytes arrive and cuts the body when a budget is full.
// Refusals are written in the shape of the path's API (writeRefusal: GraphQL's by default,
// the wire's from src/wire). A refused body is never held: node reads and drops it, so the
// client sees the answer; when it is larger than any legal body (or of unknown length) the
// connection is closed instead.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TokenVerifier } from '../auth/tokens.ts';
import { AppError, errorCodes } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { BodyBudget, BudgetFull } from './body-budget.ts';
import { bodyNeedsToken, bodyTooLarge, UNAUTHENTICATED_BODY_BYTES } from './body-limit.ts';
import { readiness, sendJson, type ReadinessCheck } from './health.ts';
import { logRequest } from './logging.ts';
import type { GatewayMetrics } from './metrics.ts';
import { authenticate } from './authentication.ts';
import type { Refusal } from './rate-limit.ts';
import { clientIp, newRequestState, type EdgeContext, type RequestState } from './request-state.ts';

export interface EdgeOptions {
  /** yoga as a node request listener. */
  app: (req: IncomingMessage, res: ServerResponse, context: EdgeContext) => unknown;
  logger: Logger;
  metrics: GatewayMetrics;
  trustProxy: boolean | number;
  readinessChecks: ReadinessCheck[];
  tokens: TokenVerifier;
  /** The body cap for a caller with a valid token (body-limit.ts). */
  maxBodyBytes: number;
  budget: BodyBudget;
  /** The per-caller / per-address request limit (rate-limit.ts). */
  rateLimit?: (state: RequestState) => Promise<Refusal | null>;
  /** The request's protocol for logs and metrics (RequestState.protocol); default: graphql. */
  protocolOf?: (req: IncomingMessage, path: string) => string;
  /** CORS for the paths yoga does not serve (cors.ts applyCors): true when it answered a preflight. */
  cors?: (req: IncomingMessage, res: ServerResponse, path: string, state: RequestState) => boolean;
  /** GET /metrics (metrics-port.ts metricsResponder); unset: 404 here (METRICS_PORT serves it). */
  serveMetrics?: (res: ServerResponse) => Promise<void>;
  /** GET /metrics per client address: seconds to wait when over the limit, else null. */
  metricsLimit?: (ip: string) => number | null;
  /** Writes a refusal in the shape of the path's API; default: GraphQL's. */
  writeRefusal?: (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    error: AppError,
    headers: Record<string, string>,
    state: RequestState,
  ) => void;
}

/** A refusal as GraphQL answers errors: `{ errors: [{ message, extensions }] }` with the code's HTTP status. */
export function writeGraphQLRefusal(
  _req: IncomingMessage,
  res: ServerResponse,
  _path: string,
  error: AppError,
  headers: Record<string, string>,
): void {
  const body = {
    errors: [
      { message: error.message, extensions: { code: error.code, grpcCode: errorCodes[error.code].grpcCode, details: error.details } },
    ],
  };
  sendJson(res, error.httpStatus ?? errorCodes[error.code].status, body, headers);
}

export interface Edge {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly inFlight: number;
  readonly draining: boolean;
  /**
   * Stops accepting connections, lets in-flight requests finish (closing each
   * keep-alive connection as its answer goes out) and cuts what is left at the
   * deadline. True when nothing had to be cut.
   */
  drain(server: Server, deadlineMs: number): Promise<boolean>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The body's size as the headers give it: Content-Length; Infinity when unknown (chunked
 * HTTP/1.1, or HTTP/2 without Content-Length, as every gRPC call); 0 without a body.
 */
function declaredBodyBytes(req: IncomingMessage): number {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length); // node's parsers accept only digits here
  const stream = (req as unknown as { stream?: { endAfterHeaders?: boolean } }).stream;
  if (stream) return stream.endAfterHeaders ? 0 : Infinity;
  return req.headers['transfer-encoding'] ? Infinity : 0;
}

export function createEdge(options: EdgeOptions): Edge {
  const {
    app,
    logger,
    metrics,
    trustProxy,
    readinessChecks,
    tokens,
    maxBodyBytes,
    budget,
    rateLimit,
    cors,
    protocolOf,
    serveMetrics,
    metricsLimit,
    writeRefusal = writeGraphQLRefusal,
  } = options;
  const open = new Set<ServerResponse>();
  let draining = false;
  let server: Server | undefined;

  async function ops(path: string, req: IncomingMessage, res: ServerResponse) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
    if (path === '/health') return sendJson(res, 200, { status: 'ok' });
    if (path === '/ready') {
      const { ready, checks } = await readiness(readinessChecks, draining);
      return sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', checks });
    }
    if (!serveMetrics) return sendJson(res, 404, { error: 'not found: GET /metrics is served on METRICS_PORT' });
    const wait = metricsLimit?.(clientIp(req, trustProxy)) ?? null;
    if (wait !== null) {
      metrics.metricsRefused();
      return sendJson(
        res,
        429,
        { error: `too many requests for /metrics from this address; retry after ${wait} s` },
        { 'retry-after': String(wait) },
      );
    }
    return serveMetrics(res);
  }

  const budgetFull = (full: BudgetFull): Refusal => {
    const retryInfo = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }];
    metrics.bodyRefused(full === 'client' ? 'client_budget' : 'process_budget');
    // Reservations last one request; a second is a fair guess at when one has ended.
    const headers = { 'retry-after': '1' };
    return full === 'client'
      ? {
          error: new AppError(
            'RESOURCE_EXHAUSTED',
            'Too many request-body bytes in flight from this client address; retry after 1 s.',
            retryInfo,
          ),
          headers,
        }
      : { error: new AppError('UNAVAILABLE', 'The gateway is receiving too many request bodies; retry after 1 s.', retryInfo), headers };
  };

  /**
   * For a body of unknown length: each chunk reserved in the budgets as it arrives, and the
   * body cut at the caller's cap (the small one without a valid token).
   */
  function bodyMeter(
    state: RequestState,
    cap: number,
  ): { meter: (bytes: number) => AppError | null; release: () => void; readonly refused: boolean } {
    const releases: (() => void)[] = [];
    let seen = 0;
    let refused: AppError | null = null;
    return {
      get refused() {
        return refused !== null;
      },
      release: () => releases.forEach((r) => r()),
      meter(bytes) {
        if (refused) return refused;
        const reserved = Math.min(seen, cap);
        seen += bytes;
        if (seen > cap) {
          metrics.bodyRefused(state.caller ? 'too_large' : 'unauthenticated');
          return (refused = state.caller ? bodyTooLarge(cap) : bodyNeedsToken(state));
        }
        const more = Math.min(seen, cap) - reserved;
        if (more <= 0) return null;
        const release = budget.reserve(state.ip, more);
        if (typeof release === 'function') releases.push(release);
        else refused = budgetFull(release).error;
        return refused;
      },
    };
  }

  /**
   * The token, the rate limit, then the body's size against the caller's cap and the budgets,
   * all before the body is read: a release function, or null when refused (answered here).
   */
  async function admit(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    state: RequestState,
  ): Promise<{ release: () => void; meterRefused?: () => boolean } | null> {
    await authenticate(state, req.headers.authorization ?? null, tokens);
    const declared = declaredBodyBytes(req);
    const refuse = ({ error, headers }: Refusal) => {
      state.errorCodes.push(error.code);
      // A refused body is not read: a big one would keep the connection busy, so it is closed after the answer.
      if (declared > maxBodyBytes) res.setHeader('connection', 'close');
      writeRefusal(req, res, path, error, headers, state);
      return null;
    };
    if (req.method !== 'OPTIONS' && rateLimit) {
      const limited = await rateLimit(state);
      if (limited) return refuse(limited);
      state.countAnother = async () => (await rateLimit(state))?.error ?? null;
    }
    const cap = state.caller ? maxBodyBytes : UNAUTHENTICATED_BODY_BYTES;
    if (declared === Infinity) {
      const metered = bodyMeter(state, cap);
      state.meter = metered.meter;
      return { release: metered.release, meterRefused: () => metered.refused };
    }
    if (declared > cap) {
      metrics.bodyRefused(state.caller ? 'too_large' : 'unauthenticated');
      return refuse({ error: state.caller ? bodyTooLarge(cap) : bodyNeedsToken(state), headers: {} });
    }
    const release = budget.reserve(state.ip, Math.min(declared, cap));
    return typeof release === 'function' ? { release } : refuse(budgetFull(release));
  }

  return {
    get inFlight() {
      return open.size;
    },
    get draining() {
      return draining;
    },

    handler(req, res) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path === '/health' || path === '/ready' || path === '/metrics') {
        ops(path, req, res).catch(() => {
          if (!res.headersSent) sendJson(res, 500, { error: 'internal' });
          else res.destroy();
        });
        return;
      }
      const header = req.headers['x-request-id'];
      const state = newRequestState(Array.isArray(header) ? header[0] : header, clientIp(req, trustProxy));
      if (protocolOf) state.protocol = protocolOf(req, path);
      res.setHeader('x-request-id', state.requestId);
      res.setHeader('vary', 'Origin');
      if (draining) res.setHeader('connection', 'close');
      open.add(res);
      metrics.requestStarted();
      let finished = false;
      let release: (() => void) | null = null;
      const finish = () => {
        if (finished) return;
        finished = true;
        release?.();
        open.delete(res);
        metrics.requestFinished(state, res.statusCode);
        logRequest(logger, state, { method: req.method ?? 'GET', path, status: res.statusCode });
        if (draining) server?.closeIdleConnections();
      };
      res.once('finish', finish);
      res.once('close', finish);
      if (cors?.(req, res, path, state)) return;
      admit(req, res, path, state).then(
        (admitted) => {
          if (!admitted) return;
          // The connection closed while the token was checked: nothing more to do.
          if (finished) return admitted.release();
          release = admitted.release;
          // HTTP/2 emits 'finish' on the response only when the stream closes, which a client
          // can put off after the answer; the body's bytes are let go once the answer is written.
          (res as unknown as { stream?: NodeJS.EventEmitter }).stream?.once('finish', admitted.release);
          if (state.meter) {
            const meter = state.meter;
            state.meter = (bytes) => {
              const refused = meter(bytes);
              // The rest of a refused HTTP/1.1 body is not read: the connection ends with the answer.
              // (HTTP/2: the stream is no longer read, so flow control stops the client.)
              if (refused && !res.headersSent) res.setHeader('connection', 'close');
              return refused;
            };
          }
          // With a 'checkContinue' listener node leaves "100 Continue" to us: only an admitted body is asked for.
          if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
          app(req, res, { requestState: state });
        },
        (err: unknown) => {
          logger.log('error', 'request admission failed', { requestId: state.requestId, error: String((err as Error)?.message ?? err) });
          if (!res.headersSent)
            sendJson(res, 500, {
              errors: [
                { message: 'Unexpected error.', extensions: { code: 'INTERNAL', grpcCode: errorCodes.INTERNAL.grpcCode, details: [] } },
              ],
            });
          else res.destroy();
        },
      );
    },

    async drain(s, deadlineMs) {
      server = s;
      draining = true;
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      // Answers not started yet go out with Connection: close, so their sockets end with them.
      for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
      s.closeIdleConnections();
      const deadline = Date.now() + deadlineMs;
      // An answer fully written is done, even when an HTTP/2 client keeps its half of the stream
      // open (no 'finish' comes then): the connections are closed below anyway.
      const unanswered = () => [...open].filter((res) => !res.writableEnded).length;
      while (unanswered() > 0 && Date.now() < deadline) await sleep(20);
      const clean = unanswered() === 0;
      if (!clean) logger.log('warn', 'shutdown deadline reached: cutting requests still in flight', { inFlight: unanswered() });
      s.closeIdleConnections();
      await Promise.race([closed, sleep(clean ? 200 : 0)]);
      s.closeAllConnections();
      await closed;
      return clean;
    },
  };
}
