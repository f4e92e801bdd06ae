// HTTP/1.1 and HTTP/2 on one port, in cleartext or, with a certificate, over TLS.
// Cleartext (h2c, prior knowledge): each connection's first bytes decide. The HTTP/2 client
// preface starts with "PRI * HTTP/2.0"; such a socket goes to the http2 server, any other to
// the http server. (http2's allowHTTP1 works only through ALPN, so only with TLS:
// docs/wire-api.md.) TLS: ALPN decides (h2 or http/1.1); a client that names no
// protocol is sniffed like a cleartext one, so HTTP/2 with prior knowledge works over TLS too.
import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';

const PREFACE = Buffer.from('PRI * HTTP/2.0');

/** How long a connection may stay silent before its first bytes (then it goes to the http server, whose timeouts apply); also the TLS handshake's limit. */
const SNIFF_TIMEOUT_MS = 10_000;

/** PEM certificate (chain) and private key. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

/**
 * The port's one listener. Every connection is offered to `admit` first, before a byte is read
 * (connections.ts: the connection cap); the TLS server never listens itself, it is handed the
 * admitted sockets.
 */
export function createOnePortServer(
  http1: HttpServer,
  http2: Http2Server,
  tls?: TlsMaterial | null,
  admit: (socket: Socket) => boolean = () => true,
): NetServer {
  if (!tls) return createNetServer({ pauseOnConnect: false }, (socket) => admit(socket) && sniff(socket, http1, http2));
  const tlsServer = createTlsServer(
    { cert: tls.cert, key: tls.key, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: SNIFF_TIMEOUT_MS },
    (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') http2.emit('connection', socket);
      else if (socket.alpnProtocol === 'http/1.1') http1.emit('connection', socket);
      else sniff(socket, http1, http2);
    },
  );
  // A failed or timed-out handshake (a cleartext client among them): no answer, the socket goes.
  tlsServer.on('tlsClientError', (_err, socket) => socket.destroy());
  return createNetServer({ pauseOnConnect: false }, (socket) => admit(socket) && tlsServer.emit('connection', socket));
}

function sniff(socket: Socket, http1: HttpServer, http2: Http2Server): void {
  let seen = Buffer.alloc(0);
  const handOver = (to: HttpServer | Http2Server) => {
    socket.removeListener('data', onData);
    socket.removeListener('error', onEarlyError);
    clearTimeout(timer);
    socket.pause();
    if (seen.length > 0) socket.unshift(seen);
    // node's http2 server takes a TLS socket without a negotiated protocol for HTTP/1.1 and
    // answers 403; the preface has shown it is HTTP/2.
    if (to === http2 && (socket as TLSSocket).encrypted) (socket as TLSSocket).alpnProtocol = 'h2';
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
}
