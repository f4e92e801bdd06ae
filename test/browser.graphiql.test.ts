// GraphiQL served by the gateway itself: headless Chromium loads /graphql with every
// request beyond loopback aborted (and recorded), runs the pre-filled operation and
// reads the result from the page; a screenshot is kept in test-artifacts/graphiql.png.
// Without Chromium: fails under CI, skipped loudly elsewhere (test/support/browser.ts).
// The per-environment switches (GRAPHIQL, INTROSPECTION, NODE_ENV=production) need no browser.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { EXAMPLE_OPERATION } from '../src/graphql/graphiql.ts';
import { browserSuite, launchChromium } from './support/browser.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const ARTIFACTS = 'test-artifacts';
const isLoopbackUrl = (url: string) => {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'blob:' || protocol === 'data:') return true; // in-page: the Monaco workers start from blob: URLs
  return ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
};

browserSuite('GraphiQL in headless Chromium, with no network beyond loopback', () => {
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    gw = await startGateway();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('loads from the gateway alone, runs the pre-filled Me operation with the pre-filled token and shows the admin id', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const requested: string[] = [];
    const aborted: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (isLoopbackUrl(url)) return route.continue();
      aborted.push(url);
      return route.abort('blockedbyclient');
    });
    context.on('request', (req) => requested.push(req.url()));
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));

    await page.goto(gw.url, { waitUntil: 'load' });
    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 30_000 });
    // The editors are ready once the pre-filled operation shows.
    await page.locator('.graphiql-query-editor').getByText('query Me').first().waitFor({ timeout: 30_000 });
    await run.click();

    const response = page.locator('.graphiql-response');
    await expect.poll(async () => response.innerText(), { timeout: 30_000 }).toContain(gw.adminId);
    // Monaco renders spaces as no-break spaces; the pane then holds the JSON answer.
    const shown = JSON.parse((await response.innerText()).replace(/\u00a0/g, ' '));
    expect(shown).toEqual({ data: { me: { id: gw.adminId, username: 'admin', email: { email: expect.any(String), isVerified: true } } } });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}/graphiql.png`, fullPage: true });
    await context.close();

    expect(aborted).toEqual([]);
    expect(requested.filter((url) => !isLoopbackUrl(url))).toEqual([]);
    expect(requested.some((url) => url.startsWith(gw.url))).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});

browserSuite("GraphiQL in Chromium: the token stays with the gateway's own page", () => {
  let gw: TestGateway;
  let browser: Browser;
  let otherSite: Server;
  let otherPort: number;
  /** A rebound DNS name: Chromium resolves it to 127.0.0.1, as an attacker's DNS would after the page loaded. */
  const REBOUND = 'rebound.test';

  beforeAll(async () => {
    gw = await startGateway();
    browser = await launchChromium([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
    // Another site on this machine (a dev server on another port): an empty page to run a fetch from.
    otherSite = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>other</title>'));
    await new Promise<void>((resolve) => otherSite.listen(0, '127.0.0.1', resolve));
    otherPort = (otherSite.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => otherSite?.close(resolve));
    await gw?.close();
  });

  /** Opens `pageUrl` (a light one: /health) and fetches `target` from it as a script would (Accept: text/html). */
  async function fetchFrom(pageUrl: string, target: string) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(pageUrl, { waitUntil: 'load' });
      return await page.evaluate(async (url) => {
        const res = await fetch(url, { headers: { accept: 'text/html' } });
        return { status: res.status, text: await res.text() };
      }, target);
    } finally {
      await context.close();
    }
  }
  const gwPort = () => new URL(gw.url).port;

  it('a page of another local port may read the page (CORS_ORIGINS allows localhost:*), but it holds no token', async () => {
    expect(gw.config.http.corsOrigins).toContain('http://localhost:*');
    const read = await fetchFrom(`http://localhost:${otherPort}/`, `http://localhost:${gwPort()}/graphql`);
    expect(read.status).toBe(200);
    expect(read.text).toContain('YogaGraphiQL');
    expect(read.text).not.toMatch(/Bearer ey/);
  });

  it('a page whose DNS name was rebound to 127.0.0.1 reads the page same-origin, without the token', async () => {
    const origin = `http://${REBOUND}:${gwPort()}`;
    const read = await fetchFrom(`${origin}/health`, `${origin}/graphql`);
    expect(read.status).toBe(200);
    expect(read.text).toContain('YogaGraphiQL');
    expect(read.text).not.toMatch(/Bearer ey/);
    // The gateway's own address in the same browser still gets it.
    const own = await fetchFrom(`${gw.baseUrl}/health`, gw.url);
    expect(own.text).toMatch(/Bearer ey/);
  });
});

