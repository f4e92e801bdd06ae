// REST routing errors and query strings as grpc-gateway answers them, on a running gateway:
// a path under the wire's REST prefixes (/auth/v1/, /management/v1/, /v2/) that no rule
// matches is 404 {code 5, "Not Found"} whether the lazily loaded wire (src/wire/lazy.ts)
// was loaded by then or not; a known path with another HTTP method is 405 {code 12}; a query
// string costs work linear in its size and more than MAX_QUERY_PARAMS parameters is 400
// {code 3}. Paths outside those prefixes (/graphql, /health, /metrics, ...) and the RPC paths
// keep their own answers.
import { createServer, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../src/auth/tokens.ts';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { requestFacts } from '../src/wire/context.ts';
import { wireServices } from '../src/wire/index.ts';
import { createRestHandler } from '../src/wire/rest.ts';
import { MAX_QUERY_PARAMS, queryValues } from '../src/wire/rest-request.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { h2Request } from './support/grpc-raw.ts';

const NOT_FOUND = { code: 5, message: 'Not Found', details: [] };
const METHOD_NOT_ALLOWED = { code: 12, message: 'Method Not Allowed', details: [] };

/** Paths of the wire's REST shape that no rule matches, with any verb. */
const UNKNOWN: [string, string][] = [
  ['GET', '/v2/no-such-resource'],
  ['POST', '/v2/users/1/no-such-thing'],
  ['GET', '/auth/v1/no/such/path'],
  ['DELETE', '/management/v1/no-such-resource'],
  ['PUT', '/management/v1/'],
];

async function send(gw: TestGateway, method: string, path: string, body?: string, token: string | null = gw.adminToken) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${gw.baseUrl}${path}`, { method, headers, body: method === 'GET' ? undefined : (body ?? '{}') });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type'), text, json: json as any };
}

async function expectRoutingErrors(gw: TestGateway) {
  for (const [method, path] of UNKNOWN) {
    const a = await send(gw, method, path);
    expect(a.status, `${method} ${path}: ${a.text}`).toBe(404);
    expect(a.contentType).toBe('application/json');
    expect(a.json).toEqual(NOT_FOUND);
  }
  // The real method of this path is POST (SetHumanPassword).
  const wrongVerb = await send(gw, 'PUT', `/management/v1/users/${gw.adminId}/password`, '{"password":{"password":"Secr3t!pass"}}');
  expect(wrongVerb.status, wrongVerb.text).toBe(405);
  expect(wrongVerb.contentType).toBe('application/json');
  expect(wrongVerb.json).toEqual(METHOD_NOT_ALLOWED);
}

/** What is not the wire's keeps its own answers, and the wire's RPC and REST paths keep working. */
async function expectOthersUnaffected(gw: TestGateway) {
  const me = await gw.raw({ query: '{ me { id } }' });
  expect(me.status).toBe(200);
  expect(me.data.me.id).toBe(gw.adminId);
  expect((await fetch(`${gw.baseUrl}/health`)).status).toBe(200);
  expect((await fetch(`${gw.baseUrl}/metrics`)).status).toBe(200);
  const other = await send(gw, 'GET', '/no-such-path');
  expect(other.status).toBe(404);
  expect(other.json).not.toEqual(NOT_FOUND); // GraphQL's 404, not the wire's
  const connect = await send(gw, 'POST', '/zitadel.auth.v1.AuthService/GetMyUser', '{}');
  expect(connect.status, connect.text).toBe(200);
  expect(connect.json.user.id).toBe(gw.adminId);
  const rest = await send(gw, 'GET', '/auth/v1/users/me');
  expect(rest.status, rest.text).toBe(200);
  expect(rest.json.user.id).toBe(gw.adminId);
}

describe('grpc-gateway routing errors, before and after the wire is loaded', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('first request on an unknown REST path (wire not loaded): 404 code 5; the same after known wire calls', async () => {
    gw = await startGateway();
    const first = await send(gw, 'GET', '/v2/no-such-resource');
    expect(first.status).toBe(404);
    expect(first.json).toEqual(NOT_FOUND);
    await expectRoutingErrors(gw);
    await expectOthersUnaffected(gw);
    await expectRoutingErrors(gw);
  });

  it('a known wire call first (wire loaded), then unknown REST paths: 404 code 5; a wrong method: 405 code 12', async () => {
    gw = await startGateway();
    const known = await send(gw, 'POST', '/zitadel.auth.v1.AuthService/GetMyUser', '{}');
    expect(known.status, known.text).toBe(200);
    await expectRoutingErrors(gw);
    await expectOthersUnaffected(gw);
  });

  it('first request with a wrong method on a known path (wire not loaded): 405 code 12', async () => {
    gw = await startGateway();
    const a = await send(gw, 'PUT', `/management/v1/users/${gw.adminId}/password`, '{}');
    expect(a.status, a.text).toBe(405);
    expect(a.json).toEqual(METHOD_NOT_ALLOWED);
    const b = await send(gw, 'PATCH', '/management/v1/users/1/profile', '{}');
    expect(b.status, b.text).toBe(405);
    expect(b.json).toEqual(METHOD_NOT_ALLOWED);
  });
});

describe('query strings: linear work, at most MAX_QUERY_PARAMS parameters', () => {
  let gw: TestGateway;
  let server: Server;
  let direct: string;

  beforeAll(async () => {
    gw = await startGateway();
    const rest = createRestHandler(
      wireServices({ deps: gw.gateway.deps, ops: gw.gateway.ops, tokens: createTokenVerifier(gw.config), logger: gw.gateway.logger }),
      {
        readMaxBytes: maxRequestBodyBytes(gw.config),
        interceptors: [requestFacts],
        logger: gw.gateway.logger,
      },
    );
    // Room for a 100 KB request line (node's default is 16 KB of headers).
    server = createServer({ maxHeaderSize: 1 << 20 }, (req, res) => rest.handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    direct = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await gw?.close();
  });

  const repeated = (n: number, key = 'x') => Array.from({ length: n }, () => key).join('&');

  it('queryValues: repeated keys kept in order under one name; one over the limit is INVALID_ARGUMENT', () => {
    const values = queryValues(`${repeated(MAX_QUERY_PARAMS - 2, 'k=v')}&a=1&k=last`);
    expect([...values.keys()]).toEqual(['k', 'a']);
    expect(values.get('k')!.length).toBe(MAX_QUERY_PARAMS - 1);
    expect(values.get('k')!.at(-1)).toBe('last');
    expect(values.get('a')).toEqual(['1']);
    expect(queryValues('').size).toBe(0);
    let error: unknown;
    try {
      queryValues(repeated(MAX_QUERY_PARAMS + 1));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it('through the gateway over HTTP/2: 32,000 repeated keys (64 KB path) are 400 code 3, with or without a token; 1000 are served', async () => {
    const session = http2Connect(gw.baseUrl);
    try {
      const get = (path: string, token?: string) =>
        h2Request(session, { ':method': 'GET', ':path': path, ...(token ? { authorization: `Bearer ${token}` } : {}) });
      for (const token of [gw.adminToken, undefined]) {
        const many = await get(`/v2/users/${gw.adminId}?${repeated(32_000)}`, token);
        expect(many.status, many.text).toBe(400);
        expect(JSON.parse(many.text)).toEqual({
          code: 3,
          message: `too many query parameters: 32000, at most ${MAX_QUERY_PARAMS}`,
          details: [],
        });
      }
      const over = await get(`/v2/users/${gw.adminId}?${repeated(MAX_QUERY_PARAMS + 1)}`, gw.adminToken);
      expect(over.status, over.text).toBe(400);
      expect(JSON.parse(over.text).code).toBe(3);
      // At the limit: served (unknown query parameters are ignored, as grpc-gateway does).
      const atLimit = await get(`/v2/users/${gw.adminId}?${repeated(MAX_QUERY_PARAMS)}`, gw.adminToken);
      expect(atLimit.status, atLimit.text).toBe(200);
      expect(JSON.parse(atLimit.text).user.userId).toBe(gw.adminId);
      const noToken = await get(`/v2/users/${gw.adminId}?${repeated(MAX_QUERY_PARAMS)}`);
      expect(noToken.status, noToken.text).toBe(401);
    } finally {
      session.close();
    }
  });

  it('the REST handler on its own: 50,000 repeated keys (100 KB) are 400 code 3, and it keeps serving', async () => {
    const headers = { authorization: `Bearer ${gw.adminToken}` };
    const many = await fetch(`${direct}/v2/users/${gw.adminId}?${repeated(50_000)}`, { headers });
    expect(many.status).toBe(400);
    expect(await many.json()).toEqual({ code: 3, message: `too many query parameters: 50000, at most ${MAX_QUERY_PARAMS}`, details: [] });
    const distinct = await fetch(`${direct}/v2/users/${gw.adminId}?${Array.from({ length: 50_000 }, (_, i) => `k${i}=${i}`).join('&')}`, {
      headers,
    });
    expect(distinct.status).toBe(400);
    expect((await distinct.json()).code).toBe(3);
    const after = await fetch(`${direct}/v2/users/${gw.adminId}`, { headers });
    expect(after.status).toBe(200);
  });
});
