// HTTP/1.1 and HTTP/2 cleartext (h2c, prior knowledge) on one port: each connection's first
// bytes decide. The HTTP/2 client preface starts with "PRI * HTTP/2.0"; such a socket goes
// to the http2 server, any other to the http server. (http2's allowHTTP1 works only through
// ALPN, so only with TLS: ../../shared/WIRE-API.md.)
import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0');

/** How long a connection may stay silent before its first bytes (then it goes to the http server, whose timeouts apply). */
const SNIFF_TIMEOUT_MS = 10_000;

export function createOnePortServer(http1: HttpServer, http2: Http2Server): NetServer {
  return createNetServer({ pauseOnConnect: false }, (socket: Socket) => {
    let seen = Buffer.alloc(0);
    const handOver = (to: HttpServer | Http2Server) => {
      socket.removeListener('data', onData);
      socket.removeListener('error', onEarlyError);
      clearTimeout(timer);
      socket.pause();
      if (seen.length > 0) socket.unshift(seen);
      to.emit('connection', socket);
      // The servers read on; data unshifted above is read first.
      process.nextTick(() => socket.resume());
    };
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const prefixOfPreface = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (!prefixOfPreface) handOver(http1);
      else if (seen.length >= PREFACE.length) handOver(http2);
      // else: a prefix of the preface so far; wait for more.
    };
    const onEarlyError = () => socket.destroy();
    const timer = setTimeout(() => handOver(http1), SNIFF_TIMEOUT_MS);
    timer.unref();
    socket.on('data', onData);
    socket.on('error', onEarlyError);
    socket.once('close', () => clearTimeout(timer));
  });
}
