// A delaying, counting TCP proxy for the bench (bench/run.ts): listens on 127.0.0.1 (a free
// port) in front of a MongoDB-wire server or a redis-server, holds every server→client chunk
// for `delayMs` before passing it on (in order, one timer per direction, bounded buffering),
// and counts what the client sends:
//   - MongoDB wire: whole messages, framed by the 16-byte MsgHeader (messageLength, requestID,
//     responseTo, opCode) across chunk boundaries; the command name is the first key of an
//     OP_MSG body (or of an OP_QUERY query); replies are matched to commands by responseTo.
//   - Redis (RESP): top-level values, so each command of a pipeline counts; the command name
//     is the first bulk string; replies are matched in order (RESP answers in order).
// Connection set-up and monitoring commands (hello/isMaster, SASL; Redis INFO, CLIENT, HELLO,
// AUTH, SELECT) are counted apart from the work commands.
//
// Round trips: the proxies of one bench share a RoundTrips tracker. While a window is open
// (one request at a time), each work command gets a depth of 1 + the deepest reply the client
// has been handed so far in the window (on any connection of any proxy): a command sent before
// any reply is depth 1, one sent after a depth-1 reply reached the client is depth 2, two
// commands sent together (in parallel on two pooled connections, or pipelined) share a depth.
// The window's round trips are the deepest depth: the number of sequential network waits on
// the request's critical path, i.e. how many times a per-round-trip latency is paid. A reply
// counts when it is passed on to the client (after the delay), which is when the client can
// act on it. This over-counts when the client sends a command that does not depend on a reply
// that happened to reach it first: without a delay, a loopback reply can come back before the
// client has sent the command it meant to send beside the first, so bench/run.ts counts round
// trips on the delayed requests only. bench/round-trips.ts checks the counting against known
// sequences (and the driver's command monitoring), and bench/run.ts against the latency a
// larger delay adds.
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export type Protocol = 'mongodb' | 'redis';

/** MongoDB and Redis commands that open or watch a connection rather than serve a request. */
const SETUP = {
  mongodb: new Set(['hello', 'ismaster', 'saslstart', 'saslcontinue', 'speculativeauthenticate', 'endsessions', 'buildinfo', 'getnonce']),
  redis: new Set(['info', 'client', 'hello', 'auth', 'select', 'readonly', 'quit']),
};

// ---------------------------------------------------------------- round trips

export interface Window {
  /** Deepest command depth in the window: sequential round trips, MongoDB and Redis together. */
  roundTrips: number;
  /** The same counting one protocol's commands and replies only (MongoDB alone, Redis alone). */
  roundTripsOf: Record<Protocol, number>;
  /** Work commands sent in the window, by protocol and name. */
  commands: Record<Protocol, Record<string, number>>;
  /** Set-up / monitoring commands sent in the window (new pooled connections show here). */
  setup: Record<Protocol, Record<string, number>>;
  /** The work commands in the order sent, each with its depth: "mongodb find 1", "redis evalsha 1", ... */
  trace: string[];
}

/** Shared by the proxies of one bench: windows of one request each. */
export class RoundTrips {
  private open = false;
  private generation = 0;
  private handedDepth = 0;
  private handedDepthOf: Record<Protocol, number> = { mongodb: 0, redis: 0 };
  private window: Window = RoundTrips.empty();
  /** Work commands sent outside any window (background work, or work after the answer). */
  readonly outside: Record<Protocol, Record<string, number>> = { mongodb: {}, redis: {} };
  private pending = 0;
  private idleWaiters: (() => void)[] = [];

  private static empty(): Window {
    return {
      roundTrips: 0,
      roundTripsOf: { mongodb: 0, redis: 0 },
      commands: { mongodb: {}, redis: {} },
      setup: { mongodb: {}, redis: {} },
      trace: [],
    };
  }

  begin(): void {
    this.open = true;
    this.generation++;
    this.handedDepth = 0;
    this.handedDepthOf = { mongodb: 0, redis: 0 };
    this.window = RoundTrips.empty();
  }

  /** Closes the window; call once the request's answer is in and idle() has resolved. */
  end(): Window {
    this.open = false;
    return this.window;
  }

