// The gateway's one port, opened for the edge's handler: HTTP/1.1 and h2c (TLS with a
// certificate) through one listener (one-port.ts), every answer under the output guard
// (output-guard.ts), connections under the connection cap (connections.ts), HTTP/2 sessions
// under their limits (http2-sessions.ts), and node's request and header timeouts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { connectionKey, createConnectionGuard, defaultMaxConnections } from './connections.ts';
import { destroyedByServer, guardHttp2Sessions } from './http2-sessions.ts';
import type { GatewayMetrics } from './metrics.ts';
import { createOnePortServer } from './one-port.ts';
import type { OutputGuard } from './output-guard.ts';

export interface PortOptions {
  config: Config;
  logger: Logger;
  metrics: GatewayMetrics;
  output: OutputGuard;
  /** The edge's node handler. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface OpenPort {
  /** The HTTP/1.1 server: the edge drains it. */
  server: Server;
  /** The port bound (PORT=0 picks a free one). */
  port: number;
  /** Closes the listener (HTTP/2 sessions told to go away); `cut` ends the HTTP/2 sessions left. */
  stop(): { closed: Promise<void>; cut: () => void };
}

/**
 * The edge writes `Connection: close` while draining and on refused oversized bodies, and
 * yoga passes a status message: HTTP/2 has neither (node throws on connection headers and
 * warns on status messages), so over HTTP/2 they are left out.
 */
function forHttp2(res: Http2ServerResponse): Http2ServerResponse {
  const setHeader = res.setHeader.bind(res);
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Http2ServerResponse;
  res.setHeader = ((name: string, value: unknown) =>
    name.toLowerCase() === 'connection' ? res : setHeader(name, value as string)) as typeof res.setHeader;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const args = rest
      .filter((a) => typeof a !== 'string')
      .map((a) =>
        a && typeof a === 'object' && !Array.isArray(a)
          ? Object.fromEntries(Object.entries(a).filter(([k]) => k.toLowerCase() !== 'connection'))
          : a,
      );
    return writeHead(status, ...args);
  }) as typeof res.writeHead;
  return res;
}

export async function openPort(options: PortOptions): Promise<OpenPort> {
  const { config, logger, metrics, output, handler } = options;
  const limits = config.http;
  const connections = createConnectionGuard({
    maxConnections: limits.maxConnections ?? defaultMaxConnections(),
    onRefused: metrics.connectionRefused,
    onEvicted: () => metrics.cut('evicted'),
  });
  metrics.watchConnections({ open: () => connections.open, unsentBytes: () => output.unsentBytes });
  // Every answer under the output guard; HTTP/1.1 requests mark their connection busy (HTTP/2: http2-sessions.ts).
  const http1Handler = (req: IncomingMessage, res: ServerResponse) => {
    output.watch(req, res);
    const key = connectionKey(req.socket);
    connections.busy(key);
    res.once('close', () => connections.done(key));
    handler(req, res);
  };
  const http2Handler = (req: IncomingMessage, res: Http2ServerResponse) => {
    // node hands over a stream a tick after its headers: one its peer has reset since (a
    // "rapid reset") has nothing left to answer, and costs no token check nor rate-limit call.
    if (res.stream.destroyed || res.stream.aborted) return;
    output.watch(req, res as unknown as ServerResponse);
    const destroy = res.destroy.bind(res);
    res.destroy = ((err?: Error) => (destroyedByServer(res.stream), destroy(err))) as typeof res.destroy;
    handler(req, forHttp2(res) as unknown as ServerResponse);
  };
  // node's defaults: 300 s for a request, checked every 30 s; headers within 60 s.
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(60_000, limits.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(limits.requestTimeoutMs / 4))),
    },
    http1Handler,
  );
  // Expect: 100-continue goes to the edge too, which asks for the body only once it is admitted.
  server.on('checkContinue', http1Handler);
  // node's default allows 2^32-1 concurrent streams per session.
  const h2 = createHttp2Server({ settings: { maxConcurrentStreams: limits.http2MaxConcurrentStreams } }, http2Handler as never);
  h2.on('checkContinue', http2Handler as never);
  guardHttp2Sessions(h2, {
    requestTimeoutMs: limits.requestTimeoutMs,
    idleTimeoutMs: limits.http2IdleTimeoutMs,
    resetsPerClientPerMinute: limits.http2ResetsPerClientPerMinute,
    resetBlockMs: limits.http2ResetBlockMs,
    connections,
    logger,
    onCut: metrics.cut,
  });
  const sessions = new Set<Http2Session>();
  h2.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const port = createOnePortServer(server, h2, config.tls, (socket) => connections.admit(socket));
  await new Promise<void>((resolve, reject) => {
    port.once('error', reject);
    port.listen(config.port, config.host, () => resolve());
  });
  // The http server never listens itself: 'listening' starts its connection tracking, which
  // enforces headersTimeout / requestTimeout and lets the drain close idle and open connections.
  server.emit('listening');
  return {
    server,
    port: (port.address() as AddressInfo).port,
    stop() {
      const closed = new Promise<void>((resolve) => (port as NetServer).close(() => resolve()));
      // HTTP/2: GOAWAY; the streams in flight finish (the edge's drain waits for them).
      for (const session of sessions) session.close();
      return { closed, cut: () => sessions.forEach((session) => session.destroy()) };
    },
  };
}
