// The node:http handler in front of yoga: /health, /ready and /metrics; a request id
// (the client's X-Request-Id when harmless, else a new UUID) sent back in
// x-request-id and handed to yoga as server context (request-state.ts); the client address; in-flight counting and the per-request log line and
// metrics; and the graceful drain on shutdown.
//
// Before yoga reads a body: the bearer token is checked (once: yoga's plugins reuse
// the result), a body too big for the caller is refused (401 without a valid token
// over UNAUTHENTICATED_BODY_BYTES, body-limit.ts), and the body's bytes are reserved
// in the client's and the process's budget (body-budget.ts; 429 / 503 when full).
// A refused body is never held: node reads and drops it, so the client sees the
// answer; when it is larger than any legal body (or of unknown length) the
// connection is closed instead.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TokenVerifier } from '../auth/tokens.ts';
import { AppError, errorCodes } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { BodyBudget } from './body-budget.ts';
import { bodyNeedsToken, UNAUTHENTICATED_BODY_BYTES } from './body-limit.ts';
import { readiness, sendJson, type ReadinessCheck } from './health.ts';
import { logRequest } from './logging.ts';
import type { GatewayMetrics } from './metrics.ts';
import { authenticate } from './rate-limit.ts';
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

/** The body's size as the headers give it: Content-Length, Infinity when unknown (chunked), 0 without a body. */
function declaredBodyBytes(req: IncomingMessage): number {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length); // node's parser accepts only digits here
  return req.headers['transfer-encoding'] ? Infinity : 0;
}

export function createEdge(options: EdgeOptions): Edge {
  const { app, logger, metrics, trustProxy, readinessChecks, tokens, maxBodyBytes, budget } = options;
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
    const text = await metrics.render();
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
    res.end(text);
  }

  /** The token first, then the body's size against the caller's cap and the budgets: a release function, or null when refused. */
  async function admit(req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<(() => void) | null> {
    await authenticate(state, req.headers.authorization ?? null, tokens);
    const declared = declaredBodyBytes(req);
    const cap = state.caller ? maxBodyBytes : UNAUTHENTICATED_BODY_BYTES;
    const refuse = (error: AppError, reason: Parameters<GatewayMetrics['bodyRefused']>[0], headers: Record<string, string> = {}) => {
      state.errorCodes.push(error.code);
      metrics.bodyRefused(reason);
      const body = { errors: [{ message: error.message, extensions: { code: error.code, grpcCode: errorCodes[error.code].grpcCode, details: error.details } }] };
      sendJson(res, errorCodes[error.code].status, body, declared > maxBodyBytes ? { ...headers, connection: 'close' } : headers);
      return null;
    };
    // (Over the cap with a valid token: yoga answers 413 from the Content-Length, reading nothing.)
    if (!state.caller && declared > cap && declared !== Infinity) return refuse(bodyNeedsToken(state), 'unauthenticated');
    const release = budget.reserve(state.ip, Math.min(declared, cap));
    if (typeof release === 'function') return release;
    // Reservations last one request; a second is a fair guess at when one has ended.
    const retry = { 'retry-after': '1' };
    const retryInfo = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }];
    return release === 'client'
      ? refuse(new AppError('RESOURCE_EXHAUSTED', 'Too many request-body bytes in flight from this client address; retry after 1 s.', retryInfo), 'client_budget', retry)
      : refuse(new AppError('UNAVAILABLE', 'The gateway is receiving too many request bodies; retry after 1 s.', retryInfo), 'process_budget', retry);
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
      admit(req, res, state).then(
        (admitted) => {
          if (!admitted) return;
          // The connection closed while the token was checked: nothing more to do.
          if (finished) return admitted();
          release = admitted;
          // With a 'checkContinue' listener node leaves "100 Continue" to us: only an admitted body is asked for.
          if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
          app(req, res, { requestState: state });
        },
        (err: unknown) => {
          logger.log('error', 'request admission failed', { requestId: state.requestId, error: String((err as Error)?.message ?? err) });
          if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL', grpcCode: errorCodes.INTERNAL.grpcCode, details: [] } }] });
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
