// OpenTelemetry traces end to end, into a real collector (Jaeger v2, test/support/jaeger.ts): a
// caller's traceparent is continued by the GraphQL face and the gRPC face, the trace holds the
// request's server span (a child of the caller's span), the operation's span, the store's and
// Redis's spans; a failed request is marked ERROR; and no attribute or event of any span carries
// a value the test sent (password, email, token, code). Upstream mode: the call to the upstream
// is a span of its own, and the upstream continues the trace.
import { randomBytes } from 'node:crypto';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingOn } from '../src/tracing/spans.ts';
import { createLogger } from '../src/log.ts';
import { loadConfig } from '../src/config.ts';
import { createUpstreamGateway, type UpstreamGateway } from '../src/upstream-gateway.ts';
import { AddHumanUserDocument, UpdateHumanProfileDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { findJaegerBinary, startJaeger, tagOf, type Jaeger, type JaegerSpan } from './support/jaeger.ts';
import { describeRequiring, describeWith } from './support/servers.ts';
import { TEST_DEFAULTS } from './support/test-defaults.ts';
import { bearer, zitadelClients } from './support/wire-clients.ts';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A caller's own span: a trace id and span id of the test's, as a traceparent header. */
function callerSpan() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'caller=test' };
}

const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
const named = (spans: JaegerSpan[], prefix: string) => spans.filter((s) => s.operationName.startsWith(prefix));
const isError = (span: JaegerSpan) => tagOf(span, 'otel.status_code') === 'ERROR' || tagOf(span, 'error') === true;

/** Every value a span carries: its name, its tags' and its events' fields. */
const valuesOf = (span: JaegerSpan) => [
  span.operationName,
  ...span.tags.map((t) => String(t.value)),
  ...span.logs.flatMap((l) => l.fields.map((f) => String(f.value))),
];

const jaegerBin = findJaegerBinary();
/** Spans exported every 200 ms instead of every 5 s: the polls below end sooner. */
const QUICK_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: '200' };

