// HTTP/2 on the wire paths:
// 1. A stream the server has already answered (an over-cap frame refused with
//    RESOURCE_EXHAUSTED) but whose client keeps its half open must not hold up a graceful
//    stop (Http2ServerResponse emits 'finish' only when the stream closes): fixed in the
//    edge's drain, which waits only for answers not yet written.
// 2. KNOWN BUG, left open (issue 11): gRPC over HTTP/2 sends no Content-Length and the edge
//    takes such a body as 0 bytes (declaredBodyBytes in src/http/edge.ts), so gRPC bodies
//    bypass the per-client and process body budgets. Counting them at the cap up front would
//    allow only two concurrent gRPC calls per address; the fix is metering bytes as they
//    arrive. The test is `it.fails` until then: it fails (turns red) the day the bug is
//    fixed, and must then become `it`.
import { connect as http2Connect, constants as h2 } from 'node:http2';
import { Code } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { startGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';
const ADD_PROJECT = '/zitadel.management.v1.ManagementService/AddProject';

describe('after a refusal', () => {
  it('a stream the server has answered (RESOURCE_EXHAUSTED) but the client keeps half open does not hold up a graceful stop', async () => {
    const own = await startGateway({ env: { SHUTDOWN_TIMEOUT_MS: '3000' } });
    const s = http2Connect(own.baseUrl);
    s.on('error', () => {});
    try {
      const stream = s.request(grpcRequestHeaders(GET_MY_USER, own.adminToken));
      stream.on('error', () => {});
      const answer = answerOf(stream);
      stream.write(prefix(maxRequestBodyBytes(own.config) + 1));
      expect((await answer).grpcStatus).toBe(Code.ResourceExhausted);
      // The call is over: nothing is in flight. The client neither ends nor resets its half.
      const started = Date.now();
      const clean = await own.gateway.shutdown();
      const took = Date.now() - started;
      expect({ clean, promptly: took < 1000 }, `shutdown took ${took} ms`).toEqual({ clean: true, promptly: true });
    } finally {
      s.destroy();
      await own.close();
    }
  });
});

describe('gRPC bodies over HTTP/2 and the body budget', () => {
  it.fails('KNOWN BUG: a gRPC request over HTTP/2 (no Content-Length: a body of unknown length) is counted in the request-body bytes in flight, as a chunked HTTP/1.1 body is', async () => {
    // Defaults: a client address may hold two largest bodies at once. gRPC over HTTP/2 never
    // sends Content-Length; the edge must count such a body at the cap (as it does a chunked
    // one), else any number of near-cap messages are read at once from one address.
    const own = await startGateway();
    const cap = maxRequestBodyBytes(own.config);
    const s = http2Connect(own.baseUrl);
    s.on('error', () => {});
    const inFlight = async () => {
      const text = await (await fetch(`${own.baseUrl}/metrics`)).text();
      return Number(/^gateway_http_body_bytes_in_flight (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    try {
      const held = [0, 1].map(() => {
        const stream = s.request(grpcRequestHeaders(ADD_PROJECT, own.adminToken));
        stream.on('error', () => {});
        stream.write(prefix(cap - 1000));
        stream.write(Buffer.alloc(16));
        return stream;
      });
      await new Promise((r) => setTimeout(r, 300));
      const third = s.request(grpcRequestHeaders(ADD_PROJECT, own.adminToken));
      third.on('error', () => {});
      const answer = answerOf(third);
      third.write(prefix(cap - 1000));
      third.write(Buffer.alloc(16));
      const first = await Promise.race([answer.then((a) => `HTTP ${a.headers[':status']} grpc-status ${a.grpcStatus}`), new Promise<string>((r) => setTimeout(() => r('still reading'), 1000))]);
      const counted = await inFlight();
      for (const stream of [...held, third]) stream.close(h2.NGHTTP2_CANCEL);
      expect({ inFlightBytes: counted >= 2 * cap ? 'two caps or more' : counted, third: first }).toEqual({ inFlightBytes: 'two caps or more', third: 'HTTP 429 grpc-status undefined' });
    } finally {
      s.destroy();
      await own.close();
    }
  });
});
