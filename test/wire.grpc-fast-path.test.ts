// The gRPC face serves a plain unary call (binary, one uncompressed message) on its own fast
// path (src/wire/grpc-unary.ts) and every other shape through connect's router. The same call
// sent both ways (plain; and gzip-compressed, which only the router takes) must get the same
// answer: headers, message bytes and trailers, for a read, a write, a command's error and a
// message that does not decode. Then the shapes the fast path hands over: a prefix over the cap
// is answered before the body ends, a second message and an empty body are connect's errors.
// Last, that the plain call really took the fast path.
import { gzipSync } from 'node:zlib';
import { connect as http2Connect, createServer as createHttp2Server, type ClientHttp2Session, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, createContextValues, type HandlerContext } from '@connectrpc/connect';
import { GetMyUserRequestSchema } from '@zitadel/proto/zitadel/auth_pb.js';
import {
  GetUserByIDRequestSchema,
  UpdateHumanProfileRequestSchema,
  UpdateHumanProfileResponseSchema,
} from '@zitadel/proto/zitadel/management_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { HealthCheckRequestSchema, HealthCheckResponseSchema, HealthService, ServingStatus } from '../src/wire/health.ts';
import { createRpcAdapter } from '../src/wire/rpc-adapter.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix, type Answer } from './support/grpc-raw.ts';

let gw: TestGateway;
let session: ClientHttp2Session;
beforeAll(async () => {
  gw = await startGateway();
  session = http2Connect(gw.baseUrl);
});
afterAll(async () => {
  session?.close();
  await gw?.close();
});

const envelope = (flags: number, message: Uint8Array) =>
  Buffer.concat([Buffer.from([flags]), prefix(message.byteLength).subarray(1), message]);

/** One call; `compressed`: the message gzip-compressed (grpc-encoding: gzip), which only connect's router serves. */
async function call(path: string, message: Uint8Array, compressed: boolean): Promise<Answer> {
  const stream = session.request({
    ...grpcRequestHeaders(path, gw.adminToken),
    'grpc-accept-encoding': 'identity',
    ...(compressed ? { 'grpc-encoding': 'gzip' } : {}),
  });
  const answer = answerOf(stream);
  stream.end(compressed ? envelope(1, gzipSync(message)) : envelope(0, message));
  return answer;
}

/** What a client sees, without what differs between any two answers (date, request id). */
const seen = (a: Answer) => {
  const { date: _date, 'x-request-id': _id, ...headers } = a.headers;
  return { headers, trailers: a.trailers, body: a.body.toString('hex') };
};

const bytes = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init));

describe('the gRPC fast path answers as connect does', () => {
  it('a read: same headers, message and trailers', async () => {
    const message = bytes(GetMyUserRequestSchema, {});
    const [fast, router] = [
      await call('/zitadel.auth.v1.AuthService/GetMyUser', message, false),
      await call('/zitadel.auth.v1.AuthService/GetMyUser', message, true),
    ];
    expect(fast.grpcStatus).toBe(0);
    expect(fast.headers['content-type']).toBe('application/grpc+proto');
    expect(seen(fast)).toEqual(seen(router));
  });

  it('a write lands once per call, each answered with its sequence', async () => {
    const path = '/zitadel.management.v1.ManagementService/UpdateHumanProfile';
    const change = (firstName: string) => bytes(UpdateHumanProfileRequestSchema, { userId: gw.adminId, firstName, lastName: 'Fast' });
    const first = await call(path, change('Ada'), false);
    const second = await call(path, change('Grace'), true);
    expect([first.grpcStatus, second.grpcStatus]).toEqual([0, 0]);
    const sequence = (a: Answer) => fromBinary(UpdateHumanProfileResponseSchema, a.body.subarray(5)).details!.sequence;
    expect(sequence(second)).toBe(sequence(first) + 1n);
    expect(Object.keys(first.headers).sort()).toEqual(Object.keys(second.headers).sort());
    expect(first.trailers).toEqual(second.trailers);
  });

  it("a command's error: same status, grpc-message and details", async () => {
    const message = bytes(GetUserByIDRequestSchema, { id: '999999999999999999' });
    const path = '/zitadel.management.v1.ManagementService/GetUserByID';
    const [fast, router] = [await call(path, message, false), await call(path, message, true)];
    expect(fast.grpcStatus).toBe(Code.NotFound);
    expect(seen(fast)).toEqual(seen(router));
  });

  it('a message that does not decode: INVALID_ARGUMENT in the same words, nothing run', async () => {
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    const path = '/zitadel.management.v1.ManagementService/UpdateHumanProfile';
    const [fast, router] = [await call(path, garbage, false), await call(path, garbage, true)];
    expect(fast.grpcStatus).toBe(Code.InvalidArgument);
    expect(decodeURIComponent(String(fast.trailers['grpc-message']))).toMatch(
      /not a valid zitadel\.management\.v1\.UpdateHumanProfileRequest/,
    );
    expect(seen(fast)).toEqual(seen(router));
  });
});