  /** Resolves when no work command of any connection waits for its reply (or after timeoutMs). */
  idle(timeoutMs = 200): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.idleWaiters.push(done);
    });
  }

  /** A command left the client: its tag, to hand back in replied(). */
  sent(protocol: Protocol, name: string): Tag {
    const setup = SETUP[protocol].has(name);
    const into = setup
      ? this.open
        ? this.window.setup[protocol]
        : undefined
      : this.open
        ? this.window.commands[protocol]
        : this.outside[protocol];
    if (into) into[name] = (into[name] ?? 0) + 1;
    if (setup) return { protocol, depth: 0, depthOf: 0, generation: -1, work: false };
    this.pending++;
    if (!this.open) return { protocol, depth: 0, depthOf: 0, generation: -1, work: true };
    const depth = this.handedDepth + 1;
    const depthOf = this.handedDepthOf[protocol] + 1;
    if (depth > this.window.roundTrips) this.window.roundTrips = depth;
    if (depthOf > this.window.roundTripsOf[protocol]) this.window.roundTripsOf[protocol] = depthOf;
    if (this.window.trace.length < 100) this.window.trace.push(`${protocol} ${name} ${depth}`);
    return { protocol, depth, depthOf, generation: this.generation, work: true };
  }

  /** The reply to a tagged command reached the client. */
  replied(tag: Tag): void {
    if (!tag.work) return;
    this.pending = Math.max(0, this.pending - 1);
    if (this.open && tag.generation === this.generation) {
      if (tag.depth > this.handedDepth) this.handedDepth = tag.depth;
      if (tag.depthOf > this.handedDepthOf[tag.protocol]) this.handedDepthOf[tag.protocol] = tag.depthOf;
    }
    if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** A connection closed with commands unanswered. */
  dropped(tags: Tag[]): void {
    for (const t of tags) if (t.work) this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
  }
}

export interface Tag {
  protocol: Protocol;
  depth: number;
  /** Depth among this protocol's commands only. */
  depthOf: number;
  generation: number;
  work: boolean;
}

// ---------------------------------------------------------------- framing

/** The first bytes of each MongoDB wire message, as it streams by (no message is buffered whole). */
export class MongoFramer {
  private head: Buffer = Buffer.alloc(0);
  private skip = 0;
  private static readonly KEEP = 160;
  private readonly onMessage: (m: { length: number; requestId: number; responseTo: number; opCode: number; head: Buffer }) => void;
  constructor(onMessage: (m: { length: number; requestId: number; responseTo: number; opCode: number; head: Buffer }) => void) {
    this.onMessage = onMessage;
  }

  push(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - off);
        this.skip -= n;
        off += n;
        continue;
      }
      // Collect up to KEEP bytes (or the whole message, if shorter) of the next message.
      const want = this.head.length < 4 ? 4 : Math.min(MongoFramer.KEEP, this.head.readInt32LE(0));
      const n = Math.min(want - this.head.length, chunk.length - off);
      this.head = Buffer.concat([this.head, chunk.subarray(off, off + n)]);
      off += n;
      if (this.head.length < want) continue;
      const length = this.head.readInt32LE(0);
      if (length < 16) throw new Error(`MongoDB wire: bad messageLength ${length}`);
      if (this.head.length < Math.min(MongoFramer.KEEP, length)) continue; // first pass read only the length
      this.onMessage({
        length,
        requestId: this.head.readInt32LE(4),
        responseTo: this.head.readInt32LE(8),
        opCode: this.head.readInt32LE(12),
        head: this.head,
      });
      this.skip = length - this.head.length;
      this.head = Buffer.alloc(0);
    }
  }
}

/** The command name of a MongoDB request: the first key of the OP_MSG body, or of the OP_QUERY query. */
export function mongoCommandName(opCode: number, head: Buffer): string {
  const cstring = (at: number) => {
    const end = head.indexOf(0, at);
    return end < 0 ? undefined : { text: head.toString('latin1', at, end), next: end + 1 };
  };
  const firstKey = (doc: number) => (doc + 5 <= head.length ? cstring(doc + 5)?.text : undefined); // int32 size, type byte
  let name: string | undefined;
  if (opCode === 2013) {
    // OP_MSG: flagBits, then sections; the body (kind 0) comes first from the drivers.
    name = head[20] === 0 ? firstKey(21) : undefined;
  } else if (opCode === 2004) {
    // OP_QUERY: flags, fullCollectionName, numberToSkip, numberToReturn, query.
    const coll = cstring(20);
    name = coll ? firstKey(coll.next + 8) : undefined;
  } else if (opCode === 2012) {
    name = '(compressed)';
  }
  return (name ?? `(opcode ${opCode})`).toLowerCase();
}

/**
 * Top-level RESP values, as they stream by: for each, its command name when it is an array whose
 * first element is a bulk string (a command), else ''. Only an incomplete value is kept between
 * chunks. RESP2 and the RESP3 types redis-server sends.
 */
