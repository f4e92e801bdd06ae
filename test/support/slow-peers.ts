// Helpers for the tests of slow, silent and abusive peers (http.slow-readers, http.h2-limits,
// http.connections, http.metrics-port): the gateway child's memory, its metrics, waiting with a
// generous cap, and raw sockets that never read.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** The process's resident memory in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) / 1024;
}

/**
 * `probe` again every 100 ms until `ok` holds; throws naming `what` and the last value after
 * `timeoutMs`. The caps are generous: what is awaited comes within seconds on any machine, and
 * on the code before the fix never.
 */
export async function until<T>(what: string, probe: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A sample's value in Prometheus text (labels matched as given), 0 when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

/** GET `url` over a new HTTP/1.1 connection (from `localAddress` when given): its status, headers and body; a failed connection rejects. */
export function get(
  url: string,
  options: { localAddress?: string; timeoutMs?: number; method?: string } = {},
): Promise<{ status: number; headers: Record<string, any>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', localAddress: options.localAddress, agent: false, timeout: options.timeoutMs ?? 30_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} in ${options.timeoutMs ?? 30_000} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** /health's status over a new connection; 0 when it does not answer within 30 s. */
export const health = (base: string) =>
  get(`${base}/health`).then(
    (r) => r.status,
    () => 0,
  );

/** A metric of the gateway, read from `metricsUrl` (its /metrics). */
export const metric = async (metricsUrl: string, name: string, labels: Record<string, string> = {}) =>
  sample((await get(metricsUrl)).text, name, labels);

/** A connection that sends `request` and never reads: whatever is answered stays with the gateway. */
export function silentReader(port: number, request: string, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.pause();
      socket.write(request);
      resolve(socket);
    });
    socket.on('error', (err) => (socket.connecting ? reject(err) : undefined));
  });
}

/** Reads what the socket holds and what still comes, until the peer closes it: the bytes received, and whether it closed within `timeoutMs`. */
export function drain(socket: Socket, timeoutMs = 60_000): Promise<{ bytes: number; text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const head: Buffer[] = [];
    const done = (closed: boolean) => {
      clearTimeout(timer);
      resolve({ bytes, text: Buffer.concat(head).toString('latin1'), closed });
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('data', (d: Buffer) => {
      bytes += d.length;
      if (head.length < 4) head.push(d);
    });
    socket.once('close', () => done(true));
    socket.on('error', () => {});
    socket.resume();
  });
}
