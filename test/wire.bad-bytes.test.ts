// Bad bytes on the wire API's paths, sent raw with node:http2 (and fetch for HTTP/1.1) to a
// real gateway's port: a truncated gRPC frame, a frame whose length prefix is over the body
// cap, a wrong content type, a stream reset mid-request and garbage as a Connect JSON body.
// Each answers an error (never a success, never a hang) and is followed by a good call on
// a fresh connection, which must succeed: the server keeps serving.
import { connect as http2Connect, constants as h2, type ClientHttp2Session } from 'node:http2';
import { Code, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createAuthServiceClient } from '@zitadel/client/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
});

const bearer =
  (token: string): Interceptor =>
  (next) =>
  async (req) => {
    req.header.set('authorization', `Bearer ${token}`);
    return next(req);
  };

/** A good call over a new gRPC connection, and /health: the server still serves. */
async function stillServing() {
  const auth = createAuthServiceClient(createGrpcTransport({ baseUrl: gw.baseUrl, interceptors: [bearer(gw.adminToken)] }));
  expect((await auth.getMyUser({})).user!.id).toBe(gw.adminId);
  expect((await fetch(`${gw.baseUrl}/health`)).status).toBe(200);
  expect(gw.logs.filter((l) => l.includes('unexpected error'))).toEqual([]);
}

const grpcHeaders = (contentType = 'application/grpc') => grpcRequestHeaders(GET_MY_USER, gw.adminToken, contentType);

let session: ClientHttp2Session | undefined;
const open = () => (session = http2Connect(gw.baseUrl));
afterAll(() => session?.close());

describe('bad bytes on the wire paths', () => {
  it('a truncated gRPC frame (the prefix says 100 bytes, 10 come, then the stream ends) answers an error status', async () => {
    const s = open();
    const stream = s.request(grpcHeaders());
    const answer = answerOf(stream);
    stream.write(prefix(100));
    stream.end(Buffer.alloc(10, 0x0a));
    const { grpcStatus, headers, trailers } = await answer;
    expect(headers[':status']).toBe(200);
    expect(grpcStatus).toBeDefined();
    expect(grpcStatus).not.toBe(0);
    // Today: INVALID_ARGUMENT "protocol error: incomplete envelope" (connect-node).
    expect(grpcStatus).toBe(Code.InvalidArgument);
    expect(decodeURIComponent(String(trailers['grpc-message']))).toContain('incomplete envelope');
    s.close();
    await stillServing();
  });

  it('a frame whose length prefix is over the body cap is refused with RESOURCE_EXHAUSTED before the server reads it', async () => {
    const cap = maxRequestBodyBytes(gw.config);
    const s = open();
    const stream = s.request(grpcHeaders());
    const answer = answerOf(stream);
    // Only the prefix and 1 KiB are sent, and the stream stays open: the answer can only
    // come from the prefix, not from a message the server read to its end.
    stream.write(prefix(cap + 1));
    stream.write(Buffer.alloc(1024));
    const { grpcStatus } = await answer;
    expect(grpcStatus).toBe(Code.ResourceExhausted);
    expect(stream.writableEnded).toBe(false);
    // The server has answered; the client drops its half of the stream.
    stream.close(h2.NGHTTP2_CANCEL);
    s.close();
    await stillServing();
  });

  it('a wrong content type (text/plain) to a wire path answers 415 or an error, over HTTP/2 and HTTP/1.1', async () => {
    const s = open();
    const stream = s.request(grpcHeaders('text/plain'));
    const answer = answerOf(stream);
    stream.end('{}');
    const h2answer = await answer;
    // connect-node answers an unsupported content type with HTTP 415 and no grpc-status.
    expect(h2answer.headers[':status']).toBe(415);
    expect(h2answer.grpcStatus ?? -1).not.toBe(0);
    s.close();

    const res = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${gw.adminToken}` },
      body: '{}',
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('grpc-status') ?? '-1').not.toBe('0');
    await res.arrayBuffer();
    await stillServing();
  });

  it('an HTTP/2 stream reset mid-request (part of a frame written, then NGHTTP2_CANCEL) leaves the server serving, on the same session too', async () => {
    const s = open();
    for (let i = 0; i < 5; i++) {
      const stream = s.request(grpcHeaders());
      stream.on('error', () => {});
      stream.write(prefix(1000));
      stream.write(Buffer.alloc(100, 0x0a));
      await new Promise((r) => setTimeout(r, 20));
      await new Promise<void>((resolve) => stream.close(h2.NGHTTP2_CANCEL, () => resolve()));
      expect(stream.rstCode).toBe(h2.NGHTTP2_CANCEL);
    }
    // The same session still carries a good request.
    const health = s.request({ ':method': 'GET', ':path': '/health' });
    const answer = answerOf(health);
    health.end();
    expect((await answer).headers[':status']).toBe(200);
    const good = s.request(grpcHeaders());
    const goodAnswer = answerOf(good);
    good.end(prefix(0));
    expect((await goodAnswer).grpcStatus).toBe(0);
    s.close();
    await stillServing();
  });

  it('garbage bytes as a Connect JSON body answer invalid_argument', async () => {
    for (const body of [Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x80]), Buffer.from('{"unterminated": '), Buffer.from('not json at all')]) {
      const res = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
        body,
      });
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text).code, text).toBe('invalid_argument');
    }
    // The same over HTTP/2.
    const s = open();
    const stream = s.request({
      ':method': 'POST',
      ':path': GET_MY_USER,
      'content-type': 'application/json',
      authorization: `Bearer ${gw.adminToken}`,
    });
    const answer = answerOf(stream);
    stream.end(Buffer.from([0xde, 0xad, 0xbe, 0xef]));
    const h2answer = await answer;
    expect(h2answer.headers[':status']).toBe(400);
    expect(JSON.parse(h2answer.body.toString('utf8')).code).toBe('invalid_argument');
    s.close();
    await stillServing();
  });
});
