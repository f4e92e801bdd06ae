// The GraphiQL page over real HTTP (node:http, so that Host, Origin and Sec-Fetch-Site are
// exactly what a browser, a rebound DNS name or a proxy would send): the quick start's
// administrator token only for this machine's browser on the gateway's own loopback address,
// never behind a proxy, cross-site or in production; and the 9 MB page compressed once,
// cacheable when it holds no token, and counted by the per-address rate limit.
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayReceiveAdminToken } from '../src/graphql/graphiql-access.ts';
import { EXAMPLE_OPERATION, TOKEN_PLACEHOLDER } from '../src/graphql/graphiql.ts';
import { chooseEncoding, encodedPage, matchesIfNoneMatch } from '../src/graphql/encoded-page.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

interface Page {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as sent (compressed when content-encoding says so). */
  sent: Buffer;
  html: string;
  token: string | null;
}

const JWT = /Bearer (ey[\w-]+\.[\w-]+\.[\w-]+)/;

/** GET /graphql as a browser asks for a page, with these headers over the defaults (Host: the gateway's own). */
function getPage(gw: TestGateway, headers: Record<string, string> = {}): Promise<Page> {
  const { hostname, port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        path: '/graphql',
        agent: false,
        headers: {
          host: `127.0.0.1:${port}`,
          accept: 'text/html,application/xhtml+xml',
          'sec-fetch-site': 'none',
          'sec-fetch-mode': 'navigate',
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const sent = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          const raw = encoding === 'br' ? brotliDecompressSync(sent) : encoding === 'gzip' ? gunzipSync(sent) : sent;
          const html = raw.toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, sent, html, token: JWT.exec(html)?.[1] ?? null });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const ownPort = (gw: TestGateway) => new URL(gw.url).port;
const corsHeaders = (page: Page) => Object.keys(page.headers).filter((h) => h.startsWith('access-control-'));

describe('the quick start page and the administrator token', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  const expectNoToken = (page: Page) => {
    expect(page.status).toBe(200);
    expect(page.html).toContain('YogaGraphiQL');
    expect(page.token).toBeNull();
    expect(page.html).toContain(JSON.stringify(TOKEN_PLACEHOLDER).slice(1, -1));
  };

  it('a browser on this machine that opened the gateway by its loopback address gets the token, and it works', async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST']) {
      const page = await getPage(gw, { host: `${host}:${ownPort(gw)}` });
      expect(page.status, host).toBe(200);
      expect(page.token, host).not.toBeNull();
      expect(page.html).toContain(JSON.stringify(EXAMPLE_OPERATION).slice(1, 40));
      // Kept by no cache, sent to no other site, readable by no other origin.
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers.etag).toBeUndefined();
      expect(corsHeaders(page)).toEqual([]);
      const me = await gw.raw({ query: '{ me { id } }' }, { authorization: `Bearer ${page.token}` });
      expect(me.data).toEqual({ me: { id: gw.adminId } });
    }
  });

  it('a same-origin request of the page itself gets it too, and no CORS headers though CORS_ORIGINS lists its origin', async () => {
    expect(gw.config.http.corsOrigins).toContain('http://127.0.0.1:*');
    const page = await getPage(gw, {
      origin: `http://127.0.0.1:${ownPort(gw)}`,
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'cors',
    });
    expect(page.token).not.toBeNull();
    expect(corsHeaders(page)).toEqual([]);
  });

  it("a Host that is not the gateway's own loopback address (a DNS name rebound to 127.0.0.1) gets no token", async () => {
    for (const host of [
      `attacker.example:${ownPort(gw)}`,
      'attacker.example',
      `127.0.0.1:${Number(ownPort(gw)) === 1 ? 2 : 1}`,
      'localhost',
      `127.0.0.2:${ownPort(gw)}`,
    ]) {
      const page = await getPage(gw, { host, 'sec-fetch-site': 'same-origin' });
      expectNoToken(page);
    }
  });

  it("another site gets no token: Sec-Fetch-Site same-site or cross-site, an Origin other than the page's own", async () => {
    const other = 'http://localhost:5173';
    const crossOrigin = await getPage(gw, { origin: other, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' });
    expectNoToken(crossOrigin);
    // The page without a token holds no secret: an allowed origin may read it like any answer.
    expect(crossOrigin.headers['access-control-allow-origin']).toBe(other);
    expectNoToken(await getPage(gw, { 'sec-fetch-site': 'cross-site' }));
    expectNoToken(await getPage(gw, { 'sec-fetch-site': 'same-site' }));
    expectNoToken(await getPage(gw, { origin: other }));
    expectNoToken(await getPage(gw, { origin: 'null' }));
    expectNoToken(await getPage(gw, { origin: `https://127.0.0.1:${ownPort(gw)}` }));
  });

  it('a loopback peer that is not a browser on this machine gets no token (checked on the peer address itself)', () => {
    const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
      ({ socket: { remoteAddress, localPort: 4000 }, headers: { host: '127.0.0.1:4000', ...headers } }) as any;
    expect(mayReceiveAdminToken(req('127.0.0.1'), false)).toBe(true);
    expect(mayReceiveAdminToken(req('::ffff:127.0.0.1'), false)).toBe(true);
    expect(mayReceiveAdminToken(req('::1'), false)).toBe(true);
    expect(mayReceiveAdminToken(req('192.0.2.7'), false)).toBe(false);
    expect(mayReceiveAdminToken(req('::ffff:192.0.2.7'), false)).toBe(false);
    // HTTP/2 names the host in :authority; over TLS the origin is https://.
    expect(
      mayReceiveAdminToken({ socket: { remoteAddress: '::1', localPort: 4000 }, headers: { ':authority': 'localhost:4000' } } as any, true),
    ).toBe(true);
    expect(mayReceiveAdminToken(req('127.0.0.1', { origin: 'http://127.0.0.1:4000' }), true)).toBe(false);
    expect(mayReceiveAdminToken(req('127.0.0.1', { origin: 'https://127.0.0.1:4000' }), true)).toBe(true);
  });

  describe('behind a proxy on this machine (TRUST_PROXY=1)', () => {
    let proxied: TestGateway;
    beforeAll(async () => {
      proxied = await startGateway({ env: { TRUST_PROXY: '1' } });
    });
    afterAll(async () => proxied?.close());

    it('a request a proxy forwarded gets no token, whatever the header says', async () => {
      const viaProxy: Record<string, string>[] = [
        { 'x-forwarded-for': '203.0.113.5' },
        { 'x-forwarded-for': '127.0.0.1' },
        { forwarded: 'for=203.0.113.5' },
        { 'x-real-ip': '203.0.113.5' },
        { 'x-forwarded-host': `127.0.0.1:${ownPort(proxied)}` },
        { via: '1.1 nginx' },
      ];
      for (const headers of viaProxy) {
        expectNoToken(await getPage(proxied, headers));
      }
      // The same request without the proxy's header: the token (so it is the header that took it away).
      expect((await getPage(proxied)).token).not.toBeNull();
    });
  });
});

