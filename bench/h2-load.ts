// A small HTTP/2 (h2c, prior knowledge) load generator for the gRPC scenarios, since autocannon
// speaks only HTTP/1.1. It mirrors how bench/run.ts drives autocannon: `connections` sessions,
// one stream at a time on each (autocannon's default pipelining of 1), for `duration` seconds.
// A request counts as a success when it answers :status 200 and grpc-status 0 (in the
// trailers, or in the headers of a trailers-only answer); a non-2xx :status counts as non-2xx,
// a 2xx with another or no grpc-status as an application error (the table's third failure
// number), a stream or session error or a request over `timeoutMs` as a connection error
// (not a request, as in autocannon; the session is then opened anew).
// Requests still in flight at the deadline are awaited (so the server's writes have ended
// when the caller reads back its state) but not counted, as autocannon does not count them.
import { connect, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { createHistogram } from 'node:perf_hooks';

export interface H2Request {
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

export interface H2LoadOptions {
  /** Origin of the server, e.g. http://127.0.0.1:4000. */
  origin: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** The n-th request (0, 1, 2, ...) of connection `connection` (0 .. connections - 1). */
  request(connection: number, n: number): H2Request;
  /** Per request, as autocannon's default of 10 s. */
  timeoutMs?: number;
}

/** The figures bench/run.ts reports for autocannon, in the same units (ms). */
export interface H2LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 2xx answers whose grpc-status is not 0 (or missing). */
  statusErrors: number;
  /** The first failure, to say why. */
  sample?: string;
}

type Outcome = { kind: 'ok' } | { kind: 'non2xx' | 'status' | 'error' | 'timeout'; why: string };

function send(session: ClientHttp2Session, req: H2Request, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    let status = 0;
    let headerStatus: string | undefined;
    let trailerStatus: string | undefined;
    let message: string | undefined;
    let stream: ReturnType<ClientHttp2Session['request']>;
    try {
      stream = session.request(req.headers);
    } catch (e) {
      return finish({ kind: 'error', why: String(e) });
    }
    const timer = setTimeout(() => {
      stream.close();
      finish({ kind: 'timeout', why: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    stream.on('response', (h) => {
      status = Number(h[':status']);
      if (h['grpc-status'] !== undefined) headerStatus = String(h['grpc-status']);
      if (h['grpc-message'] !== undefined) message = String(h['grpc-message']);
    });
    stream.on('trailers', (t) => {
      if (t['grpc-status'] !== undefined) trailerStatus = String(t['grpc-status']);
      if (t['grpc-message'] !== undefined) message = String(t['grpc-message']);
    });
    stream.on('data', () => {}); // the answer's message is not needed, only read
    stream.on('error', (e) => finish({ kind: 'error', why: String(e) }));
    stream.on('close', () => {
      const grpcStatus = trailerStatus ?? headerStatus;
      if (status === 0) finish({ kind: 'error', why: `stream closed without an answer (rst ${stream.rstCode})` });
      else if (status < 200 || status > 299)
        finish({ kind: 'non2xx', why: `HTTP ${status}${message ? `: ${decodeURIComponent(message)}` : ''}` });
      else if (grpcStatus !== '0')
        finish({ kind: 'status', why: `grpc-status ${grpcStatus ?? 'missing'}${message ? `: ${decodeURIComponent(message)}` : ''}` });
      else finish({ kind: 'ok' });
    });
    stream.end(req.body);
  });
}

function openSession(origin: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    const onError = (e: Error) => reject(e);
    session.once('error', onError);
    session.once('connect', () => {
      session.off('error', onError);
      session.on('error', () => {}); // reported through the streams
      resolve(session);
    });
  });
}

export async function h2Load(opts: H2LoadOptions): Promise<H2LoadResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const latencyUs = createHistogram();
  const result: H2LoadResult = { requests: 0, rps: 0, p50: 0, p99: 0, max: 0, non2xx: 0, errors: 0, timeouts: 0, statusErrors: 0 };
  const fail = (why: string) => (result.sample ??= why);
  const started = performance.now();
  const deadline = started + opts.duration * 1000;

  const connection = async (c: number) => {
    let session: ClientHttp2Session | undefined;
    for (let n = 0; performance.now() < deadline; n++) {
      if (!session || session.closed || session.destroyed) {
        try {
          session = await openSession(opts.origin);
        } catch (e) {
          result.errors++;
          fail(`connect: ${e}`);
          session = undefined;
          await new Promise((r) => setTimeout(r, 10)); // a refused connection answers at once: do not spin
          continue;
        }
      }
      const t0 = performance.now();
      const outcome = await send(session, opts.request(c, n), timeoutMs);
      const t1 = performance.now();
      if (t1 > deadline) break; // in flight at the deadline: not counted
      if (outcome.kind === 'error' || outcome.kind === 'timeout') {
        // As autocannon: no answer is an error, not a request, and the connection is made anew.
        fail(outcome.why);
        result.errors++;
        if (outcome.kind === 'timeout') result.timeouts++;
        session.destroy();
        continue;
      }
      result.requests++;
      latencyUs.record(Math.max(1, Math.round((t1 - t0) * 1000)));
      if (outcome.kind === 'ok') continue;
      fail(outcome.why);
      if (outcome.kind === 'non2xx') result.non2xx++;
      else result.statusErrors++;
    }
    await new Promise<void>((resolve) => (session && !session.destroyed ? session.close(() => resolve()) : resolve()));
  };
  await Promise.all(Array.from({ length: opts.connections }, (_, c) => connection(c)));

  const ms = (us: number) => Math.round(us / 10) / 100;
  result.rps = Math.round((result.requests / opts.duration) * 10) / 10;
  if (result.requests) {
    result.p50 = ms(latencyUs.percentile(50));
    result.p99 = ms(latencyUs.percentile(99));
    result.max = ms(latencyUs.max);
  }
  return result;
}
