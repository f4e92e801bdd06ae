// grpc-message as grpc-go writes it (src/wire/grpc-message.ts): only bytes outside 0x20-0x7E
// and '%' percent-encoded, in the trailers of gRPC, the trailer envelope of gRPC-web (binary and
// text) and the headers of a trailers-only answer. And a service or method the gateway does not
// serve, answered in each protocol's own form: gRPC and gRPC-web HTTP 200 with grpc-status 12
// (UNIMPLEMENTED) trailers-only, Connect 404 with {"code":"unimplemented"}, REST grpc-gateway's
// 404 with code 5. (A method of a served service that is not implemented stays connect's answer.)
import { connect as http2Connect, constants, type ClientHttp2Session } from 'node:http2';
import { create, toBinary } from '@bufbuild/protobuf';
import type { UniversalServerResponse } from '@connectrpc/connect/protocol';
import { AddProjectRequestSchema, UpdateHumanProfileRequestSchema } from '@zitadel/proto/zitadel/management_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGrpcMessage, grpcGoMessages } from '../src/wire/grpc-message.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';

/** A gRPC(-web) request body: one uncompressed message. */
const framed = (message: Uint8Array) => Buffer.concat([prefix(message.byteLength), message]);

/** The trailer fields of a binary gRPC-web body (its envelope flagged 0x80), as sent. */
function webTrailer(body: Buffer): Record<string, string> {
  const trailer: Record<string, string> = {};
  for (let at = 0; at < body.length;) {
    const length = body.readUInt32BE(at + 1);
    if (body[at]! & 0x80) {
      for (const line of body
        .subarray(at + 5, at + 5 + length)
        .toString('latin1')
        .split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailer[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
    }
    at += 5 + length;
  }
  return trailer;
}

/** What grpc-go's decoder makes of a grpc-message: %XX as a byte, anything else as itself. */
const percentDecode = (s: string) =>
  Buffer.from(
    s.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8');

describe('encodeGrpcMessage: grpc-go’s encoding', () => {
  it('leaves printable ASCII as it is and encodes the rest, and %, as upper-case %XX of the UTF-8 bytes', () => {
    expect(encodeGrpcMessage('Invalid input: first_name: must not be empty; a/b, c?d=e&f (x) ~')).toBe(
      'Invalid input: first_name: must not be empty; a/b, c?d=e&f (x) ~',
    );
    expect(encodeGrpcMessage('100% Zoë\n\t😀\u007f')).toBe('100%25 Zo%C3%AB%0A%09%F0%9F%98%80%7F');
    for (const s of ['', 'plain', '100% Zoë\n😀', '%25 is not decoded twice', '\u0000'])
      expect(percentDecode(encodeGrpcMessage(s))).toBe(s);
  });

  it('rewrites the trailer envelope of a gRPC-web body however the body is cut into chunks, messages untouched', async () => {
    const message = Buffer.concat([prefix(3), Buffer.from([1, 2, 3])]);
    const block = Buffer.from(`grpc-status: 3\r\ngrpc-message: ${encodeURIComponent('Invalid input: a: b; 100% é')}\r\n`, 'latin1');
    const trailer = Buffer.concat([Buffer.from([0x80, 0, 0, 0, 0]), block]);
    trailer.writeUInt32BE(block.byteLength, 1);
    const want = 'Invalid input: a: b; 100%25 %C3%A9';
    const whole = Buffer.concat([message, trailer]);
    for (const size of [1, 2, 5, 7, whole.byteLength]) {
      const chunks = Array.from({ length: Math.ceil(whole.byteLength / size) }, (_, i) => whole.subarray(i * size, (i + 1) * size));
      const res = grpcGoMessages(
        {
          status: 200,
          header: new Headers(),
          body: (async function* () {
            yield* chunks;
          })(),
        } as UniversalServerResponse,
        'grpc-web',
      );
      const out: Buffer[] = [];
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) out.push(Buffer.from(chunk));
      const body = Buffer.concat(out);
      expect(body.subarray(0, message.byteLength)).toEqual(message);
      expect(webTrailer(body)).toEqual({ 'grpc-status': '3', 'grpc-message': want });
    }
  });
});

describe('on the wire', () => {
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

  const grpc = (path: string, body: Uint8Array, contentType = 'application/grpc') => {
    const stream = session.request(grpcRequestHeaders(path, gw.adminToken, contentType));
    const answer = answerOf(stream);
    stream.end(body);
    return answer;
  };
  const web = (path: string, body: Uint8Array, text = false) =>
    fetch(`${gw.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gw.adminToken}`,
        'content-type': text ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto',
        'x-grpc-web': '1',
      },
      body: text ? Buffer.from(body).toString('base64') : new Uint8Array(body),
    });

  const PROFILE = '/zitadel.management.v1.ManagementService/UpdateHumanProfile';
  const emptyProfile = () =>
    framed(toBinary(UpdateHumanProfileRequestSchema, create(UpdateHumanProfileRequestSchema, { userId: gw.adminId })));

  it('gRPC: ":" and ";" as they are, in the trailers (where grpc-js read "Invalid input%3A first_name%3A …")', async () => {
    const answer = await grpc(PROFILE, emptyProfile());
    expect(answer.grpcStatus).toBe(3);
    const raw = String(answer.trailers['grpc-message'] ?? answer.headers['grpc-message']);
    expect(raw).toMatch(/^Invalid input: first_name: must not be empty; last_name: must not be empty \(INVALID_ARGUMENT-\w+\)$/);
  });

  it('gRPC, gRPC-web and gRPC-web text: non-ASCII and % percent-encoded, the rest as it is, the same text in every protocol', async () => {
    const name = `Zoë 100%: "ok"; a/b, c ${Date.now()}`;
    const add = framed(toBinary(AddProjectRequestSchema, create(AddProjectRequestSchema, { name })));
    const ADD = '/zitadel.management.v1.ManagementService/AddProject';
    expect((await grpc(ADD, add)).grpcStatus).toBe(0);
    const overGrpc = await grpc(ADD, add);
    expect(overGrpc.grpcStatus).toBe(6);
    const raw = String(overGrpc.trailers['grpc-message'] ?? overGrpc.headers['grpc-message']);
    const want = `A project named "${name}" in this organization already exists`;
    expect(raw).toMatch(
      /^A project named "Zo%C3%AB 100%25: "ok"; a\/b, c \d+" in this organization already exists \(ALREADY_EXISTS-\w+\)$/,
    );
    expect(percentDecode(raw)).toMatch(new RegExp(`^${want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(ALREADY_EXISTS-\\w+\\)$`));

    const overWeb = await web(ADD, add);
    expect(overWeb.status).toBe(200);
    const webBody = Buffer.from(await overWeb.arrayBuffer());
    const trailer = webTrailer(webBody);
    expect({
      status: trailer['grpc-status'] ?? overWeb.headers.get('grpc-status'),
      message: trailer['grpc-message'] ?? overWeb.headers.get('grpc-message'),
    }).toEqual({ status: '6', message: raw });

    const overText = await web(ADD, add, true);
    expect(overText.headers.get('content-type')).toBe('application/grpc-web-text+proto');
    const textTrailer = webTrailer(Buffer.concat((await overText.text()).match(/[^=]+=*/g)!.map((s) => Buffer.from(s, 'base64'))));
    expect(textTrailer['grpc-message'] ?? overText.headers.get('grpc-message')).toBe(raw);
  });

  describe('a service or method the gateway does not serve: UNIMPLEMENTED in each protocol’s form', () => {
    const UNSERVED: [string, string][] = [
      ['/zitadel.session.v2.SessionService/ListSessions', 'unknown service zitadel.session.v2.SessionService'],
      ['/zitadel.user.v2.UserService/NoSuchMethod', 'unknown method NoSuchMethod for service zitadel.user.v2.UserService'],
      ['/grpc.no:such.v1.Service/Call', 'unknown service grpc.no:such.v1.Service'],
    ];

    it.each(UNSERVED)(
      'gRPC %s: HTTP 200, trailers-only (one HEADERS frame that ends the stream), grpc-status 12 and grpc-go’s text',
      async (path, message) => {
        const stream = session.request(grpcRequestHeaders(path, gw.adminToken));
        // grpc-js reads a status from headers only when their frame ends the stream.
        const endsStream = new Promise<boolean>((resolve) =>
          stream.once('response', (_headers, flags: number) => resolve((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0)),
        );
        const answer = answerOf(stream);
        stream.end(framed(new Uint8Array()));
        const got = await answer;
        expect({
          status: got.headers[':status'],
          type: got.headers['content-type'],
          grpcStatus: got.headers['grpc-status'],
          message: got.headers['grpc-message'],
          body: got.body.byteLength,
          trailers: got.trailers['grpc-status'],
          endsStream: await endsStream,
        }).toEqual({ status: 200, type: 'application/grpc', grpcStatus: '12', message, body: 0, trailers: undefined, endsStream: true });
      },
    );

    it.each(UNSERVED)('gRPC-web %s, binary and text: HTTP 200 with grpc-status 12', async (path, message) => {
      for (const text of [false, true]) {
        const res = await web(path, framed(new Uint8Array()), text);
        expect({
          status: res.status,
          grpcStatus: res.headers.get('grpc-status'),
          message: res.headers.get('grpc-message'),
          type: res.headers.get('content-type'),
        }).toEqual({
          status: 200,
          grpcStatus: '12',
          message,
          type: text ? 'application/grpc-web-text+proto' : 'application/grpc-web+proto',
        });
        expect((await res.arrayBuffer()).byteLength).toBe(0);
      }
    });

    it.each(UNSERVED)('Connect %s: HTTP 404 with {"code":"unimplemented"}', async (path, message) => {
      const res = await fetch(`${gw.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ code: 'unimplemented', message });
    });

    it('REST: grpc-gateway’s 404 with code 5, as before', async () => {
      const res = await fetch(`${gw.baseUrl}/v2/no-such-thing`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 5 });
    });

    it('a method of a served service that the gateway does not implement: UNIMPLEMENTED as before (Connect: its own 501)', async () => {
      const path = '/zitadel.user.v2.UserService/DeleteUser';
      expect((await grpc(path, framed(new Uint8Array()))).grpcStatus).toBe(12);
      const res = await fetch(`${gw.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(501);
      expect((await res.json()).code).toBe('unimplemented');
    });
  });
});