describe('the page in production (NODE_ENV=production, GRAPHIQL=true)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { NODE_ENV: 'production', GRAPHIQL: 'true', INTROSPECTION: 'true' } });
  });
  afterAll(async () => gw?.close());

  it('never carries a token or the example, even for the loopback browser request that gets one in quick start', async () => {
    const page = await getPage(gw);
    expect(page.status).toBe(200);
    expect(page.html).toContain('YogaGraphiQL');
    expect(page.token).toBeNull();
    expect(page.html).not.toContain('Bearer');
    expect(page.html).not.toContain('query Me');
    expect(page.headers.etag).toMatch(/^"/);
  });
});

describe('the page: compressed once, cacheable without a token', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());
  /** A request that gets no token (another site's navigation). */
  const plain = (headers: Record<string, string> = {}) => getPage(gw, { 'sec-fetch-site': 'cross-site', ...headers });

  it('br or gzip per Accept-Encoding, the same page, a quarter of its size; identity when the client takes no encoding', async () => {
    const identity = await plain();
    const br = await plain({ 'accept-encoding': 'gzip, deflate, br, zstd' });
    const gzip = await plain({ 'accept-encoding': 'gzip, deflate' });
    const notBr = await plain({ 'accept-encoding': 'br;q=0, *' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(br.headers['content-encoding']).toBe('br');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(notBr.headers['content-encoding']).toBe('gzip');
    expect(identity.sent.length).toBeGreaterThan(5_000_000);
    for (const page of [br, gzip]) {
      expect(page.html).toBe(identity.html);
      expect(page.sent.length).toBeLessThan(identity.sent.length / 3);
      expect(Number(page.headers['content-length'])).toBe(page.sent.length);
    }
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(new Set([identity, br, gzip].map((p) => p.headers.etag)).size).toBe(3);
  });

  it('If-None-Match with its ETag: 304 and no body; another ETag: the page', async () => {
    const first = await plain({ 'accept-encoding': 'br' });
    expect(first.headers['cache-control']).toBe('no-cache');
    const etag = String(first.headers.etag);
    const again = await plain({ 'accept-encoding': 'br', 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.sent.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect((await plain({ 'accept-encoding': 'br', 'if-none-match': '"something-else"' })).status).toBe(200);
    // The browser that may have the token is never told to show its cached page without it.
    const owner = await getPage(gw, { 'accept-encoding': 'br', 'if-none-match': etag });
    expect(owner.status).toBe(200);
    expect(owner.token).not.toBeNull();
  });

  it('renders and compresses once: every request gets the same bytes (encodedPage)', async () => {
    let renders = 0;
    const page = encodedPage(async () => {
      renders++;
      return '<html>' + 'GraphiQL '.repeat(50_000) + '</html>';
    });
    const all = await Promise.all([...Array(6)].map((_, i) => page.get(i % 2 ? 'br' : 'gzip')));
    expect(renders).toBe(1);
    expect(all[0]!.bytes).toBe(all[2]!.bytes);
    expect(all[1]!.bytes).toBe(all[3]!.bytes);
    expect((await page.get('br')).bytes).toBe(all[1]!.bytes);
    expect(all[1]!.bytes.length).toBeLessThan(2000);
  });

  it('Accept-Encoding and If-None-Match are read as RFC 9110 says', () => {
    expect(chooseEncoding(undefined)).toBe('identity');
    expect(chooseEncoding('gzip;q=0.5, br;q=0.8')).toBe('br');
    expect(chooseEncoding('br;q=0, gzip;q=0')).toBe('identity');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('identity, deflate')).toBe('identity');
    expect(chooseEncoding('GZIP')).toBe('gzip');
    expect(chooseEncoding(',;,;q=,'.repeat(10_000))).toBe('identity');
    expect(matchesIfNoneMatch('W/"a-br", "b-br"', '"b-br"')).toBe(true);
    expect(matchesIfNoneMatch('W/"a-br"', '"a-br"')).toBe(true);
    expect(matchesIfNoneMatch('*', '"a-br"')).toBe(true);
    expect(matchesIfNoneMatch('"a-gzip"', '"a-br"')).toBe(false);
    expect(matchesIfNoneMatch(undefined, '"a-br"')).toBe(false);
  });
});

describe('the page and the per-address rate limit', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { RATE_LIMIT_PER_IP_PER_MINUTE: '3' } });
  });
  afterAll(async () => gw?.close());

  it('each GET of the page counts like any request without a token: the fourth in a minute is 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await getPage(gw, { 'sec-fetch-site': 'cross-site', 'accept-encoding': 'br' })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await getPage(gw);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.token).toBeNull();
  });
});