describe('shapes the fast path hands to the router', () => {
  it('two messages in a unary call: connect refuses the extra message', async () => {
    const message = bytes(GetMyUserRequestSchema, {});
    const stream = session.request(grpcRequestHeaders('/zitadel.auth.v1.AuthService/GetMyUser', gw.adminToken));
    const answer = answerOf(stream);
    stream.end(Buffer.concat([envelope(0, message), envelope(0, message)]));
    const a = await answer;
    expect(a.grpcStatus).toBe(Code.Unimplemented);
    expect(decodeURIComponent(String(a.trailers['grpc-message'] ?? a.headers['grpc-message']))).toMatch(/extra input message/);
  });

  it('an empty body: connect reports the missing message', async () => {
    const stream = session.request(grpcRequestHeaders('/zitadel.auth.v1.AuthService/GetMyUser', gw.adminToken));
    const answer = answerOf(stream);
    stream.end();
    const a = await answer;
    expect(a.grpcStatus).toBe(Code.Unimplemented);
    expect(decodeURIComponent(String(a.trailers['grpc-message'] ?? a.headers['grpc-message']))).toMatch(/missing input message/);
  });

  it('a message split over many small frames is read whole and served', async () => {
    const message = envelope(0, bytes(GetUserByIDRequestSchema, { id: gw.adminId }));
    const stream = session.request(grpcRequestHeaders('/zitadel.management.v1.ManagementService/GetUserByID', gw.adminToken));
    const answer = answerOf(stream);
    for (const byte of message) stream.write(Buffer.from([byte]));
    stream.end();
    const a = await answer;
    expect(a.grpcStatus).toBe(0);
    expect(a.body.toString('latin1')).toContain(gw.adminId);
  });
});

describe('which path served the call', () => {
  // The comparisons above hold whichever path serves a call; this tells the paths apart. The
  // adapter is the gateway's, on a real HTTP/2 server, with a Health service whose answer says
  // whether its handler context carries the call's grpc-timeout: connect's router builds a
  // context with the deadline, the fast path its own, which leaves deadlines out (no
  // implementation of the gateway reads one).
  let server: Http2Server;
  let own: ClientHttp2Session;
  beforeAll(async () => {
    const adapter = createRpcAdapter({
      grpc: true,
      readMaxBytes: 1 << 20,
      logger: createLogger('error', () => undefined),
      contextValues: () => createContextValues(),
      routes(router) {
        router.service(HealthService, {
          check: (_req: unknown, ctx: HandlerContext) => ({
            status: ctx.timeoutMs() === undefined ? ServingStatus.SERVING : ServingStatus.NOT_SERVING,
          }),
        } as never);
      },
    });
    server = createHttp2Server((req, res) => adapter(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    own = http2Connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    own?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const check = async (compressed: boolean) => {
    const stream = own.request({
      ...grpcRequestHeaders('/grpc.health.v1.Health/Check', 'unused'),
      'grpc-timeout': '10S',
      ...(compressed ? { 'grpc-encoding': 'gzip' } : {}),
    });
    const answer = answerOf(stream);
    const message = bytes(HealthCheckRequestSchema, {});
    stream.end(compressed ? envelope(1, gzipSync(message)) : envelope(0, message));
    const a = await answer;
    expect(a.grpcStatus).toBe(0);
    return (fromBinary(HealthCheckResponseSchema, a.body.subarray(5)) as unknown as { status: number }).status;
  };

  it('a plain call takes the fast path; a compressed one, the router', async () => {
    expect(await check(false)).toBe(ServingStatus.SERVING);
    expect(await check(true)).toBe(ServingStatus.NOT_SERVING);
  });
});