export class RespFramer {
  private buf: Buffer = Buffer.alloc(0);
  private readonly onValue: (name: string) => void;
  constructor(onValue: (name: string) => void) {
    this.onValue = onValue;
  }

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let off = 0;
    for (;;) {
      const v = this.value(off, true);
      if (!v) break;
      off = v.end;
      this.onValue(v.name);
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(off));
  }

  /** One value from `at`: where it ends and, at the top, its command name; undefined when incomplete. */
  private value(at: number, top: boolean): { end: number; name: string } | undefined {
    const buf = this.buf;
    if (at >= buf.length) return undefined;
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const type = String.fromCharCode(buf[at]!);
    const line = buf.toString('latin1', at + 1, eol);
    const after = eol + 2;
    switch (type) {
      case '+':
      case '-':
      case ':':
      case '_':
      case ',':
      case '#':
      case '(':
        return { end: after, name: '' };
      case '$':
      case '!':
      case '=': {
        const n = Number(line);
        if (n < 0) return { end: after, name: '' };
        if (after + n + 2 > buf.length) return undefined;
        return { end: after + n + 2, name: '' };
      }
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        const n = Number(line) * (type === '%' || type === '|' ? 2 : 1);
        let end = after;
        let name = '';
        for (let i = 0; i < Math.max(0, n); i++) {
          if (top && i === 0 && type === '*' && buf[end] === 0x24 /* $ */) {
            const e = buf.indexOf('\r\n', end);
            if (e < 0) return undefined;
            const len = Number(buf.toString('latin1', end + 1, e));
            if (e + 2 + len + 2 > buf.length) return undefined;
            name = buf.toString('latin1', e + 2, e + 2 + len).toLowerCase();
            end = e + 2 + len + 2;
            continue;
          }
          const v = this.value(end, false);
          if (!v) return undefined;
          end = v.end;
        }
        return { end, name };
      }
      default:
        // Inline command (e.g. "PING\r\n" typed by hand): one line.
        return { end: after, name: line.split(' ')[0]!.toLowerCase() };
    }
  }
}

// ---------------------------------------------------------------- the proxy

export interface DelayProxyOptions {
  protocol: Protocol;
  /** host:port of the real server. */
  upstream: { host: string; port: number };
  /** Added to every server→client chunk; change it any time with setDelay(). */
  delayMs?: number;
  roundTrips: RoundTrips;
  /** Pause reading from the server while this many bytes wait for their delay. */
  maxBufferedBytes?: number;
}

export interface DelayProxy {
  port: number;
  host: string;
  setDelay(ms: number): void;
  /** Mean time a chunk was actually held (ms), over the chunks held since the last call (setTimeout fires late, not early). */
  takeHeldMs(): { chunks: number; meanMs: number };
  /** Open client connections. */
  connections(): number;
  close(): Promise<void>;
}