describe('GraphiQL and introspection per environment', () => {
  const html = (url: string) => fetch(url, { headers: { accept: 'text/html' } });
  const introspect = (gw: TestGateway) => gw.raw({ query: '{ __schema { queryType { name } } }' });
  const typeQuery = (gw: TestGateway) => gw.raw({ query: '{ __type(name: "User") { name } }' });

  describe('NODE_ENV=production', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { NODE_ENV: 'production' } });
    });
    afterAll(async () => gw?.close());

    it('GET /graphql with Accept: text/html serves no GraphiQL', async () => {
      const res = await html(gw.url);
      const body = await res.text();
      expect(res.headers.get('content-type') ?? '').not.toContain('text/html');
      expect(body).not.toContain('YogaGraphiQL');
      expect(body).not.toContain('<html');
    });

    it('an introspection query answers an error; __typename and _service { sdl } still work', async () => {
      for (const res of [await introspect(gw), await typeQuery(gw)]) {
        expect(res.data ?? null).toBeNull();
        expect(res.errors?.[0]?.message).toMatch(/introspection has been disabled/i);
        expect(res.errors?.[0]?.extensions?.code).toBe('INVALID_ARGUMENT');
      }
      const sdl = await gw.raw({ query: '{ _service { sdl } }' });
      expect(sdl.data?._service.sdl).toContain('@key(fields: "id")');
      const plain = await gw.raw({ query: '{ __typename me { id } }' });
      expect(plain.errors).toBeUndefined();
      expect(plain.data).toEqual({ __typename: 'Query', me: { id: gw.adminId } });
    });
  });

  describe('NODE_ENV=production with GRAPHIQL=true and INTROSPECTION=true', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { NODE_ENV: 'production', GRAPHIQL: 'true', INTROSPECTION: 'true' } });
    });
    afterAll(async () => gw?.close());

    it('serves GraphiQL without the example operation or any token, and answers introspection', async () => {
      const res = await html(gw.url);
      const body = await res.text();
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(body).toContain('YogaGraphiQL');
      expect(body).not.toContain('query Me');
      expect(body).not.toContain('Bearer');
      expect((await introspect(gw)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    });
  });

  describe('quick start with GRAPHIQL=false and INTROSPECTION=false', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { GRAPHIQL: 'false', INTROSPECTION: 'false' } });
    });
    afterAll(async () => gw?.close());

    it('serves no GraphiQL and refuses introspection', async () => {
      expect(await (await html(gw.url)).text()).not.toContain('YogaGraphiQL');
      expect((await introspect(gw)).errors?.[0]?.message).toMatch(/introspection has been disabled/i);
    });
  });

  describe('quick start defaults', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway();
    });
    afterAll(async () => gw?.close());

    it('serves GraphiQL with the example operation and an administrator token to a loopback browser; nothing from a CDN', async () => {
      const body = await (await html(gw.url)).text();
      expect(body).toContain('YogaGraphiQL');
      expect(body).toContain(JSON.stringify(EXAMPLE_OPERATION).slice(1, 40));
      expect(body).toMatch(/Authorization\\": \\"Bearer ey/);
      expect(body).not.toMatch(/unpkg\.com|jsdelivr|cdnjs|esm\.sh/);
      expect(body).not.toMatch(/<script[^>]+src=|<link[^>]+href="https?:/);
      expect((await introspect(gw)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    });

    it('the commented addHumanUser example works once uncommented', async () => {
      const lines = EXAMPLE_OPERATION.split('\n');
      const mutation = lines
        .slice(lines.findIndex((l) => l.startsWith('# mutation AddUser')))
        .map((l) => l.replace(/^# ?/, ''))
        .join('\n');
      const res = await gw.raw({ query: mutation });
      expect(res.errors).toBeUndefined();
      expect(res.data.addHumanUser.userId).toMatch(/\S/);
    });

    // Who else gets no token (another machine, a proxy, another Host or site): test/graphiql.page.test.ts.

    it('is configured by GRAPHIQL and INTROSPECTION, on unless NODE_ENV=production', () => {
      expect(loadConfig({})).toMatchObject({ graphiql: true, introspection: true });
      expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({ graphiql: false, introspection: false });
      expect(loadConfig({ NODE_ENV: 'production', GRAPHIQL: '1', INTROSPECTION: 'yes' })).toMatchObject({
        graphiql: true,
        introspection: true,
      });
      expect(loadConfig({ GRAPHIQL: 'off', INTROSPECTION: 'false' })).toMatchObject({ graphiql: false, introspection: false });
    });
  });
});
