// The paths the edge answers itself, for operators: GET /health (liveness), GET /ready
// (readiness: health.ts) and GET /metrics (unless METRICS_PORT serves it on a port of its own),
// the last one limited per client address.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readiness, sendJson, type ReadinessCheck } from './health.ts';
import type { GatewayMetrics } from './metrics.ts';
import { clientIp } from './request-state.ts';

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', '/metrics']);

export interface ProbeOptions {
  metrics: GatewayMetrics;
  trustProxy: boolean | number;
  readinessChecks: ReadinessCheck[];
  /** True while the gateway drains (/ready answers 503). */
  draining: () => boolean;
  /** GET /metrics (metrics-port.ts metricsResponder); unset: 404 here (METRICS_PORT serves it). */
  serveMetrics?: (res: ServerResponse) => Promise<void>;
  /** GET /metrics per client address: seconds to wait when over the limit, else null. */
  metricsLimit?: (ip: string) => number | null;
}

export function createProbes(options: ProbeOptions): (path: string, req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { metrics, trustProxy, readinessChecks, draining, serveMetrics, metricsLimit } = options;
  return async (path, req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
    if (path === '/health') return sendJson(res, 200, { status: 'ok' });
    if (path === '/ready') {
      const { ready, checks } = await readiness(readinessChecks, draining());
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
  };
}