export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const { protocol, roundTrips } = options;
  let delayMs = options.delayMs ?? 0;
  const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  const sockets = new Set<Socket>();
  let held = { chunks: 0, totalMs: 0 };

  const server: Server = createServer((client) => {
    client.setNoDelay(true);
    const upstream = connect({ host: options.upstream.host, port: options.upstream.port });
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);

    // Commands waiting for their replies: by requestID (MongoDB), in order (Redis).
    const byRequestId = new Map<number, Tag>();
    const inOrder: Tag[] = [];
    const up =
      protocol === 'mongodb'
        ? new MongoFramer((m) => {
            const tag = roundTrips.sent('mongodb', mongoCommandName(m.opCode, m.head));
            byRequestId.set(m.requestId, tag);
          })
        : new RespFramer((name) => inOrder.push(roundTrips.sent('redis', name)));
    const down =
      protocol === 'mongodb'
        ? new MongoFramer((m) => {
            const tag = byRequestId.get(m.responseTo);
            if (!tag) return; // a further reply of an exhaust/streaming command
            byRequestId.delete(m.responseTo);
            roundTrips.replied(tag);
          })
        : new RespFramer(() => {
            const tag = inOrder.shift();
            if (tag) roundTrips.replied(tag);
          });

    let closed = false;
    const closeBoth = () => {
      if (closed) return;
      closed = true;
      roundTrips.dropped([...byRequestId.values(), ...inOrder]);
      byRequestId.clear();
      inOrder.length = 0;
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      if (timer) clearTimeout(timer);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);

    // client → server: at once, counted as it passes.
    client.on('data', (chunk: Buffer) => {
      try {
        up.push(chunk);
      } catch (e) {
        process.stderr.write(`[delay-proxy] ${protocol}: ${e}\n`);
        return closeBoth();
      }
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    client.on('end', () => upstream.end());

    // server → client: each chunk held for delayMs, in arrival order.
    const queue: { chunk: Buffer; due: number; at: number }[] = [];
    let queued = 0;
    let timer: NodeJS.Timeout | undefined;
    let clientBlocked = false;
    let ended = false;
    const flowControl = () => {
      if (clientBlocked || queued > maxBuffered) upstream.pause();
      else upstream.resume();
    };
    /** Counts a server→client chunk and writes it to the client; false when the connection was closed for a parse error. */
    const deliver = (chunk: Buffer): boolean => {
      held.chunks++;
      try {
        down.push(chunk);
      } catch (e) {
        process.stderr.write(`[delay-proxy] ${protocol}: ${e}\n`);
        closeBoth();
        return false;
      }
      if (!client.write(chunk)) {
        clientBlocked = true;
        client.once('drain', () => {
          clientBlocked = false;
          schedule();
          flowControl();
        });
      }
      return true;
    };
    const flush = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length && queue[0]!.due <= now + 0.05 && !clientBlocked) {
        const { chunk, at } = queue.shift()!;
        queued -= chunk.length;
        held.totalMs += now - at;
        if (!deliver(chunk)) return;
      }
      if (!queue.length && ended) client.end();
      schedule();
      flowControl();
    };
    const schedule = () => {
      if (timer || !queue.length || clientBlocked) return;
      const wait = queue[0]!.due - performance.now();
      if (wait <= 0.05) {
        timer = setTimeout(flush, 0);
      } else timer = setTimeout(flush, wait);
    };
    upstream.on('data', (chunk: Buffer) => {
      const at = performance.now();
      if (delayMs <= 0 && !queue.length && !clientBlocked) {
        if (deliver(chunk) && clientBlocked) flowControl();
        return;
      }
      queue.push({ chunk, due: at + delayMs, at });
      queued += chunk.length;
      schedule();
      flowControl();
    });
    upstream.on('end', () => {
      ended = true;
      if (!queue.length) client.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    host: '127.0.0.1',
    setDelay(ms) {
      delayMs = ms;
    },
    takeHeldMs() {
      const out = { chunks: held.chunks, meanMs: held.chunks ? held.totalMs / held.chunks : 0 };
      held = { chunks: 0, totalMs: 0 };
      return out;
    },
    connections: () => [...sockets].length / 2,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------- URLs

/**
 * The MongoDB URL through a proxy: its one host replaced by the proxy's, with directConnection
 * (so the driver does not go round the proxy to the hosts a replica set advertises). Returns
 * the upstream host and port too. Only plain mongodb:// URLs: a proxy cannot follow SRV records,
 * and it cannot read TLS.
 */
export function proxiedMongoUrl(url: string): { upstream: { host: string; port: number }; through: (port: number) => string } {
  const m = /^mongodb:\/\/(?:([^@/]*)@)?([^/?]+)(\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`cannot proxy MONGODB_URL ${redact(url)}: only mongodb://host:port URLs (no mongodb+srv)`);
  const [, auth, hosts, pathPart, query] = m;
  const first = hosts!.split(',')[0]!;
  const hp = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(first)!;
  const params = new URLSearchParams((query ?? '').replace(/^\?/, ''));
  if (/^(true|yes|1)$/i.test(params.get('tls') ?? params.get('ssl') ?? ''))
    throw new Error('cannot count MongoDB commands over TLS: give a plain MONGODB_URL to the bench');
  params.set('directConnection', 'true');
  params.delete('replicaSet');
  return {
    upstream: { host: hp[1]!, port: Number(hp[2] ?? 27017) },
    through: (port) => `mongodb://${auth ? `${auth}@` : ''}127.0.0.1:${port}${pathPart ?? '/'}?${params}`,
  };
}

/** The Redis URL through a proxy (redis:// only, for the same reason). */
export function proxiedRedisUrl(url: string): { upstream: { host: string; port: number }; through: (port: number) => string } {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`cannot proxy REDIS_URL ${redact(url)}: only redis:// URLs (a proxy cannot read TLS)`);
  const upstream = { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 6379) };
  return {
    upstream,
    through: (port) => {
      const v = new URL(url);
      v.hostname = '127.0.0.1';
      v.port = String(port);
      return v.toString();
    },
  };
}

const redact = (url: string) => url.replace(/\/\/[^@/]*@/, '//…@');
