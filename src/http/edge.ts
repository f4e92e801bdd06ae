// The node:http handler in front of yoga: /health, /ready and /metrics; a request id
// (the client's X-Request-Id when harmless, else a new UUID) sent back in
// x-request-id and handed to yoga as server context (request-state.ts); the client address; in-flight counting and the per-request log line and
// metrics; and the graceful drain on shutdown.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import { readiness, sendJson, type ReadinessCheck } from './health.ts';
import { logRequest } from './logging.ts';
import type { GatewayMetrics } from './metrics.ts';
import { clientIp, newRequestState, type EdgeContext } from './request-state.ts';

export interface EdgeOptions {
  /** yoga as a node request listener. */
  app: (req: IncomingMessage, res: ServerResponse, context: EdgeContext) => unknown;
  logger: Logger;
  metrics: GatewayMetrics;
  trustProxy: boolean | number;
  readinessChecks: ReadinessCheck[];
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

export function createEdge(options: EdgeOptions): Edge {
  const { app, logger, metrics, trustProxy, readinessChecks } = options;
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
      const finish = () => {
        if (finished) return;
        finished = true;
        open.delete(res);
        metrics.requestFinished(state, res.statusCode);
        logRequest(logger, state, { method: req.method ?? 'GET', path, status: res.statusCode });
        if (draining) server?.closeIdleConnections();
      };
      res.once('finish', finish);
      res.once('close', finish);
      app(req, res, { requestState: state });
    },

    async drain(s, deadlineMs) {
      server = s;
      draining = true;
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      // Answers not started yet go out with Connection: close, so their sockets end with them.
      for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
      s.closeIdleConnections();
      const deadline = Date.now() + deadlineMs;
      while (open.size > 0 && Date.now() < deadline) await sleep(20);
      const clean = open.size === 0;
      if (!clean) logger.log('warn', 'shutdown deadline reached: cutting requests still in flight', { inFlight: open.size });
      s.closeIdleConnections();
      await Promise.race([closed, sleep(clean ? 200 : 0)]);
      s.closeAllConnections();
      await closed;
      return clean;
    },
  };
}
