// Network helpers for fault tests: free ports and a TCP proxy that can be cut and restored.
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A response's status, headers, text, and its JSON when the text is JSON (else undefined). */
export async function readResponse(res: Response): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // not JSON: the test reads `text`
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A TCP proxy to a server (given by URL) that a test can cut and restore, on a port fixed up front. */
export async function faultyProxy(target: string) {
  const { hostname, port: targetPort, protocol } = new URL(target);
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  return {
    url: `${protocol}//127.0.0.1:${port}/`,
    up: () =>
      new Promise<void>((resolve) => {
        server = createServer((client) => {
          const upstream = connect(Number(targetPort), hostname);
          for (const s of [client, upstream]) {
            sockets.add(s);
            s.on('error', () => {}).on('close', () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
          }
          client.pipe(upstream).pipe(client);
        }).listen(port, '127.0.0.1', resolve);
      }),
    down: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server ? server.close(() => resolve()) : resolve();
      }),
  };
}
