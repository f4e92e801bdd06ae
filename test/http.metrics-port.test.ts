// GET /metrics (src/http/metrics-port.ts): the probe of issue 27 held 1,500 zero-window streams of
// it without a token, and /health timed out for 15 s. Now it is either on a port of its own for
// the scraper (METRICS_PORT, on 127.0.0.1 by default) and gone from the main port, or on the main
// port at most METRICS_RATE_LIMIT_PER_IP_PER_MINUTE times a minute per client address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { get, sample } from './support/slow-peers.ts';

describe('METRICS_PORT', () => {
  let gw: ChildGateway;
  beforeAll(async () => {
    gw = await spawnGateway({ env: { METRICS_PORT: '0' } });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('serves GET /metrics on its own port, on 127.0.0.1, and nothing else; the main port answers 404 there', async () => {
    expect(gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const metricsUrl = gw.metricsUrl!;
    expect(new URL(metricsUrl).port).not.toBe(new URL(gw.base).port);
    await gw.post({ query: '{ me { id } }' });
    const scraped = await get(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(scraped.headers['content-type']).toMatch(/^text\/plain/);
    expect(sample(scraped.text, 'gateway_http_requests_total', { protocol: 'graphql', root_field: 'me', status: '200' })).toBe(1);
    // Scraped as often as the scraper likes: no per-address limit on its own port.
    for (let i = 0; i < 70; i++) expect((await get(metricsUrl)).status).toBe(200);

    expect((await get(metricsUrl.replace(/\/metrics$/, '/health'))).status).toBe(404);
    expect((await get(metricsUrl, { method: 'POST' })).status).toBe(405);
    const main = await get(`${gw.base}/metrics`);
    expect(main.status).toBe(404);
    expect(main.text).not.toContain('gateway_http_requests_total');
    expect((await get(`${gw.base}/health`)).status).toBe(200);
  });
});

describe('/metrics on the main port (METRICS_PORT unset)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Empty: the default limit (the other tests' gateways turn it off, test/support/test-defaults.ts).
    gw = await startGateway({ env: { METRICS_RATE_LIMIT_PER_IP_PER_MINUTE: '' } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('answers an address 60 times a minute, then 429 with Retry-After; other addresses go on being answered', async () => {
    const url = `${gw.baseUrl}/metrics`;
    const from = '127.0.0.2';
    const answers = await Promise.all(Array.from({ length: 60 }, () => get(url, { localAddress: from })));
    expect(answers.map((a) => a.status)).toEqual(Array(60).fill(200));
    expect(sample(answers[0]!.text, 'gateway_http_requests_in_flight')).toBeGreaterThanOrEqual(0);

    const refused = await get(url, { localAddress: from });
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.text).not.toContain('gateway_');
    // /health and GraphQL from that address are not limited by it.
    expect((await get(`${gw.baseUrl}/health`, { localAddress: from })).status).toBe(200);

    const other = await get(url, { localAddress: '127.0.0.3' });
    expect(other.status).toBe(200);
    expect(sample(other.text, 'gateway_metrics_refused_total')).toBe(1);
  });
});