describe('the OTEL_* settings', () => {
  const settings = (env: Record<string, string>) => loadConfig({ ...TEST_DEFAULTS, ...env }).tracing;

  it('the endpoint turns tracing on, with the standard defaults; the traces endpoint wins and is used as is', () => {
    expect(settings({})).toBeNull();
    expect(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'identity-gateway',
      sampler: 'parentbased_always_on',
      ratio: 1,
      scheduleDelayMs: 5000,
      headers: {},
    });
    expect(
      settings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s%3Dcret,x=1',
      }),
    ).toMatchObject({ url: 'https://b/traces', headers: { 'api-key': 's=cret', x: '1' } });
  });

  it('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn it off; a malformed value stops the start naming the variable', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(settings({ ...on, OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(settings({ ...on, OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(settings({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({
      sampler: 'traceidratio',
      ratio: 0.25,
    });
    expect(() => settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => settings({ ...on, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => settings({ ...on, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => settings({ ...on, OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => settings({ ...on, OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
  });
});

describe('without an OTLP endpoint', () => {
  it('nothing is registered: spans are the API no-op, the edge and the clients are not wrapped', async () => {
    const gw = await startGateway();
    try {
      expect(gw.config.tracing).toBeNull();
      expect(tracingOn()).toBe(false);
      expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
      const caller = callerSpan();
      const res = await gw.send(
        UpdateHumanProfileDocument,
        { input: { userId: gw.adminId, firstName: 'Off', lastName: 'Line' } },
        { headers: { traceparent: caller.traceparent } },
      );
      expect(res.errors).toBeUndefined();
    } finally {
      await gw.close();
    }
  });
});

describeRequiring(jaegerBin, 'jaeger not found (scripts/install-jaeger.sh)', 'tracing into a real collector', (bin) => {
  let jaeger: Jaeger;
  beforeAll(async () => {
    jaeger = await startJaeger(bin);
  });
  afterAll(async () => jaeger?.stop());

  describeWith('redis', 'the embedded gateway (SQLite, codes in Redis)', (redisUrl) => {
    let gw: TestGateway;
    /** Everything secret the test sent or was given: no span may carry any of it. */
    const secrets: string[] = [];
    const traceIds: string[] = [];
    beforeAll(async () => {
      gw = await startGateway({
        env: {
          REDIS_URL: redisUrl,
          OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
          ...QUICK_EXPORT,
          OTEL_SERVICE_NAME: 'gateway-under-test',
        },
      });
      secrets.push(gw.adminToken);
    });
    afterAll(async () => gw?.close());

    it('a GraphQL mutation: the server span continues the caller, with the operation, SQLite and Redis spans under it', async () => {
      const caller = callerSpan();
      traceIds.push(caller.traceId);
      const email = `trace-${hex(4)}@example.com`;
      const password = `Pw-${hex(8)}-aA1!`;
      secrets.push(email, password);
      const res = await gw.send(
        AddHumanUserDocument,
        { input: { profile: { firstName: 'Trace', lastName: 'Able' }, email: { email, returnCode: true }, password: { password } } },
        { headers: { traceparent: caller.traceparent, tracestate: caller.tracestate } },
      );
      expect(res.errors).toBeUndefined();
      const code = res.data!.addHumanUser.emailCode!;
      expect(code).toBeTruthy();
      secrets.push(code, res.data!.addHumanUser.userId);

      const spans = await jaeger.waitFor(
        caller.traceId,
        (s) => named(s, 'mutation AddHumanUser').length === 1 && named(s, 'redis ').length > 0 && named(s, 'sqlite append').length > 0,
      );
      expect(spans.every((s) => s.traceID === caller.traceId)).toBe(true);
      const server = named(spans, 'mutation AddHumanUser')[0]!;
      expect(parentOf(server)).toBe(caller.spanId);
      expect(tagOf(server, 'span.kind')).toBe('server');
      expect(tagOf(server, 'graphql.operation.name')).toBe('AddHumanUser');
      expect(tagOf(server, 'graphql.operation.type')).toBe('mutation');
      expect(tagOf(server, 'http.request.method')).toBe('POST');
      expect(tagOf(server, 'url.path')).toBe('/graphql');
      expect(tagOf(server, 'http.response.status_code')).toBe(200);
      expect(isError(server)).toBe(false);

      const operation = named(spans, 'operation addHumanUser')[0]!;
      expect(parentOf(operation)).toBe(server.spanID);
      const append = named(spans, 'sqlite append')[0]!;
      expect(tagOf(append, 'db.system.name')).toBe('sqlite');
      expect(tagOf(append, 'db.collection.name')).toBe('events');
      const redis = named(spans, 'redis ');
      expect(redis.every((s) => tagOf(s, 'db.system.name') === 'redis' && /^[A-Z]+$/.test(String(tagOf(s, 'db.operation.name'))))).toBe(
        true,
      );
      // The store and Redis calls happen inside the operation: their ancestors include its span.
      const byId = new Map(spans.map((s) => [s.spanID, s]));
      const underOperation = (s: JaegerSpan) => {
        for (let p = parentOf(s); p; p = byId.get(p) && parentOf(byId.get(p)!)) if (p === operation.spanID) return true;
        return false;
      };
      expect(underOperation(append)).toBe(true);
      expect(redis.some(underOperation)).toBe(true);
    });

    it('a gRPC call: the server span continues the caller and names the RPC', async () => {
      const caller = callerSpan();
      traceIds.push(caller.traceId);
      const transport = createGrpcTransport({
        baseUrl: gw.baseUrl,
        interceptors: [
          bearer(gw.adminToken),
          (next) => (req) => {
            req.header.set('traceparent', caller.traceparent);
            return next(req);
          },
        ],
      });
      const read = await zitadelClients(transport).users.getUserByID({ userId: gw.adminId });
      expect(read.user?.userId).toBe(gw.adminId);

      const spans = await jaeger.waitFor(
        caller.traceId,
        (s) => s.some((x) => tagOf(x, 'rpc.method') === 'GetUserByID') && named(s, 'operation ').length > 0,
      );
      const server = spans.find((s) => tagOf(s, 'span.kind') === 'server')!;
      expect(parentOf(server)).toBe(caller.spanId);
      expect(tagOf(server, 'rpc.system')).toBe('grpc');
      expect(tagOf(server, 'rpc.service')).toBe('zitadel.user.v2.UserService');
      expect(tagOf(server, 'rpc.method')).toBe('GetUserByID');
      expect(tagOf(server, 'url.path')).toBe('/zitadel.user.v2.UserService/GetUserByID');
      expect(named(spans, 'operation ').every((s) => parentOf(s) === server.spanID)).toBe(true);
      // The user is read from the store's snapshot cache: the operation's span may have no store span under it.
      expect(named(spans, 'operation ').length).toBeGreaterThan(0);
    });

    it('a failed request: the server span and the operation span are ERROR, the exception names the code only', async () => {
      const caller = callerSpan();
      traceIds.push(caller.traceId);
      const res = await gw.send(
        UpdateHumanProfileDocument,
        { input: { userId: '999999999999', firstName: 'No', lastName: 'Body' } },
        { headers: { traceparent: caller.traceparent } },
      );
      expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const spans = await jaeger.waitFor(
        caller.traceId,
        (s) => named(s, 'mutation UpdateHumanProfile').length === 1 && named(s, 'operation ').length === 1,
      );
      const server = named(spans, 'mutation UpdateHumanProfile')[0]!;
      expect(isError(server)).toBe(true);
      expect(tagOf(server, 'error.type')).toBe('NOT_FOUND');
      const operation = named(spans, 'operation updateHumanProfile')[0]!;
      expect(isError(operation)).toBe(true);
      const exception = operation.logs.flatMap((l) => l.fields).filter((f) => f.key.startsWith('exception.'));
      expect(exception).toEqual([{ key: 'exception.type', type: 'string', value: 'NOT_FOUND' }]);
    });

    it('no span of these traces carries a secret the test sent or was given (every tag, every event field)', async () => {
      expect(traceIds.length).toBe(3);
      expect(secrets.length).toBeGreaterThanOrEqual(4);
      let seen = 0;
      for (const id of traceIds) {
        for (const span of await jaeger.spans(id)) {
          seen++;
          for (const value of valuesOf(span)) for (const secret of secrets) expect(value, `${span.operationName}`).not.toContain(secret);
        }
      }
      expect(seen).toBeGreaterThan(8);
    });

    it('background work (the delivery worker, lease renewals, readiness pings) starts no trace: every trace has a request span', async () => {
      const ready = await fetch(new URL('/ready', gw.baseUrl));
      expect(ready.status).toBe(200);
      // A request after the probe: once its trace is in, what the probe's pings ended before it has been exported too.
      const caller = callerSpan();
      const res = await gw.send(
        UpdateHumanProfileDocument,
        { input: { userId: gw.adminId, firstName: 'After', lastName: 'Probe' } },
        { headers: { traceparent: caller.traceparent } },
      );
      expect(res.errors).toBeUndefined();
      await jaeger.waitFor(caller.traceId, (s) => named(s, 'mutation UpdateHumanProfile').length === 1);
      const traces = await jaeger.traces('gateway-under-test');
      expect(traces.length).toBeGreaterThanOrEqual(3);
      for (const spans of traces) expect(spans.map((s) => tagOf(s, 'span.kind'))).toContain('server');
    });
  });

  describeWith('mongo', 'the gateway on MongoDB-wire', (mongoUrl) => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({
        env: { MONGODB_URL: mongoUrl, MONGODB_DB: `tracing_${hex(4)}`, OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, ...QUICK_EXPORT },
      });
    });
    afterAll(async () => gw?.close());

    it('each MongoDB command of the operation is a client span naming the command and the collection, never the filter', async () => {
      const caller = callerSpan();
      const email = `mongo-${hex(4)}@example.com`;
      const res = await gw.send(
        AddHumanUserDocument,
        { input: { profile: { firstName: 'Mongo', lastName: 'Trace' }, email: { email, isVerified: true } } },
        { headers: { traceparent: caller.traceparent } },
      );
      expect(res.errors).toBeUndefined();
      const spans = await jaeger.waitFor(caller.traceId, (s) => named(s, 'mongodb insert').length > 0);
      const mongo = named(spans, 'mongodb ');
      expect(mongo.every((s) => tagOf(s, 'db.system.name') === 'mongodb' && tagOf(s, 'span.kind') === 'client')).toBe(true);
      const insert = named(spans, 'mongodb insert')[0]!;
      expect(tagOf(insert, 'db.operation.name')).toBe('insert');
      expect(String(tagOf(insert, 'db.collection.name'))).toMatch(/^[a-z_]+$/);
      const operation = named(spans, 'operation addHumanUser')[0]!;
      const byId = new Map(spans.map((s) => [s.spanID, s]));
      let p = parentOf(insert);
      while (p && p !== operation.spanID) p = byId.get(p) && parentOf(byId.get(p)!);
      expect(p).toBe(operation.spanID);
      for (const span of spans) for (const value of valuesOf(span)) expect(value).not.toContain(email);
    });
  });

  it('a graceful shutdown exports the spans still queued (the batch delay here is 10 minutes: only the flush can send them)', async () => {
    const gw = await startGateway({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '600000' } });
    const caller = callerSpan();
    try {
      const res = await gw.send(
        UpdateHumanProfileDocument,
        { input: { userId: gw.adminId, firstName: 'Last', lastName: 'Words' } },
        { headers: { traceparent: caller.traceparent } },
      );
      expect(res.errors).toBeUndefined();
      expect(await jaeger.spans(caller.traceId)).toEqual([]);
    } finally {
      await gw.close();
    }
    const spans = await jaeger.waitFor(caller.traceId, (s) => named(s, 'mutation UpdateHumanProfile').length === 1);
    expect(named(spans, 'operation updateHumanProfile')).toHaveLength(1);
  });

  describe('upstream mode', () => {
    let gw: TestGateway;
    let front: UpstreamGateway;
    let frontUrl: string;
    beforeAll(async () => {
      const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, ...QUICK_EXPORT };
      gw = await startGateway({ env: tracing });
      const config = loadConfig({
        ...TEST_DEFAULTS,
        ...tracing,
        DATA_DIR: gw.config.dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        ZITADEL_URL: gw.baseUrl,
      });
      front = await createUpstreamGateway(config, { logger: createLogger('error', () => {}) });
      frontUrl = (await front.listen()).url;
    });
    afterAll(async () => {
      await front?.close();
      await gw?.close();
    });

    it('the call to the upstream is a client span naming the method, and the upstream continues the trace under it', async () => {
      const caller = callerSpan();
      const res = await fetch(frontUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}`, traceparent: caller.traceparent },
        body: JSON.stringify({ query: 'query Me { me { id } }' }),
      });
      expect(((await res.json()) as { data?: { me?: { id: string } } }).data?.me?.id).toBe(gw.adminId);
      const spans = await jaeger.waitFor(
        caller.traceId,
        (s) => named(s, 'upstream ').length > 0 && s.filter((x) => tagOf(x, 'span.kind') === 'server').length >= 2,
      );
      const frontServer = named(spans, 'query Me')[0]!;
      expect(parentOf(frontServer)).toBe(caller.spanId);
      const call = named(spans, 'upstream ')[0]!;
      expect(tagOf(call, 'span.kind')).toBe('client');
      expect(tagOf(call, 'rpc.system')).toBe('grpc');
      expect(String(tagOf(call, 'rpc.method'))).toMatch(/^[A-Za-z]+$/);
      const upstreamServer = spans.find((s) => tagOf(s, 'span.kind') === 'server' && parentOf(s) === call.spanID);
      expect(upstreamServer, 'the upstream gateway continued the trace').toBeDefined();
      for (const span of spans) for (const value of valuesOf(span)) expect(value).not.toContain(gw.adminToken);
    });
  });
});
