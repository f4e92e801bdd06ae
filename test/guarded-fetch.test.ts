// The address guard of metadataUrl fetching. Only loopback is ever connected
// to: a local node:http server on 127.0.0.1 (and [::1] when the host has
// IPv6). Every fetch also carries a tripwire (beforeConnect) that throws for
// any address other than loopback, so even a broken guard could not send
// traffic to 10.x or 169.254.x from this test.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addressProblem, FetchRefusedError, guardedFetch, type GuardOptions } from '../src/net/guarded-fetch.ts';

const metadata = readFileSync(new URL('./fixtures/saml/sp-entity-descriptor.xml', import.meta.url));
const CAP = 64 * 1024;

interface Local {
  server: Server;
  port: number;
  connections: number;
  requests: Array<{ url: string; host: string | undefined }>;
}

function handler(local: () => Local) {
  return (req: IncomingMessage, res: ServerResponse) => {
    local().requests.push({ url: req.url ?? '', host: req.headers.host });
    const url = new URL(req.url ?? '/', 'http://local');
    const port = local().port;
    switch (url.pathname) {
      case '/metadata':
        res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadata);
        return;
      case '/redirect-to-metadata':
        res.writeHead(302, { location: '/metadata' }).end();
        return;
      case '/redirect-to-imds':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      case '/redirect-to-ftp':
        res.writeHead(301, { location: `ftp://127.0.0.1:${port}/metadata` }).end();
        return;
      case '/redirect-without-location':
        res.writeHead(302).end();
        return;
      case '/chain': {
        const n = Number(url.searchParams.get('n'));
        res.writeHead(307, { location: n > 0 ? `/chain?n=${n - 1}` : '/metadata' }).end();
        return;
      }
      case '/exact':
        res.writeHead(200).end(Buffer.alloc(CAP, 'a'));
        return;
      case '/big-chunked': {
        // No content-length: the cap must hold while streaming.
        res.writeHead(200, { 'content-type': 'application/xml' });
        const chunk = Buffer.alloc(16 * 1024, 'a');
        let sent = 0;
        const pump = () => {
          while (sent < 1000 * CAP && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (sent = Infinity));
        pump();
        return;
      }
      case '/big-declared':
        res.writeHead(200, { 'content-length': String(CAP + 1) }).end(Buffer.alloc(CAP + 1, 'a'));
        return;
      case '/slow-headers':
        setTimeout(() => res.destroyed || res.writeHead(200).end(metadata), 5_000).unref();
        return;
      case '/slow-body': {
        res.writeHead(200, { 'content-type': 'application/xml' });
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('<!-- . -->')), 50);
        drip.unref();
        return;
      }
      case '/not-found':
        res.writeHead(404).end('nope');
        return;
      case '/error':
        res.writeHead(500).end('boom');
        return;
      default:
        res.writeHead(404).end();
    }
  };
}

async function listen(host: string): Promise<Local | null> {
  const local: Local = { server: undefined as unknown as Server, port: 0, connections: 0, requests: [] };
  local.server = createServer(handler(() => local));
  local.server.on('connection', () => local.connections++);
  try {
    local.server.listen(0, host);
    await once(local.server, 'listening');
  } catch {
    return null; // no IPv6 on this host
  }
  local.port = (local.server.address() as AddressInfo).port;
  return local;
}

let v4: Local;
let v6: Local | null;
const attempts: Array<{ address: string; url: string }> = [];

/** Refuses, loudly, any connection that is not to loopback. */
const tripwire: GuardOptions['beforeConnect'] = (target) => {
  attempts.push(target);
  if (target.address !== '127.0.0.1' && target.address !== '::1') throw new Error(`tripwire: would connect to ${target.address}`);
};

const guarded = (overrides: Partial<GuardOptions> = {}): GuardOptions => ({
  allowPrivateAddresses: false,
  timeoutMs: 2_000,
  maxBytes: CAP,
  beforeConnect: tripwire,
  ...overrides,
});
const allowed = (overrides: Partial<GuardOptions> = {}) => guarded({ allowPrivateAddresses: true, ...overrides });

async function refusal(promise: Promise<unknown>): Promise<FetchRefusedError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(FetchRefusedError);
    return err as FetchRefusedError;
  }
  throw new Error('the fetch was not refused');
}

beforeAll(async () => {
  v4 = (await listen('127.0.0.1'))!;
  v6 = await listen('::1');
});
afterAll(async () => {
  for (const s of [v4, v6]) if (s) await new Promise((r) => s.server.close(r));
});
beforeEach(() => {
  attempts.length = 0;
  v4.connections = 0;
  v4.requests.length = 0;
  if (v6) v6.connections = 0;
});

