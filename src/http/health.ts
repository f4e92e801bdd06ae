// GET /health: liveness, 200 while the process serves HTTP at all.
// GET /ready: readiness, 200 when the event store (MongoDB or embedded) and, when
// configured, Redis answer a ping within PING_TIMEOUT_MS each and, when ids are
// leased, a node-id lease is held; 503 when one does not, or while the gateway is
// shutting down. The body names each check
// ("ok" / "down"), never an error text.
import type { ServerResponse } from 'node:http';

const PING_TIMEOUT_MS = 1000;

export interface ReadinessCheck {
  name: string;
  ping(): Promise<unknown>;
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function readiness(checks: readonly ReadinessCheck[], draining: boolean) {
  const results = await Promise.all(
    checks.map(
      async (c) =>
        [
          c.name,
          await within(
            PING_TIMEOUT_MS,
            Promise.resolve().then(() => c.ping()),
          ).then(
            () => 'ok',
            () => 'down',
          ),
        ] as const,
    ),
  );
  const status: Record<string, string> = Object.fromEntries(results);
  if (draining) status.shutdown = 'in progress';
  const ready = !draining && results.every(([, r]) => r === 'ok');
  return { ready, checks: status };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
