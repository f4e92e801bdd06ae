// Answers for peers that do not read them. node queues whatever a response writes, however much
// and however long the peer takes (HTTP/1.1: the socket's buffer; HTTP/2: the stream's queue,
// held while the peer's flow-control window stays at zero): 30 peers that asked for a 9 MB page
// and never read held 800 MB for as long as they kept their connections open.
//
// Two bounds, on every response of the port (GraphQL, the wire API, /health, /metrics):
// - Write timeout: a connection (HTTP/1.1) or stream (HTTP/2) with bytes waiting of which the
//   peer has taken none for HTTP_WRITE_TIMEOUT_MS is cut (the socket destroyed; RST_STREAM
//   CANCEL), and what it held is freed. "Taken" is a write that completed: large chunks are
//   handed over in 64 KiB slices, so a slow peer that reads makes progress slice by slice.
// - Unsent bytes per connection: while other answers on the same connection wait to be taken
//   (HTTP/1.1: the ones before it, of pipelined requests; HTTP/2: the session's other streams),
//   an answer may not take the connection's unsent bytes over HTTP_MAX_UNSENT_BYTES_PER_CONNECTION:
//   it is cut instead (HTTP/2: RST_STREAM CANCEL). One answer alone always goes out, whatever its size.
// node's own HTTP/2 maxSessionMemory (10 MB) counts queued output too, but only refuses new
// streams once it is over; the streams already open all queue their answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { resetByServer } from './http2-sessions.ts';

/** Large chunks go to the socket or stream in pieces of this size (views, not copies). */
const SLICE_BYTES = 64 * 1024;

export type OutputCut = 'write_timeout' | 'unsent_cap';

export interface OutputGuardOptions {
  writeTimeoutMs: number;
  maxUnsentBytes: number;
  onCut?: (reason: OutputCut) => void;
}

export interface OutputGuard {
  /** Watches the response's output; before anything is written to it. */
  watch(req: IncomingMessage, res: ServerResponse): void;
  /** Answer bytes queued and not yet taken by their peers, over the whole process. */
  readonly unsentBytes: number;
  stop(): void;
}

/** One HTTP/1.1 connection or one HTTP/2 stream: what it holds, and what its peer has taken so far. */
interface Flow {
  pending(): number;
  taken(): number;
  cut(): void;
  lastTaken: number;
  /** When it last made progress (or started waiting). */
  since: number;
}

/** An HTTP/1.1 connection's flow: what its socket holds, and what the peer has taken. */
const socketFlow = (socket: Socket): Flow => ({
  pending: () => socket.writableLength,
  taken: () => (socket.bytesWritten ?? 0) - socket.writableLength,
  cut: () => socket.destroy(),
  lastTaken: 0,
  since: 0,
});

/** An HTTP/2 stream's flow: `handed` counts the bytes given to the stream (it has no bytesWritten). */
const streamFlow = (stream: ServerHttp2Stream, handed: { bytes: number }): Flow => ({
  pending: () => stream.writableLength,
  taken: () => handed.bytes - stream.writableLength,
  cut: () => resetByServer(stream),
  lastTaken: 0,
  since: 0,
});

export function createOutputGuard(options: OutputGuardOptions): OutputGuard {
  const { writeTimeoutMs, maxUnsentBytes, onCut } = options;
  const flows = new WeakMap<object, Flow>();
  const waiting = new Set<Flow>();
  // HTTP/2: the streams of each session that have written, for the session's unsent total.
  const sessionFlows = new WeakMap<Http2Session, Set<Flow>>();

  const cut = (flow: Flow, reason: OutputCut) => {
    waiting.delete(flow);
    flow.cut();
    onCut?.(reason);
  };

  const sweep = () => {
    const now = Date.now();
    for (const flow of waiting) {
      if (flow.pending() === 0) {
        waiting.delete(flow);
        continue;
      }
      const taken = flow.taken();
      if (taken > flow.lastTaken) {
        flow.lastTaken = taken;
        flow.since = now;
      } else if (now - flow.since >= writeTimeoutMs) cut(flow, 'write_timeout');
    }
  };
  const timer = setInterval(sweep, Math.min(1000, Math.max(100, Math.floor(writeTimeoutMs / 4))));
  timer.unref();

  /** Before `bytes` more are written to the flow: false when the flow was cut instead. */
  const beforeWrite = (flow: Flow, bytes: number, othersPending: () => number): boolean => {
    if (!waiting.has(flow)) {
      flow.lastTaken = flow.taken();
      flow.since = Date.now();
    }
    const others = othersPending();
    if (others > 0 && others + flow.pending() + bytes > maxUnsentBytes) {
      cut(flow, 'unsent_cap');
      return false;
    }
    waiting.add(flow);
    return true;
  };

  function http1Flow(socket: Socket): Flow {
    let flow = flows.get(socket);
    if (flow) return flow;
    flow = socketFlow(socket);
    flows.set(socket, flow);
    const theFlow = flow;
    socket.once('close', () => waiting.delete(theFlow));
    return flow;
  }

  function http2Flow(stream: ServerHttp2Stream, session: Http2Session, handed: { bytes: number }): Flow {
    let flow = flows.get(stream);
    if (flow) return flow;
    let siblings = sessionFlows.get(session);
    if (!siblings) sessionFlows.set(session, (siblings = new Set()));
    const theSiblings = siblings;
    flow = streamFlow(stream, handed);
    flows.set(stream, flow);
    const theFlow = flow;
    siblings.add(flow);
    stream.once('close', () => {
      waiting.delete(theFlow);
      theSiblings.delete(theFlow);
    });
    return flow;
  }

  return {
    get unsentBytes() {
      let sum = 0;
      for (const flow of waiting) sum += flow.pending();
      return sum;
    },
    stop: () => clearInterval(timer),
    watch(req, res) {
      if ('stream' in res) {
        const stream = (res as unknown as { stream: ServerHttp2Stream }).stream;
        // A stream the peer has already reset has no session left: nothing will be written to it.
        const session = stream.session;
        if (!session || stream.destroyed) return;
        const handed = { bytes: 0 };
        const flow = http2Flow(stream, session, handed);
        const siblings = sessionFlows.get(session)!;
        const others = () => {
          let sum = 0;
          for (const f of siblings) if (f !== flow) sum += f.pending();
          return sum;
        };
        sliceWrites(res, (bytes) => {
          if (!beforeWrite(flow, bytes, others)) return false;
          handed.bytes += bytes;
          return true;
        });
        return;
      }
      const socket = req.socket;
      const flow = http1Flow(socket);
      // The answers before this one on the connection (pipelined requests) are what its first write finds unsent.
      let first = true;
      sliceWrites(res, (bytes) => {
        const others = first ? () => socket.writableLength : () => 0;
        first = false;
        return beforeWrite(flow, bytes, others);
      });
    },
  };
}