describe('guardedFetch with private addresses allowed (the local test server)', () => {
  it('fetches a metadata document', async () => {
    const res = await guardedFetch(`http://127.0.0.1:${v4.port}/metadata`, allowed());
    expect(res.body.equals(metadata)).toBe(true);
    expect(res.contentType).toBe('application/samlmetadata+xml');
    expect(v4.connections).toBe(1);
  });

  it('connects to the address it checked: the resolver is asked once, and the socket goes there', async () => {
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // sp.metadata.test exists nowhere but in this resolver: a second, real DNS lookup would fail.
    const res = await guardedFetch(`http://sp.metadata.test:${v4.port}/metadata`, allowed({ resolve }));
    expect(res.body.equals(metadata)).toBe(true);
    expect(asked).toEqual(['sp.metadata.test']);
    expect(v4.requests).toEqual([{ url: '/metadata', host: `sp.metadata.test:${v4.port}` }]);
  });

  it('follows a redirect to an allowed address', async () => {
    const res = await guardedFetch(`http://127.0.0.1:${v4.port}/redirect-to-metadata`, allowed());
    expect(res.body.equals(metadata)).toBe(true);
    expect(res.url).toBe(`http://127.0.0.1:${v4.port}/metadata`);
  });

  it('refuses a redirect to the cloud metadata service 169.254.169.254, before connecting to it', async () => {
    const err = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/redirect-to-imds`, allowed()));
    expect(err.reason).toMatch(/address is not allowed: 169\.254\.169\.254 is a cloud metadata service address/);
    expect(attempts.map((a) => a.address)).toEqual(['127.0.0.1']);
  });

  it('refuses a redirect to another scheme, and one without a Location', async () => {
    expect((await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/redirect-to-ftp`, allowed()))).reason).toMatch(
      /scheme ftp is not allowed/,
    );
    expect((await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/redirect-without-location`, allowed()))).reason).toMatch(
      /without a Location/,
    );
  });

  it('follows at most 3 redirects', async () => {
    // chain?n=2 answers 3 redirects, then the document: 4 requests.
    const three = await guardedFetch(`http://127.0.0.1:${v4.port}/chain?n=2`, allowed());
    expect(three.body.equals(metadata)).toBe(true);
    expect(v4.requests.length).toBe(4);
    // chain?n=3 answers 4 redirects: the 4th is not followed.
    const err = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/chain?n=3`, allowed()));
    expect(err.reason).toMatch(/too many redirects \(more than 3\)/);
    expect(v4.requests.length).toBe(4 + 4);
    expect(v4.requests.at(-1)!.url).toBe('/chain?n=0');
  });

  it('accepts a body of exactly the cap and refuses one byte more, declared or streamed', async () => {
    expect((await guardedFetch(`http://127.0.0.1:${v4.port}/exact`, allowed())).body.length).toBe(CAP);
    const declared = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/big-declared`, allowed()));
    expect(declared.reason).toMatch(new RegExp(`larger than ${CAP} bytes`));
    // JS heap and Buffer memory together (a client holding the body would hold it in Buffers):
    // the server offers 1000 caps (64 MB); reading stops at the cap, far below 40 caps.
    const used = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const before = used();
    const streamed = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/big-chunked`, allowed()));
    expect(streamed.reason).toMatch(new RegExp(`larger than ${CAP} bytes`));
    expect(used() - before).toBeLessThan(40 * CAP);
  });

  it('times out on a server that does not answer, and on one that never finishes the body', async () => {
    for (const path of ['/slow-headers', '/slow-body']) {
      const started = Date.now();
      const err = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}${path}`, allowed({ timeoutMs: 300 })));
      expect(err.reason).toMatch(/timed out after 300 ms/);
      expect(Date.now() - started, 'cut at its timeout, not left to the server').toBeLessThan(5_000);
    }
  });

  it('refuses any answer but 200', async () => {
    expect((await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/not-found`, allowed()))).reason).toMatch(/HTTP 404, expected 200/);
    expect((await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/error`, allowed()))).reason).toMatch(/HTTP 500/);
  });

  it('reports a refused connection and an unknown host as reasons', async () => {
    const closed = await listen('127.0.0.1');
    const port = closed!.port;
    await new Promise((r) => closed!.server.close(r));
    expect((await refusal(guardedFetch(`http://127.0.0.1:${port}/`, allowed()))).reason).toMatch(/connection refused/);
    const nowhere = async () => [] as Array<{ address: string; family: number }>;
    expect((await refusal(guardedFetch('http://nowhere.invalid/', allowed({ resolve: nowhere })))).reason).toMatch(/could not be resolved/);
  });
});

