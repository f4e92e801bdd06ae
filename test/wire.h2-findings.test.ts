// HTTP/2 on the wire paths:
// 1. A stream the server has already answered (an over-cap frame refused with
//    RESOURCE_EXHAUSTED) but whose client keeps its half open must not hold up a graceful
//    stop (Http2ServerResponse emits 'finish' only when the stream closes): fixed in the
//    edge's drain, which waits only for answers not yet written.
// 2. gRPC over HTTP/2 sends no Content-Length. The edge once took such a body as 0 bytes, so
//    gRPC bodies bypassed the body budgets; counting them at the cap up front would allow only
//    two concurrent gRPC calls per address. They are metered as they arrive instead.
import { connect as http2Connect, constants as h2 } from 'node:http2';
import { Code } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { maxRequestBodyBytes, UNAUTHENTICATED_BODY_BYTES } from '../src/http/body-limit.ts';
import { startGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';
const ADD_PROJECT = '/zitadel.management.v1.ManagementService/AddProject';

describe('after a refusal', () => {
  it('a stream the server has answered (RESOURCE_EXHAUSTED) but the client keeps half open does not hold up a graceful stop', async () => {
    const own = await startGateway({ env: { SHUTDOWN_TIMEOUT_MS: '30000' } });
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
      // Clean: nothing was cut at SHUTDOWN_TIMEOUT_MS; prompt: far from it on any machine.
      expect({ clean, promptly: took < 10_000 }, `shutdown took ${took} ms`).toEqual({ clean: true, promptly: true });
    } finally {
      s.destroy();
      await own.close();
    }
  });
});

describe('gRPC bodies over HTTP/2 and the body budget', () => {
  // gRPC over HTTP/2 never sends Content-Length: the edge meters such a body as it arrives
  // (src/http/edge.ts bodyMeter), so it counts in the per-client and process budgets without
  // holding a whole cap per call up front.
  const inFlight = async (baseUrl: string) => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    return Number(/^gateway_http_body_bytes_in_flight (\d+)/m.exec(text)?.[1] ?? NaN);
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 25))) if (await check()) return;
    throw new Error(`timed out waiting for ${what}`);
  };

  it('bodies are counted as they arrive: two near-cap bodies fill a client address, a third is refused mid-body with RESOURCE_EXHAUSTED, and all is released when they end', async () => {
    // Defaults: a client address may hold two largest bodies at once.
    const own = await startGateway();
    const cap = maxRequestBodyBytes(own.config);
    const sent = cap - 1000;
    // The client queues three near-cap bodies: more than node's default 10 MB per session.
    const s = http2Connect(own.baseUrl, { maxSessionMemory: 256 });
    s.on('error', () => {});
    try {
      const held = [0, 1].map(() => {
        const stream = s.request(grpcRequestHeaders(ADD_PROJECT, own.adminToken));
        stream.on('error', () => {});
        stream.write(prefix(cap - 1000));
        stream.write(Buffer.alloc(sent - 5));
        return stream;
      });
      await until('two bodies counted', async () => (await inFlight(own.baseUrl)) === 2 * sent);

      const third = s.request(grpcRequestHeaders(ADD_PROJECT, own.adminToken));
      third.on('error', () => {});
      const answer = answerOf(third);
      third.write(prefix(cap - 1000));
      third.write(Buffer.alloc(sent - 5));
      const refused = await answer;
      expect({
        status: refused.headers[':status'],
        grpcStatus: refused.grpcStatus,
        message: decodeURIComponent(String(refused.headers['grpc-message'] ?? refused.trailers['grpc-message'])),
      }).toEqual({
        status: 200,
        grpcStatus: Code.ResourceExhausted,
        message: expect.stringContaining('Too many request-body bytes in flight from this client address'),
      });
      // The refused body's bytes are let go with its answer: the two held bodies are all that is counted.
      await until('the refused body released', async () => (await inFlight(own.baseUrl)) === 2 * sent);

      for (const stream of held) stream.close(h2.NGHTTP2_CANCEL);
      await until('the cancelled bodies released', async () => (await inFlight(own.baseUrl)) === 0);
    } finally {
      s.destroy();
      await own.close();
    }
  });

  it('many small gRPC calls at once from one address all pass (no cap is held per call up front)', async () => {
    const own = await startGateway();
    const s = http2Connect(own.baseUrl);
    s.on('error', () => {});
    try {
      const calls = Array.from({ length: 40 }, () => {
        const stream = s.request(grpcRequestHeaders(GET_MY_USER, own.adminToken));
        stream.on('error', () => {});
        const answer = answerOf(stream);
        stream.end(prefix(0));
        return answer;
      });
      const statuses = (await Promise.all(calls)).map((a) => a.grpcStatus);
      expect(statuses).toEqual(Array(40).fill(0)); // grpc-status OK
      expect(await inFlight(own.baseUrl)).toBe(0);
    } finally {
      s.destroy();
      await own.close();
    }
  });

  it('without a valid token a gRPC body is cut at the unauthenticated cap, mid-body, with UNAUTHENTICATED', async () => {
    const own = await startGateway();
    const s = http2Connect(own.baseUrl);
    s.on('error', () => {});
    try {
      const stream = s.request(grpcRequestHeaders(ADD_PROJECT, 'forged.token.here'));
      stream.on('error', () => {});
      const answer = answerOf(stream);
      stream.write(prefix(UNAUTHENTICATED_BODY_BYTES * 4));
      stream.write(Buffer.alloc(UNAUTHENTICATED_BODY_BYTES * 2));
      const refused = await answer;
      expect(refused.grpcStatus).toBe(Code.Unauthenticated);
      expect(decodeURIComponent(String(refused.headers['grpc-message'] ?? refused.trailers['grpc-message']))).toContain(
        `a request body over ${UNAUTHENTICATED_BODY_BYTES} bytes needs a valid bearer token`,
      );
      // Answered: its bytes are let go, though the client keeps its half of the stream open.
      await until('nothing counted', async () => (await inFlight(own.baseUrl)) === 0);
      stream.close(h2.NGHTTP2_CANCEL);
    } finally {
      s.destroy();
      await own.close();
    }
  });
});
