// Fetches a URL given by a client (SAML metadataUrl) without letting it reach
// inside the network: only http(s); every address the host resolves to is
// checked, and the connection goes to the checked address (a custom `lookup`
// hands it to the socket, so a second DNS answer cannot swap it: no DNS
// rebinding); literal IP hosts are checked before any connection; redirects
// are followed by hand, each target checked the same way; one deadline for
// the whole fetch; the body is capped while it streams.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

export interface GuardOptions {
  /** Allow loopback, private, link-local, CGNAT and other non-public addresses (tests, closed networks). Cloud metadata endpoints stay refused. */
  allowPrivateAddresses: boolean;
  /** Deadline for the whole fetch, redirects and DNS included. */
  timeoutMs: number;
  /** Largest body accepted. */
  maxBytes: number;
  /** Redirects followed at most (default 3). */
  maxRedirects?: number;
  /** Resolver (default dns.lookup with all: true). */
  resolve?: (hostname: string) => Promise<Array<{ address: string; family: number }>>;
  /** Called right before a connection to a checked address is opened; throwing aborts the fetch (tests use it as a tripwire). */
  beforeConnect?: (target: { url: string; address: string; family: number }) => void;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface FetchResult {
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
  contentType: string | null;
}

/** Why a fetch failed, in words a client can act on. */
export class FetchRefusedError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
    this.name = 'FetchRefusedError';
  }
}

const refused = (reason: string) => new FetchRefusedError(reason);

// ------------------------------------------------------------------ addresses

type Range = [bytes: number[], prefix: number, what: string];

/** IPv4 ranges that are never a public internet host. */
const V4_BLOCKED: Range[] = [
  [[0, 0, 0, 0], 8, 'unspecified ("this network")'],
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'carrier-grade NAT (shared)'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'IETF protocol assignment'],
  [[192, 0, 2, 0], 24, 'documentation'],
  [[192, 88, 99, 0], 24, '6to4 relay anycast'],
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'benchmarking'],
  [[198, 51, 100, 0], 24, 'documentation'],
  [[203, 0, 113, 0], 24, 'documentation'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved or broadcast'],
];

/** IPv6 ranges that are never a public internet host (embedded IPv4 forms are handled apart). */
const V6_BLOCKED: Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 128, 'unspecified'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'],
  [[0x01, 0, 0, 0, 0, 0, 0, 0], 64, 'discard-only'],
  [[0x20, 0x01, 0, 0], 32, 'Teredo'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation'],
  [[0xfc], 7, 'unique local (private)'],
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'site-local'],
  [[0xff], 8, 'multicast'],
];

/** Cloud instance-metadata endpoints: refused even when private addresses are allowed. */
const METADATA_SERVICES = new Set(
  ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'].map((a) => String(isIP(a) === 4 ? parseV4(a) : parseV6(a))),
);

