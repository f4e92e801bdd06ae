// GET /metrics, for the cluster's scraper and no one else. Without a token (Prometheus scrapes
// without one), so it is bounded: one render at a time, shared by every request that asks while
// it runs, and either
// - on its own port (METRICS_PORT, on METRICS_HOST, 127.0.0.1 by default), where it is all that
//   is served, to at most 32 connections at once, and no longer on the main port; or
// - on the main port (METRICS_PORT unset), at most METRICS_RATE_LIMIT_PER_IP_PER_MINUTE times a
//   minute per client address (probes.ts), like every other answer there under the output guard.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './health.ts';
import type { GatewayMetrics } from './metrics.ts';

/** Connections the metrics port takes at once: a few scrapers, each with one or two. */
const METRICS_MAX_CONNECTIONS = 32;

/** Writes the metrics; concurrent calls share one render. */
export function metricsResponder(metrics: GatewayMetrics): (res: ServerResponse) => Promise<void> {
  let rendering: Promise<string> | undefined;
  return async (res) => {
    rendering ??= metrics.render().finally(() => (rendering = undefined));
    const text = await rendering;
    res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
}

export interface MetricsPortOptions {
  host: string;
  port: number;
  respond: (res: ServerResponse) => Promise<void>;
  requestTimeoutMs: number;
  /** Every response first (output-guard.ts). */
  watch: (req: IncomingMessage, res: ServerResponse) => void;
}

export async function listenMetrics(options: MetricsPortOptions): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const { host, port, respond, requestTimeoutMs, watch } = options;
  const server = createServer({ requestTimeout: requestTimeoutMs, headersTimeout: Math.min(requestTimeoutMs, 60_000) }, (req, res) => {
    watch(req, res);
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return sendJson(res, 404, { error: 'not found: this port serves GET /metrics only' });
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
    respond(res).catch(() => (res.headersSent ? res.destroy() : sendJson(res, 500, { error: 'internal' })));
  });
  server.maxConnections = METRICS_MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `http://${shown}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
