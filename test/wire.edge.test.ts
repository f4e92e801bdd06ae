// The HTTP edge in front of the wire API: the rate limits (per caller, per client address)
// and the refusals made before a body is read, each answered in the shape its client reads:
// gRPC and gRPC-web as a grpc-status, Connect as its JSON error, REST as grpc-gateway's body,
// GraphQL as before. And CORS for browsers on the wire's paths.
import { connect as http2Connect } from 'node:http2';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UNAUTHENTICATED_BODY_BYTES } from '../src/http/body-limit.ts';
import { RetryInfoSchema } from '../src/proto/error-details.ts';
import { MeDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';
import { failure, wireTransport, zitadelClients } from './support/wire-clients.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';
const PER_CALLER = 3;
const PER_IP = 2;

/** RetryInfo's delay in seconds, as a number. */
const retrySeconds = (err: ConnectError) => {
  const info = err.findDetails(RetryInfoSchema)[0] as { retryDelay?: { seconds: bigint } } | undefined;
  return info?.retryDelay ? Number(info.retryDelay.seconds) : undefined;
};

describe('rate limits on the wire paths', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      env: { RATE_LIMIT_PER_CALLER_PER_MINUTE: String(PER_CALLER), RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP) },
    });
  });
  afterAll(async () => gw?.close());

  it('per caller, one window over every face: gRPC, then gRPC-web, Connect, REST and GraphQL each answer RESOURCE_EXHAUSTED in their own shape', async () => {
    const grpc = zitadelClients(wireTransport('grpc', gw.baseUrl, gw.adminToken));
    for (let i = 0; i < PER_CALLER; i++) expect((await grpc.auth.getMyUser({})).user?.id).toBe(gw.adminId);

    const overGrpc = await failure(grpc.auth.getMyUser({}));
    expect(overGrpc.code).toBe(Code.ResourceExhausted);
    expect(overGrpc.rawMessage).toMatch(
      new RegExp(`^Too many requests: at most ${PER_CALLER} a minute per caller; retry after \\d+ s\\. \\(RESOURCE_EXHAUSTED-\\w+\\)$`),
    );
    expect(retrySeconds(overGrpc)).toBeGreaterThanOrEqual(1);
    expect(retrySeconds(overGrpc)).toBeLessThanOrEqual(60);
    expect((overGrpc.findDetails(ErrorDetailSchema)[0] as { id?: string })?.id).toMatch(/^RESOURCE_EXHAUSTED-/);

    const web = await failure(zitadelClients(wireTransport('grpc-web', gw.baseUrl, gw.adminToken)).auth.getMyUser({}));
    expect({ code: web.code, retry: retrySeconds(web)! > 0 }).toEqual({ code: Code.ResourceExhausted, retry: true });

    const headers = { authorization: `Bearer ${gw.adminToken}` };
    const connect = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(connect.status).toBe(429);
    expect(Number(connect.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const connectBody = await connect.json();
    expect(connectBody.code).toBe('resource_exhausted');
    expect(connectBody.message).toMatch(/^Too many requests: at most 3 a minute per caller/);
    expect(connectBody.details.map((d: { type: string }) => d.type)).toEqual(['zitadel.v1.ErrorDetail', 'google.rpc.RetryInfo']);

    const rest = await fetch(`${gw.baseUrl}/auth/v1/users/me`, { headers });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const restBody = await rest.json();
    expect(restBody.code).toBe(Code.ResourceExhausted);
    expect(restBody.message).toMatch(/^Too many requests: at most 3 a minute per caller/);
    expect(restBody.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: expect.stringMatching(/^\d+s$/),
    });

    const graphql = await gw.send(MeDocument, {});
    expect(graphql.status).toBe(429);
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'RESOURCE_EXHAUSTED', grpcCode: 8 });
  });
});

