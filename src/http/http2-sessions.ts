// HTTP/2 sessions and streams with an end, as careful servers run them (node's http2 server has
// none of these by default):
// - A stream whose request (headers and body) has not fully arrived HTTP_REQUEST_TIMEOUT_MS
//   after it opened is reset (RST_STREAM CANCEL), like HTTP/1.1's request timeout (408).
// - A session with no open stream for HTTP2_IDLE_TIMEOUT_MS gets GOAWAY, a session that sent only
//   the preface too; a peer that keeps the connection open after it is cut GOAWAY_GRACE_MS later.
// - Resets per client address, over all its connections: node (nghttp2) sends GOAWAY to one
//   connection after about 1,000 quick resets, so a client that reconnects could open and reset
//   streams without end (each costs the edge a request). More than HTTP2_RESETS_PER_CLIENT_PER_MINUTE
//   resets from one address: GOAWAY (ENHANCE_YOUR_CALM) to each of its sessions, and its new
//   connections are refused for HTTP2_RESET_BLOCK_MS (connections.ts).
// The concurrent-stream cap is the server's SETTINGS_MAX_CONCURRENT_STREAMS (index.ts).
import { constants, type Http2Server, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Logger } from '../log.ts';
import { addressKey, createAddressWindow } from './address-window.ts';
import { connectionKey, type ConnectionGuard } from './connections.ts';

/** After GOAWAY, how long a peer may keep the connection open before it is closed. */
const GOAWAY_GRACE_MS = 5_000;
const RESET_WINDOW_MS = 60_000;

export type Http2Cut = 'request_timeout' | 'idle_session' | 'resets';

/** Streams this server reset itself (timeouts, output-guard.ts): not the peer's resets. */
const ownResets = new WeakSet<ServerHttp2Stream>();

/** Resets the stream (RST_STREAM CANCEL) as the server's own doing. */
export function resetByServer(stream: ServerHttp2Stream): void {
  ownResets.add(stream);
  if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
}

/** The stream is about to be destroyed by the server (an answer given up): its RST_STREAM is not the peer's. */
export const destroyedByServer = (stream: ServerHttp2Stream): void => void ownResets.add(stream);

export interface Http2GuardOptions {
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** 0: no limit. */
  resetsPerClientPerMinute: number;
  resetBlockMs: number;
  connections: ConnectionGuard;
  logger: Logger;
  onCut?: (reason: Http2Cut) => void;
}

export function guardHttp2Sessions(server: Http2Server, options: Http2GuardOptions): void {
  const { requestTimeoutMs, idleTimeoutMs, resetsPerClientPerMinute, resetBlockMs, connections, logger, onCut } = options;
  const resets = createAddressWindow({ windowMs: RESET_WINDOW_MS });
  const sessionsOf = new Map<string, Map<Http2Session, Socket>>();

  // The socket under each session: node waits after GOAWAY for the peer to close it, and the
  // session's own `socket` is a proxy that neither destroys nor outlives it. node's 'connection'
  // listener creates the session and emits 'session' at once, so this one, put before it, sees
  // each socket just before its session.
  let incoming: Socket | undefined;
  server.prependListener('connection', (socket: Socket) => void (incoming = socket));

  /** GOAWAY (NO_ERROR: the peer may retry elsewhere), then closed once its streams end, and the socket at the grace. */
  const goAway = (session: Http2Session, socket: Socket, code = constants.NGHTTP2_NO_ERROR) => {
    if (!session.destroyed) {
      if (code === constants.NGHTTP2_NO_ERROR) session.close();
      else {
        // destroy(…, code) alone tells the peer NO_ERROR: the GOAWAY with the code goes out first.
        session.goaway(code);
        setImmediate(() => session.destroyed || session.destroy(undefined, code));
      }
    }
    setTimeout(() => socket.destroyed || socket.destroy(), GOAWAY_GRACE_MS).unref();
  };

  const tooManyResets = (peer: string | undefined) => {
    const address = addressKey(peer);
    connections.block(peer, resetBlockMs);
    logger.log('warn', 'HTTP/2 resets over the limit: the address is refused for a while', {
      ip: address,
      limitPerMinute: resetsPerClientPerMinute,
      blockedMs: resetBlockMs,
    });
    for (const [session, socket] of sessionsOf.get(address) ?? []) {
      goAway(session, socket, constants.NGHTTP2_ENHANCE_YOUR_CALM);
      onCut?.('resets');
    }
  };

  server.on('session', (session: Http2Session) => {
    const socket = incoming ?? (session.socket as Socket);
    incoming = undefined;
    const key = connectionKey(socket);
    const peer = socket.remoteAddress;
    const address = addressKey(peer);
    let peers = sessionsOf.get(address);
    if (!peers) sessionsOf.set(address, (peers = new Map()));
    peers.set(session, socket);

    let open = 0;
    let idleTimer: NodeJS.Timeout | undefined;
    const idle = () => {
      idleTimer = setTimeout(() => {
        onCut?.('idle_session');
        goAway(session, socket);
      }, idleTimeoutMs);
      idleTimer.unref();
    };
    idle();

    session.on('stream', (stream: ServerHttp2Stream) => {
      open++;
      clearTimeout(idleTimer);
      connections.busy(key);
      // The request has arrived once the peer has ended its half of the stream.
      const requestTimer = stream.endAfterHeaders
        ? undefined
        : setTimeout(() => {
            if (stream.destroyed || stream.state.remoteClose) return;
            onCut?.('request_timeout');
            resetByServer(stream);
          }, requestTimeoutMs);
      requestTimer?.unref();
      stream.once('close', () => {
        // The peer's RST_STREAM (a stream closed with an error code the server did not send, its
        // session still up), whether or not the answer had begun: a rapid reset sends END_STREAM
        // and RST_STREAM at once, and an empty body may be answered before the reset is read.
        if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && !ownResets.has(stream) && !session.destroyed && resetsPerClientPerMinute > 0) {
          if (resets.hit(peer) === resetsPerClientPerMinute + 1) tooManyResets(peer);
        }
        clearTimeout(requestTimer);
        connections.done(key);
        if (--open === 0 && !session.closed && !session.destroyed) idle();
      });
    });

    session.once('close', () => {
      clearTimeout(idleTimer);
      peers.delete(session);
      if (peers.size === 0 && sessionsOf.get(address) === peers) sessionsOf.delete(address);
    });
  });
}