describe('guardedFetch with the default options refuses non-public addresses before connecting', () => {
  it('http://127.0.0.1:<port>/ : no connection reaches the local server', async () => {
    const err = await refusal(guardedFetch(`http://127.0.0.1:${v4.port}/metadata`, guarded()));
    expect(err.reason).toMatch(/address is not allowed: 127\.0\.0\.1 is a non-public address \(loopback\)/);
    expect(v4.connections).toBe(0);
    expect(attempts).toEqual([]);
  });

  it('http://[::1]:<port>/ : no connection reaches the local server', async () => {
    const port = v6?.port ?? v4.port;
    const err = await refusal(guardedFetch(`http://[::1]:${port}/metadata`, guarded()));
    expect(err.reason).toMatch(/address is not allowed: ::1 is a non-public address \(loopback\)/);
    if (v6) expect(v6.connections).toBe(0);
    expect(attempts).toEqual([]);
  });

  it('http://10.0.0.1/ : refused at once, never connected to', async () => {
    const started = performance.now();
    const err = await refusal(guardedFetch('http://10.0.0.1/saml/metadata', guarded({ timeoutMs: 5_000 })));
    expect(performance.now() - started, 'far from its 5 s timeout: nothing was tried').toBeLessThan(2_000);
    expect(err.reason).toMatch(/address is not allowed: 10\.0\.0\.1 is a non-public address \(private\)/);
    expect(attempts).toEqual([]);
  });

  it('http://169.254.169.254/latest/meta-data : refused at once, never connected to', async () => {
    const started = performance.now();
    const err = await refusal(guardedFetch('http://169.254.169.254/latest/meta-data', guarded({ timeoutMs: 5_000 })));
    expect(performance.now() - started, 'far from its 5 s timeout: nothing was tried').toBeLessThan(2_000);
    expect(err.reason).toMatch(/address is not allowed: 169\.254\.169\.254/);
    expect(attempts).toEqual([]);
  });

  it('the hostname localhost resolves to loopback and is refused', async () => {
    const err = await refusal(guardedFetch(`http://localhost:${v4.port}/metadata`, guarded()));
    expect(err.reason).toMatch(/address is not allowed: localhost resolves to (127\.0\.0\.1|::1)/);
    expect(v4.connections).toBe(0);
    expect(attempts).toEqual([]);
  });

  it('other spellings of loopback: decimal, short and IPv4-mapped IPv6', async () => {
    for (const url of [
      `http://2130706433:${v4.port}/metadata`,
      `http://127.1:${v4.port}/metadata`,
      `http://0x7f.0.0.1:${v4.port}/metadata`,
      `http://[::ffff:127.0.0.1]:${v4.port}/metadata`,
      `http://[::ffff:7f00:1]:${v4.port}/metadata`,
    ]) {
      const err = await refusal(guardedFetch(url, guarded()));
      expect(err.reason, url).toMatch(/address is not allowed/);
    }
    expect(v4.connections).toBe(0);
    expect(attempts).toEqual([]);
  });

  it('a name that resolves to any non-public address is refused as a whole', async () => {
    const resolve = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    const err = await refusal(guardedFetch('http://mixed.metadata.test/', guarded({ resolve })));
    expect(err.reason).toMatch(/mixed\.metadata\.test resolves to 10\.1\.2\.3/);
    expect(attempts).toEqual([]);
  });

  it('schemes other than http and https, and credentials in the URL, are refused', async () => {
    expect((await refusal(guardedFetch('file:///etc/passwd', guarded()))).reason).toMatch(/scheme file is not allowed/);
    expect((await refusal(guardedFetch('ftp://example.com/metadata.xml', guarded()))).reason).toMatch(/scheme ftp is not allowed/);
    expect((await refusal(guardedFetch('gopher://example.com/', guarded()))).reason).toMatch(/scheme gopher is not allowed/);
    expect((await refusal(guardedFetch('http://user:pw@example.com/', guarded()))).reason).toMatch(/credentials/);
    expect((await refusal(guardedFetch('not a url', guarded()))).reason).toMatch(/not valid/);
    expect(attempts).toEqual([]);
  });
});

describe('addressProblem', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['10.0.0.1', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.0.1', /link-local/],
    ['169.254.169.254', /cloud metadata/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['255.255.255.255', /reserved or broadcast/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fe80::1%eth0', /link-local/],
    ['ff02::1', /multicast/],
    ['::ffff:10.0.0.1', /10\.0\.0\.1 is a non-public address \(private\)/],
    ['::ffff:a9fe:a9fe', /cloud metadata/],
    ['64:ff9b::7f00:1', /loopback/],
    ['2002:c0a8:101::1', /192\.168\.1\.1.*private/],
    ['fd00:ec2::254', /cloud metadata/],
  ])('%s is refused', (address, reason) => {
    expect(addressProblem(address, false)).toMatch(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => {
    expect(addressProblem(address, false)).toBeNull();
  });

  it('allowPrivateAddresses allows the private ranges but never the cloud metadata services', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '::1', 'fe80::1', '169.254.1.1']) expect(addressProblem(a, true)).toBeNull();
    for (const a of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254'])
      expect(addressProblem(a, true)).toMatch(/cloud metadata/);
  });
});