type Chunk = string | Uint8Array;
type Callback = (err?: Error | null) => void;

/** The chunk in pieces of SLICE_BYTES (strings: code units, never between the halves of a surrogate pair); views, not copies. */
function* slices(chunk: Chunk): Generator<Chunk> {
  if (typeof chunk !== 'string') {
    for (let at = 0; at < chunk.byteLength; at += SLICE_BYTES) yield chunk.subarray(at, at + SLICE_BYTES);
    return;
  }
  for (let at = 0; at < chunk.length;) {
    let to = Math.min(chunk.length, at + SLICE_BYTES);
    const code = chunk.charCodeAt(to - 1);
    if (to < chunk.length && code >= 0xd800 && code <= 0xdbff) to--;
    yield chunk.slice(at, to);
    at = to;
  }
}

/**
 * Wraps the response's write (and end with a large chunk) so that each chunk is counted by
 * `admit` first, and one larger than SLICE_BYTES is written in slices. A chunk it refuses is
 * dropped (the connection or stream has been cut): the writer is told it went, so that it ends
 * the response as usual instead of waiting for a 'drain' that will never come.
 */
function sliceWrites(res: ServerResponse, admit: (bytes: number) => boolean): void {
  const write = res.write.bind(res) as (chunk: Chunk, encoding?: BufferEncoding, cb?: Callback) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const http2 = 'stream' in res;
  let wrote = false;
  const byteLength = (chunk: Chunk, encoding?: BufferEncoding) =>
    typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
  const dropped = (cb: Callback | undefined) => {
    if (cb) process.nextTick(cb, new Error('the answer was cut: its peer does not read'));
    return true;
  };

  const sliced = (chunk: Chunk, encoding: BufferEncoding | undefined, cb: Callback | undefined): boolean => {
    wrote = true;
    const bytes = byteLength(chunk, encoding);
    // Counted whole, before any of it is queued: a chunk that is refused is never copied.
    if (!admit(bytes)) return dropped(cb);
    if (bytes <= SLICE_BYTES) return write(chunk, encoding, cb);
    // A string in another encoding (base64, hex) is not cut: its slices would not decode alone.
    if (
      typeof chunk === 'string' &&
      encoding &&
      !/^utf-?8$/i.test(encoding) &&
      encoding !== 'latin1' &&
      encoding !== 'binary' &&
      encoding !== 'ascii'
    )
      return write(chunk, encoding, cb);
    let ok = true;
    const pieces = [...slices(chunk)];
    pieces.forEach((piece, i) => (ok = write(piece, encoding, i === pieces.length - 1 ? cb : undefined)));
    return ok;
  };

  res.write = ((chunk: Chunk, encoding?: BufferEncoding | Callback, cb?: Callback) => {
    if (typeof encoding === 'function') return sliced(chunk, undefined, encoding);
    return sliced(chunk, encoding, cb);
  }) as typeof res.write;

  // HTTP/2's end writes its chunk through res.write (above); HTTP/1.1's does not.
  if (http2) return;
  res.end = ((chunk?: Chunk | Callback, encoding?: BufferEncoding | Callback, cb?: Callback) => {
    if (typeof chunk === 'function' || chunk === undefined || chunk === null) return end(chunk);
    if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    const bytes = byteLength(chunk, encoding);
    if (bytes <= SLICE_BYTES) return admit(bytes) ? end(chunk, encoding, cb) : end(cb);
    // end(chunk) alone would have set Content-Length: written in slices, it would go chunked.
    if (!wrote && !res.headersSent && !res.hasHeader('content-length')) res.setHeader('content-length', bytes);
    sliced(chunk, encoding, undefined);
    return end(cb);
  }) as typeof res.end;
}
