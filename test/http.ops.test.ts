// Operations: liveness and readiness, Prometheus metrics, structured logs without
// secrets, and graceful shutdown of a real gateway process on SIGTERM.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AddHumanUserDocument, SetEmailDocument, UserDocument } from './generated/graphql.ts';
import { spawnGateway } from './support/child-gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { startGateway, startGatewayBehindProxy, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Op', lastName: 'Erator' };
const base = (gw: { url: string }) => gw.url.replace(/\/graphql$/, '');

async function getJson(url: string) {
  const started = Date.now();
  const res = await fetch(url);
  return { status: res.status, body: await res.json(), ms: Date.now() - started };
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A metric sample's value from the exposition text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/**
 * What "promptly" means for a readiness answer while a backing service is gone: the probe
 * gives up its ping after 1 s; the rest is room for a loaded machine (the gateway and this
 * client share one process), far below any other bound that could answer instead.
 */
const PROMPT_MS = 5000;

describeWith('redis', 'health, readiness and metrics with Redis', () => {
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let gw: TestGateway;
  beforeAll(async () => {
    redis = await ownRedis(inject('redisServerBin'));
    gw = await startGateway({ env: { REDIS_URL: redis.url, CODE_HMAC_KEY: 'ops-test' } });
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.close();
  });

  it('/health is 200; /ready is 200, 503 promptly once Redis is gone, 200 again when it is back', async () => {
    expect(await getJson(`${base(gw)}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await getJson(`${base(gw)}/ready`)).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { store: 'ok', redis: 'ok' } },
    });

    await redis.down();
    const down = await until(
      'readiness with Redis down',
      () => getJson(`${base(gw)}/ready`),
      (r) => r.status === 503,
    );
    // The node-id lease (in Redis) outlives a short outage: only Redis is down.
    expect(down.body).toEqual({ status: 'not ready', checks: { store: 'ok', redis: 'down', node_id: 'ok' } });
    expect(down.ms, "bounded by the probe's own 1 s ping, not by the client's patience").toBeLessThan(PROMPT_MS);
    // Liveness does not depend on Redis.
    expect((await getJson(`${base(gw)}/health`)).status).toBe(200);

    await redis.up();
    const back = await until(
      'readiness with Redis back',
      () => getJson(`${base(gw)}/ready`),
      (r) => r.status === 200,
    );
    expect(back.body.checks).toEqual({ store: 'ok', redis: 'ok', node_id: 'ok' });
  });

  it('/metrics exposes request counters, latency histograms, errors by code, store and Redis latency, delivery counters', async () => {
    const added = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `${unique('m')}@example.com` } } });
    expect(added.errors, added.text).toBeUndefined();
    await gw.send(SetEmailDocument, { input: { userId: 'no-such-user', email: 'x@example.com' } });
    await gw.send(UserDocument, { id: added.data!.addHumanUser.userId });

    const text = await until(
      'the delivery worker to send the verification mail',
      async () => (await fetch(`${base(gw)}/metrics`)).text(),
      (t) => (sample(t, 'gateway_delivery_sent_total') ?? 0) >= 1,
    );
    const res = await fetch(`${base(gw)}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);

    expect(
      sample(text, 'gateway_http_requests_total', { operation_type: 'mutation', root_field: 'addHumanUser', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    // The failed setEmail was executed: HTTP 200, its NOT_FOUND counted by code below.
    expect(sample(text, 'gateway_http_requests_total', { operation_type: 'mutation', root_field: 'setEmail', status: '200' })).toBe(1);
    expect(
      sample(text, 'gateway_http_requests_total', { operation_type: 'mutation', root_field: 'setEmail', status: '404' }),
    ).toBeUndefined();
    expect(sample(text, 'gateway_http_requests_total', { operation_type: 'query', root_field: 'user', status: '200' })).toBe(1);
    expect(
      sample(text, 'gateway_http_request_duration_seconds_count', { operation_type: 'mutation', root_field: 'addHumanUser' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'gateway_http_request_duration_seconds_bucket', { operation_type: 'query', root_field: 'user', le: '+Inf' })).toBe(
      1,
    );
    expect(sample(text, 'gateway_graphql_errors_total', { code: 'NOT_FOUND' })).toBe(1);
    expect(
      sample(text, 'gateway_store_duration_seconds_count', { backend: 'embedded', operation: 'append', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'gateway_store_duration_seconds_count', { backend: 'embedded', operation: 'load', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'gateway_redis_duration_seconds_count', { component: 'codes', operation: 'put', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'gateway_redis_duration_seconds_count', { component: 'rate_limit', operation: 'hit', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'gateway_delivery_queued_total')).toBeGreaterThanOrEqual(1);
    for (const name of [
      'gateway_delivery_retried_total',
      'gateway_delivery_dead_lettered_total',
      'gateway_delivery_enqueue_failed_total',
      'gateway_http_requests_in_flight',
    ]) {
      expect(sample(text, name), name).toBeDefined();
    }
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
  });
});

describeWith('mongo', 'readiness with MongoDB', (mongoUrl) => {
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof startGatewayBehindProxy>>['proxy'];
  beforeAll(async () => {
    ({ gw, proxy } = await startGatewayBehindProxy(mongoUrl, 'ops'));
  });
  afterAll(async () => gw?.close());

  it('/ready is 503 promptly while MongoDB is unreachable, and 200 again after', async () => {
    expect((await getJson(`${base(gw)}/ready`)).body.checks).toEqual({ mongodb: 'ok', node_id: 'ok' });
    await proxy.down();
    const down = await until(
      'readiness with MongoDB down',
      () => getJson(`${base(gw)}/ready`),
      (r) => r.status === 503,
    );
    // The node-id lease (in MongoDB, without Redis) outlives a short outage.
    expect(down.body.checks).toEqual({ mongodb: 'down', node_id: 'ok' });
    expect(down.ms, "bounded by the probe's own 1 s ping, not by the read bound (120 s here) or the client").toBeLessThan(PROMPT_MS);
    await proxy.up();
    await until(
      'readiness with MongoDB back',
      () => getJson(`${base(gw)}/ready`),
      (r) => r.status === 200,
      30_000,
    );
  });
});

describe('structured logs', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('one JSON line per request with request id, operation name and caller, and never the variables', async () => {
    const password = 'Log$ecret-Pa55word!';
    const username = unique('logged');
    const res = await gw.send(
      AddHumanUserDocument,
      { input: { username, profile, email: { email: `${username}@example.com`, returnCode: true }, password: { password } } },
      { headers: { 'x-request-id': 'ops-log-1' } },
    );
    expect(res.errors, res.text).toBeUndefined();
    const code = res.data!.addHumanUser.emailCode!;

    const lines = gw.logs.map((l) => JSON.parse(l)); // every line is JSON
    const line = lines.find((l) => l.msg === 'request' && l.requestId === 'ops-log-1');
    expect(line).toMatchObject({
      level: 'info',
      requestId: 'ops-log-1',
      operationName: 'AddHumanUser',
      operationType: 'mutation',
      rootField: 'addHumanUser',
      caller: gw.adminId,
      status: 200,
      method: 'POST',
      path: '/graphql',
    });
    expect(typeof line.durationMs).toBe('number');
    expect(typeof line.time).toBe('string');

    const all = gw.logs.join('\n');
    expect(all).not.toContain(password);
    expect(all).not.toContain(gw.adminToken);
    expect(all).not.toMatch(new RegExp(`(?<![A-Za-z0-9])${code}(?![A-Za-z0-9])`));
    expect(all).not.toContain('"variables"');
    expect(all).not.toContain(username); // not even the plain input values
  });
});

describe('graceful shutdown of a gateway process on SIGTERM', () => {
  const slowUser = () => ({
    query: 'mutation AddHumanUser($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }',
    variables: {
      input: {
        username: unique('slow'),
        profile,
        email: { email: `${unique('slow')}@example.com`, isVerified: true },
        password: { password: 'Sl0w&Steady-pw' },
      },
    },
  });
  const inFlight = async (metricsUrl: string) => sample(await (await fetch(metricsUrl)).text(), 'gateway_http_requests_in_flight') ?? 0;
  const refused = (port: number) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve('connected')));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    });

  it('a slow request in flight completes with its data, new connections are refused, the process exits 0', async () => {
    // bcrypt at cost 13 takes about a second: a real slow operation, off the event loop.
    const gw = await spawnGateway({ env: { BCRYPT_COST: '13', SHUTDOWN_TIMEOUT_MS: '10000' } });
    try {
      const port = Number(new URL(gw.url).port);
      const started = Date.now();
      const pending = gw.post(slowUser());
      await until(
        'the request to be in flight',
        () => inFlight(`${gw.base}/metrics`),
        (n) => n >= 1,
        5000,
      );
      gw.child.kill('SIGTERM');
      const signalledAt = Date.now();

      // (A connection that reaches the closing listener's backlog is reset: only a refusal says it is closed.)
      expect(
        await until(
          'the listener to close',
          () => refused(port),
          (r) => r === 'ECONNREFUSED',
          2000,
        ),
      ).toBe('ECONNREFUSED');
      const res = await pending;
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.addHumanUser.userId).toMatch(/^\d+$/);
      expect(Date.now() - started).toBeGreaterThan(300); // it really was slow

      const code = await gw.exited;
      expect(code).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      const lines = gw.logs.map((l) => JSON.parse(l));
      expect(lines.find((l) => l.msg === 'request' && l.operationName === 'AddHumanUser')).toMatchObject({ status: 200 });
      expect(lines.find((l) => l.msg === 'stopped')).toMatchObject({ clean: true });
    } finally {
      await gw.stop();
    }
  });

  it('past SHUTDOWN_TIMEOUT_MS the request is cut and the process exits 1', async () => {
    const gw = await spawnGateway({ env: { BCRYPT_COST: '14', SHUTDOWN_TIMEOUT_MS: '300' } });
    try {
      const pending = gw.post(slowUser()).catch((err) => ({ status: -1, text: String(err?.cause?.code ?? err) }));
      await until(
        'the request to be in flight',
        () => inFlight(`${gw.base}/metrics`),
        (n) => n >= 1,
        5000,
      );
      const signalledAt = Date.now();
      gw.child.kill('SIGTERM');
      expect(await gw.exited).toBe(1);
      // Cut, not waited for (the request never answers); within a bound for a loaded machine.
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      expect((await pending).status).toBe(-1);
      expect(gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'stopped')).toMatchObject({ clean: false });
    } finally {
      await gw.stop();
    }
  });
});
