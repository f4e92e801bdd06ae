// The node handler in front of the faces (GraphQL, the wire API): /health, /ready and
// /metrics (probes.ts); a request id (the client's X-Request-Id when harmless, else a new UUID)
// sent back in x-request-id and handed on in the request's state (request-state.ts); the
// client address; the face that serves the path (face.ts), which names the protocol; CORS for
// the faces that leave it to the edge; in-flight counting, the per-request log line and
// metrics; and the graceful drain on shutdown.
//
// Before a face reads a body, the request is admitted (admission.ts: token, rate limit, the
// body against the caller's cap and the budgets). Refusals are written by the path's face, in
// its shape. A refused body is never held: node reads and drops it, so the client sees the
// answer; when it is larger than any legal body (or of unknown length) the connection is
// closed instead.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Admission, Refused } from './admission.ts';
import { applyCors } from './cors.ts';
import type { Face } from './face.ts';
import { sendJson } from './health.ts';
import { logRequest } from './logging.ts';
import type { GatewayMetrics } from './metrics.ts';
import { clientIp, newRequestState, type RequestState } from './request-state.ts';
import { runInSpan, startRequestSpan, type RequestSpan } from './request-span.ts';

export interface EdgeOptions {
  /** The face that serves a path (face.ts faceOf). */
  faceOf: (path: string) => Face;
  /** GET /health, /ready and /metrics (probes.ts): the paths and their handler. */
  probes: { paths: ReadonlySet<string>; answer: (path: string, req: IncomingMessage, res: ServerResponse) => Promise<void> };
  admit: Admission;
  logger: Logger;
  metrics: GatewayMetrics;
  trustProxy: boolean | number;
  /** The body cap for a caller with a valid token: a refused body over it is not read (the connection closes). */
  maxBodyBytes: number;
  /** CORS_ORIGINS, for the faces whose CORS the edge does. */
  corsOrigins: readonly string[];
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

const UNEXPECTED = new AppError('INTERNAL', 'Unexpected error.');

export function createEdge(options: EdgeOptions): Edge {
  const { faceOf, probes, admit, logger, metrics, trustProxy, maxBodyBytes, corsOrigins } = options;
  const open = new Set<ServerResponse>();
  let draining = false;
  let server: Server | undefined;

  /** The edge's refusal, in the face's shape; a refused body larger than any legal one is not read. */
  const refuse = (face: Face, req: IncomingMessage, res: ServerResponse, path: string, state: RequestState, refused: Refused) => {
    const { error, headers } = refused.refusal;
    state.errorCodes.push(error.code);
    if (refused.declaredBytes > maxBodyBytes) res.setHeader('connection', 'close');
    face.refuse(req, res, path, error, headers);
  };

  /** An admitted request: its body's bytes let go once the answer is written, then on to the face. */
  const serve = (face: Face, req: IncomingMessage, res: ServerResponse, state: RequestState, release: () => void) => {
    // HTTP/2 emits 'finish' on the response only when the stream closes, which a client
    // can put off after the answer; the body's bytes are let go once the answer is written.
    (res as unknown as { stream?: NodeJS.EventEmitter }).stream?.once('finish', release);
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
    face.handler(req, res, state);
  };

  /** In-flight counting, the log line and the metrics of one request: the function that ends them (once). */
  const track = (req: IncomingMessage, res: ServerResponse, path: string, state: RequestState, span: RequestSpan | null) => {
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
      span?.end(state, res.statusCode);
      logRequest(logger, state, { method: req.method ?? 'GET', path, status: res.statusCode });
      if (draining) server?.closeIdleConnections();
    };
    res.once('finish', finish);
    res.once('close', finish);
    return {
      get finished() {
        return finished;
      },
      holds: (r: () => void) => void (release = r),
    };
  };

  type Tracked = ReturnType<typeof track>;

  function handler(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (probes.paths.has(path)) {
      probes.answer(path, req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: 'internal' });
        else res.destroy();
      });
      return;
    }
    const header = req.headers['x-request-id'];
    const face = faceOf(path);
    const state = newRequestState(Array.isArray(header) ? header[0] : header, clientIp(req, trustProxy), face.protocolOf(req, path));
    res.setHeader('x-request-id', state.requestId);
    res.setHeader('vary', 'Origin');
    if (draining) res.setHeader('connection', 'close');
    // With tracing on, the request's server span; its work runs in the span's context.
    const span = startRequestSpan(req, path, state);
    const request = track(req, res, path, state, span);
    if (face.cors && applyCors(req, res, corsOrigins, face.cors)) return;
    runInSpan(span, () => admitAndServe(face, req, res, path, state, request));
  }

  /** Admission (token, limits, budgets), then the face; or the refusal, in the face's shape. */
  function admitAndServe(face: Face, req: IncomingMessage, res: ServerResponse, path: string, state: RequestState, request: Tracked) {
    admit(req, state).then(
      (admitted) => {
        if ('refusal' in admitted) return refuse(face, req, res, path, state, admitted);
        // The connection closed while the token was checked: nothing more to do.
        if (request.finished) return admitted.release();
        request.holds(admitted.release);
        serve(face, req, res, state, admitted.release);
      },
      (err: unknown) => {
        logger.log('error', 'request admission failed', { requestId: state.requestId, error: String((err as Error)?.message ?? err) });
        if (!res.headersSent) face.refuse(req, res, path, UNEXPECTED, {});
        else res.destroy();
      },
    );
  }

  return {
    handler,
    get inFlight() {
      return open.size;
    },
    get draining() {
      return draining;
    },
    drain(s, deadlineMs) {
      server = s;
      draining = true;
      return drainServer(s, open, deadlineMs, logger);
    },
  };
}

/**
 * Stops accepting connections on `s`, lets the answers in `open` finish (closing each
 * keep-alive connection as its answer goes out) and cuts what is left at the deadline.
 * True when nothing had to be cut.
 */
async function drainServer(s: Server, open: ReadonlySet<ServerResponse>, deadlineMs: number, logger: Logger): Promise<boolean> {
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
}