function inRange(bytes: number[], [net, prefix]: Range): boolean {
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[bit / 8] ?? 0) & mask) !== ((net[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function parseV4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

/** 16 bytes of an IPv6 address (zone id dropped), or null. */
function parseV6(input: string): number[] | null {
  let s = input.replace(/%.*$/, '');
  let tail: number[] = [];
  const v4 = /:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const b = parseV4(v4[1]!);
    if (!b) return null;
    tail = [(b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!];
    s = s.slice(0, v4.index + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const group = (h: string) => (h === '' ? [] : h.split(':'));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const words = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest].map((g) => parseInt(g, 16));
  if (tail.length) words.splice(6, 2, ...tail);
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/**
 * Why an address may not be fetched from, or null when it is a public one
 * (or allowed by allowPrivateAddresses). IPv4 inside IPv6 (mapped ::ffff:a.b.c.d,
 * compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged as that IPv4.
 */
export function addressProblem(address: string, allowPrivate: boolean): string | null {
  const family = isIP(address);
  const bytes = family === 4 ? parseV4(address) : family === 6 ? parseV6(address) : null;
  if (!bytes) return `${address} is not an IP address`;
  if (family === 6) {
    const embedded = embeddedV4(bytes);
    if (embedded) {
      const problem = addressProblem(embedded.join('.'), allowPrivate);
      return problem && `${address} (${problem})`;
    }
  }
  if (METADATA_SERVICES.has(String(bytes))) return `${address} is a cloud metadata service address`;
  if (allowPrivate) return null;
  const range = (family === 4 ? V4_BLOCKED : V6_BLOCKED).find((r) => inRange(bytes, r));
  return range ? `${address} is a non-public address (${range[2]})` : null;
}

function embeddedV4(b: number[]): number[] | null {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12); // ::ffff:a.b.c.d
  if (zeros(0, 12) && !(zeros(12, 15) && (b[15] === 0 || b[15] === 1))) return b.slice(12); // ::a.b.c.d (not :: or ::1)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.slice(12); // 64:ff9b::/96
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6); // 2002:aabb:ccdd::/16
  return null;
}

// ------------------------------------------------------------------ fetching

interface Target {
  url: URL;
  address: string;
  family: number;
}

/** Checks a URL and picks the address to connect to; refuses before any connection. */
async function check(raw: string | URL, options: GuardOptions, remaining: () => number): Promise<Target> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(`the scheme ${url.protocol.replace(/:$/, '')} is not allowed (only http and https)`);
  if (url.username || url.password) throw refused('credentials in the URL are not allowed');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw refused('the URL has no host');
  if (isIP(host)) {
    const problem = addressProblem(host, options.allowPrivateAddresses);
    if (problem) throw refused(`the address is not allowed: ${problem}`);
    return { url, address: host, family: isIP(host) };
  }
  const resolve = options.resolve ?? ((h: string) => dnsLookup(h, { all: true, verbatim: true }));
  let answers: Array<{ address: string; family: number }>;
  try {
    answers = await withDeadline(resolve(host), remaining(), options);
  } catch (err) {
    if (err instanceof FetchRefusedError) throw err;
    throw refused(`the host ${host} could not be resolved`);
  }
  if (answers.length === 0) throw refused(`the host ${host} could not be resolved`);
  // Every answer must be acceptable: a name that also points inside is refused as a whole.
  for (const a of answers) {
    const problem = addressProblem(a.address, options.allowPrivateAddresses);
    if (problem) throw refused(`the address is not allowed: ${host} resolves to ${problem}`);
  }
  return { url, address: answers[0]!.address, family: answers[0]!.family };
}

const timedOut = (options: GuardOptions) => refused(`the fetch timed out after ${options.timeoutMs} ms`);

function withDeadline<T>(promise: Promise<T>, ms: number, options: GuardOptions): Promise<T> {
  if (ms <= 0) return Promise.reject(timedOut(options));
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut(options)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

type Answer = { kind: 'redirect'; location: string } | { kind: 'body'; body: Buffer; contentType: string | null };

function request(target: Target, options: GuardOptions, deadline: number): Promise<Answer> {
  options.beforeConnect?.({ url: target.url.href, address: target.address, family: target.family });
  // The socket gets the checked address, whatever DNS would answer now.
  const lookup: LookupFunction = (_hostname, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as any)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(answer!);
    };
    const timer = setTimeout(() => finish(timedOut(options)), Math.max(0, deadline - Date.now()));
    const req = client.request(target.url, {
      method: 'GET',
      agent: false,
      lookup,
      headers: {
        accept: 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1',
        'accept-encoding': 'identity',
        'user-agent': 'identity-gateway-saml-metadata',
        ...options.headers,
      },
    });
    req.on('error', (err) => finish(refused(`the fetch failed: ${describeNetError(err)}`)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if ([301, 302, 303, 307, 308].includes(status)) {
        const location = res.headers.location;
        res.resume();
        if (!location) return finish(refused(`the server answered HTTP ${status} without a Location`));
        return finish(null, { kind: 'redirect', location });
      }
      if (status !== 200) {
        res.resume();
        return finish(refused(`the server answered HTTP ${status}, expected 200`));
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        return finish(refused(`the document is larger than ${options.maxBytes} bytes`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return finish(refused(`the document is larger than ${options.maxBytes} bytes`));
        chunks.push(chunk);
      });
      res.on('error', (err) => finish(refused(`the fetch failed: ${describeNetError(err)}`)));
      res.on('aborted', () => finish(refused('the server closed the connection before the end of the document')));
      res.on('end', () => {
        const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : null;
        finish(null, { kind: 'body', body: Buffer.concat(chunks, size), contentType });
      });
    });
    req.end();
  });
}

function describeNetError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      return err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') ? `TLS error (${err.code})` : (err.code ?? 'network error');
  }
}

/** GET `url` under the guard; throws FetchRefusedError with the reason on any failure. */
export async function guardedFetch(url: string, options: GuardOptions): Promise<FetchResult> {
  const deadline = Date.now() + options.timeoutMs;
  const remaining = () => deadline - Date.now();
  const maxRedirects = options.maxRedirects ?? 3;
  let current: string | URL = url;
  for (let hop = 0; ; hop++) {
    const target = await check(current, options, remaining);
    if (remaining() <= 0) throw timedOut(options);
    const answer = await request(target, options, deadline);
    if (answer.kind === 'body') return { body: answer.body, url: target.url.href, contentType: answer.contentType };
    if (hop >= maxRedirects) throw refused(`too many redirects (more than ${maxRedirects})`);
    try {
      current = new URL(answer.location, target.url);
    } catch {
      throw refused('the redirect Location is not a valid URL');
    }
  }
}
