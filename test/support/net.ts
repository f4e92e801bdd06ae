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

/** Whole MongoDB wire messages (16-byte header: length, requestID, responseTo, opCode) out of a stream's chunks. */
function wireMessages(onMessage: (message: Buffer) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
      const length = pending.readInt32LE(0);
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  };
}

/** `work` again every 100 ms while it throws (a client reconnecting behind the proxy), for at most 20 s. */
export async function untilItWorks<T>(work: () => Promise<T>): Promise<T> {
  for (const giveUp = Date.now() + 20_000; ;) {
    try {
      return await work();
    } catch (e) {
      if (Date.now() > giveUp) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Holds the proxy's connections, starts `call`, then drops them: the call never reached the
 * server and must fail. Returns its rejection once the client is back (`reconnected` works
 * again), so that a command sent again after the reconnect would have run by then.
 */
export async function cutOffBehind(
  proxy: { hold(): void; cut(): void; release(): void },
  call: () => Promise<unknown>,
  reconnected: () => Promise<unknown>,
): Promise<unknown> {
  proxy.hold();
  const calling = call().then(
    () => new Error('the call cut off by the dropped connection succeeded'),
    (e: unknown) => e,
  );
  await new Promise((r) => setTimeout(r, 100));
  proxy.cut();
  const error = await calling;
  proxy.release();
  await untilItWorks(reconnected);
  return error;
}

/**
 * A TCP proxy to a server (given by URL) that a test can cut and restore, or hold, on a port
 * fixed up front. With loseAnswers(match) on, a MongoDB request `match` picks (its wire message) reaches
 * the server, but its answer never comes back: the connection is dropped instead, as when a
 * network fails after the server has written. With delayRequests(match, ms), those reach it late.
 */
export async function faultyProxy(target: string) {
  const { hostname, port: targetPort, protocol } = new URL(target);
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let lose: ((message: Buffer) => boolean) | undefined;
  let lost = 0;
  let delay: { match: (message: Buffer) => boolean; ms: number } | undefined;
  /** While held: what clients send, in order, per upstream connection (a stalled server). */
  let held: { upstream: Socket; chunk: Buffer }[] | undefined;
  return {
    url: `${protocol}//127.0.0.1:${port}/`,
    /** Holds what clients send until release(): the server stalls, the connections stay up. */
    hold() {
      held ??= [];
    },
    /** The held messages `match` picks (MongoDB framing): how many, and how many still wait on an open connection. */
    heldMessages(match: (message: Buffer) => boolean): { held: number; open: number } {
      const picked = (held ?? []).filter(({ chunk }) => match(chunk));
      return { held: picked.length, open: picked.filter(({ upstream }) => !upstream.destroyed).length };
    },
    /** Drops the open connections (what was held for them is lost), and keeps listening. */
    cut() {
      for (const s of sockets) s.destroy();
    },
    /** Sends what was held, in order, and stops holding. */
    release() {
      const chunks = held ?? [];
      held = undefined;
      for (const { upstream, chunk } of chunks) if (!upstream.destroyed) upstream.write(chunk);
    },
    loseAnswers(match: ((message: Buffer) => boolean) | undefined) {
      lose = match;
    },
    /** MongoDB requests `match` picks reach the server `ms` late (a slow answer to just those). */
    delayRequests(match: ((message: Buffer) => boolean) | undefined, ms = 0) {
      delay = match && { match, ms };
    },
    /** How many answers were lost so far. */
    get lost() {
      return lost;
    },
    up: () =>
      new Promise<void>((resolve) => {
        server = createServer((client) => {
          const upstream = connect(Number(targetPort), hostname);
          for (const s of [client, upstream]) {
            sockets.add(s);
            s.on('error', () => {}).on('close', () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
          }
          const doomed = new Set<number>();
          const forward = (chunk: Buffer) => {
            if (held) held.push({ upstream, chunk });
            else upstream.write(chunk);
          };
          // loseAnswers and delayRequests read MongoDB's framing (whole messages are forwarded);
          // other protocols (Redis) are forwarded as they come.
          client.on(
            'data',
            protocol !== 'mongodb:'
              ? forward
              : wireMessages((m) => {
                  if (lose?.(m)) doomed.add(m.readInt32LE(4));
                  const late = delay?.match(m) ? delay.ms : 0;
                  if (late > 0) setTimeout(() => upstream.destroyed || forward(m), late);
                  else forward(m);
                }),
          );
          if (protocol !== 'mongodb:') upstream.pipe(client);
          else
            upstream.on(
              'data',
              wireMessages((m) => {
                if (doomed.has(m.readInt32LE(8))) {
                  lost++;
                  client.destroy();
                  upstream.destroy();
                } else if (!client.destroyed) client.write(m);
              }),
            );
        }).listen(port, '127.0.0.1', resolve);
      }),
    down: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server ? server.close(() => resolve()) : resolve();
      }),
  };
}
