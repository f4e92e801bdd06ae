// A TCP proxy in front of an h2c server (a gateway's wire face, the upstream of a gateway in
// upstream mode) that reads HTTP/2's framing: it counts the requests that pass it (a client's
// HEADERS frame opening a stream), and can stall the answers (the connection and its pings stay
// up, nothing of any stream comes back) or lose the next answer (the connection is dropped when
// the server starts to answer: the request reached the server, its answer never the client).
import { connect, createServer, type Socket } from 'node:net';
import { freePort } from './net.ts';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const DATA = 0x0;
const HEADERS = 0x1;

interface Frame {
  type: number;
  stream: number;
  bytes: Buffer;
}

/** Whole HTTP/2 frames out of a stream's chunks (after the client's preface, when `preface`). */
function frames(preface: boolean, onFrame: (f: Frame) => void, onPreface: (b: Buffer) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let before = preface ? PREFACE.length : 0;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    if (before > 0) {
      if (pending.length < before) return;
      onPreface(pending.subarray(0, before));
      pending = pending.subarray(before);
      before = 0;
    }
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) return;
      onFrame({ type: pending[3]!, stream: pending.readUInt32BE(5) & 0x7fffffff, bytes: pending.subarray(0, 9 + length) });
      pending = pending.subarray(9 + length);
    }
  };
}

/** A proxy to 127.0.0.1:targetPort, listening on `listenPort` (a free port when not given). */
export async function h2Proxy(targetPort: number, listenPort?: number) {
  const port = listenPort ?? (await freePort());
  const sockets = new Set<Socket>();
  let requests = 0;
  let connections = 0;
  let stalled = false;
  /** Answers' frames held while stalled, in order, for their connection (HPACK: none may be lost). */
  let held: { client: Socket; bytes: Buffer }[] = [];
  let loseNext = false;
  let lost = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {}).on('close', () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
    }
    client.on(
      'data',
      frames(
        true,
        (f) => {
          if (f.type === HEADERS && f.stream > 0) requests++;
          upstream.write(f.bytes);
        },
        (b) => upstream.write(b),
      ),
    );
    upstream.on(
      'data',
      frames(
        false,
        (f) => {
          if (f.stream > 0 && stalled) return void held.push({ client, bytes: f.bytes });
          if (f.stream > 0 && loseNext && (f.type === HEADERS || f.type === DATA)) {
            loseNext = false;
            lost++;
            client.destroy();
            upstream.destroy();
            return;
          }
          if (!client.destroyed) client.write(f.bytes);
        },
        () => {},
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    /** Request streams clients opened through the proxy so far. */
    get requests() {
      return requests;
    },
    /** Connections clients opened to the proxy so far. */
    get connections() {
      return connections;
    },
    /** Answers lost by loseNextAnswer. */
    get lost() {
      return lost;
    },
    /** On: nothing of any stream comes back (the session's own frames, SETTINGS and PING, still do); off: what was held goes on, in order. */
    stall(on: boolean) {
      stalled = on;
      if (on) return;
      for (const { client, bytes } of held.splice(0)) if (!client.destroyed) client.write(bytes);
    },
    /** The next answer the server starts drops its connection instead of reaching the client. */
    loseNextAnswer() {
      loseNext = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