describe('the per-address limit on the wire paths', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({
      env: { RATE_LIMIT_PER_CALLER_PER_MINUTE: String(PER_CALLER), RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP) },
    });
  });
  afterAll(async () => gw?.close());

  it('counts requests without a token, health checks included; a caller with a token is counted on its own', async () => {
    const anonymous = zitadelClients(wireTransport('connect', gw.baseUrl, null));
    // Without a token every call is UNAUTHENTICATED, and each counts against the address.
    for (let i = 0; i < PER_IP; i++) expect((await failure(anonymous.auth.getMyUser({}))).code).toBe(Code.Unauthenticated);
    const limited = await failure(anonymous.auth.getMyUser({}));
    expect(limited.code).toBe(Code.ResourceExhausted);
    expect(limited.rawMessage).toMatch(new RegExp(`^Too many requests: at most ${PER_IP} a minute per client address`));
    const health = await fetch(`${gw.baseUrl}/grpc.health.v1.Health/Check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(health.status).toBe(429);

    const signedIn = zitadelClients(wireTransport('connect', gw.baseUrl, gw.adminToken));
    expect((await signedIn.auth.getMyUser({})).user?.id).toBe(gw.adminId);
  });
});

describe('a body too big for a request without a valid token, refused from its headers', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());
  const big = new Uint8Array(UNAUTHENTICATED_BODY_BYTES + 1);
  const why = `a request body over ${UNAUTHENTICATED_BODY_BYTES} bytes needs a valid bearer token`;

  it("REST: 401 with grpc-gateway's body", async () => {
    const res = await fetch(`${gw.baseUrl}/management/v1/projects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.code).toBe(Code.Unauthenticated);
    expect(body.message).toContain(why);
    expect(body.details[0]['@type']).toBe('type.googleapis.com/zitadel.v1.ErrorDetail');
  });

  it('Connect: 401 with its JSON error', async () => {
    const res = await fetch(`${gw.baseUrl}/zitadel.management.v1.ManagementService/AddProject`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto' },
      body: big,
    });
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.code).toBe('unauthenticated');
    expect(body.message).toContain(why);
  });

  it('gRPC-web: HTTP 200 with grpc-status 16 in the headers', async () => {
    const res = await fetch(`${gw.baseUrl}/zitadel.management.v1.ManagementService/AddProject`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      body: big,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/grpc-web+proto');
    expect(res.headers.get('grpc-status')).toBe(String(Code.Unauthenticated));
    expect(decodeURIComponent(res.headers.get('grpc-message')!)).toContain(why);
  });

  it('gRPC with a Content-Length: a trailers-only answer, grpc-status 16', async () => {
    const session = http2Connect(gw.baseUrl);
    session.on('error', () => {});
    try {
      const stream = session.request({
        ...grpcRequestHeaders('/zitadel.management.v1.ManagementService/AddProject', 'not-a-token'),
        'content-length': String(big.length + 5),
      });
      stream.on('error', () => {});
      const answer = answerOf(stream);
      stream.write(prefix(big.length));
      const got = await answer;
      expect({ status: got.headers[':status'], type: got.headers['content-type'], grpcStatus: got.grpcStatus }).toEqual({
        status: 200,
        type: 'application/grpc',
        grpcStatus: Code.Unauthenticated,
      });
      stream.close();
    } finally {
      session.destroy();
    }
  });
});

describe('CORS on the wire paths (CORS_ORIGINS)', () => {
  let gw: TestGateway;
  const allowed = 'https://console.example.com';
  beforeAll(async () => {
    gw = await startGateway({ env: { CORS_ORIGINS: allowed } });
  });
  afterAll(async () => gw?.close());

  const preflight = (path: string, origin: string, method = 'POST') =>
    fetch(`${gw.baseUrl}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization, content-type, connect-protocol-version, x-zitadel-orgid',
      },
    });

  it("a listed origin: the preflight allows the wire clients' headers and methods, answers expose grpc-status and x-request-id", async () => {
    const pre = await preflight('/zitadel.auth.v1.AuthService/GetMyUser', allowed);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/connect-protocol-version/);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/x-zitadel-orgid/);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();

    const restPre = await preflight('/management/v1/users/1/profile', allowed, 'PUT');
    expect(restPre.headers.get('access-control-allow-methods')).toMatch(/PUT/);

    const call = await fetch(`${gw.baseUrl}/auth/v1/users/me`, { headers: { origin: allowed, authorization: `Bearer ${gw.adminToken}` } });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(call.headers.get('access-control-expose-headers')).toMatch(/grpc-status/);
    expect(call.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
  });

  it('an origin not listed gets no CORS headers, so the browser keeps the answer from the page', async () => {
    const pre = await preflight('/zitadel.auth.v1.AuthService/GetMyUser', 'https://evil.example');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const call = await fetch(`${gw.baseUrl}/auth/v1/users/me`, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${gw.adminToken}` },
    });
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('an edge refusal carries the CORS headers too, so the page can read it', async () => {
    const res = await fetch(`${gw.baseUrl}/management/v1/projects`, {
      method: 'POST',
      headers: { origin: allowed, 'content-type': 'application/json' },
      body: new Uint8Array(UNAUTHENTICATED_BODY_BYTES + 1),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(allowed);
  });
});

describe('the request log line names the protocol', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());
  const lineOf = (requestId: string) => gw.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);

  it('rest, graphql, and an edge refusal on a gRPC-web path', async () => {
    await fetch(`${gw.baseUrl}/auth/v1/users/me`, { headers: { authorization: `Bearer ${gw.adminToken}`, 'x-request-id': 'proto-rest' } });
    await gw.send(MeDocument, {}, { headers: { 'x-request-id': 'proto-graphql' } });
    await fetch(`${gw.baseUrl}/zitadel.management.v1.ManagementService/AddProject`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web-text', 'x-request-id': 'proto-web-text' },
      body: 'A'.repeat(UNAUTHENTICATED_BODY_BYTES + 4),
    });
    // A refusal's line may be written just after its answer went out.
    await vi.waitFor(() => expect(lineOf('proto-web-text')).toBeDefined(), { timeout: 10_000 });
    expect([lineOf('proto-rest'), lineOf('proto-graphql'), lineOf('proto-web-text')].map((l) => l?.protocol)).toEqual([
      'rest',
      'graphql',
      'grpc-web-text',
    ]);
    expect(lineOf('proto-web-text')?.errors).toEqual(['UNAUTHENTICATED']);
  });
});
