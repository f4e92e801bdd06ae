// Request bytes that do not decode, on every binary face of the RPC paths: gRPC (HTTP/2, raw
// node:http2), gRPC-web binary and text, and Connect binary (HTTP/1.1, fetch). A message that is
// not valid protobuf of its type (a string that is not UTF-8, a varint of eleven bytes, nesting
// past the decoder's depth) is INVALID_ARGUMENT in the gateway's words, as the JSON faces answer
// bad JSON: never INTERNAL, never the decoder's text. A compressed envelope on a request that
// names no grpc-encoding is INTERNAL, as grpc-go answers it, in the gateway's words too; an
// unknown grpc-encoding is UNIMPLEMENTED with grpc-accept-encoding in the answer's headers
// (gRPC's compression.md). After each, a good call on a fresh connection succeeds and nothing
// is logged as unexpected.
import { connect as http2Connect } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { create, toBinary, type JsonObject } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createAuthServiceClient } from '@zitadel/client/v1';
import { GetUserByIDRequestSchema } from '@zitadel/proto/zitadel/management_pb.js';
import { VerifyU2FRegistrationRequestSchema } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders, prefix } from './support/grpc-raw.ts';
import { bearer } from './support/wire-clients.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';
const GET_USER_BY_ID = '/zitadel.management.v1.ManagementService/GetUserByID';
const VERIFY_U2F = '/zitadel.user.v2.UserService/VerifyU2FRegistration';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
});

/** An envelope: the flag byte (1: compressed), the length, the message. */
const envelope = (message: Uint8Array, flag = 0) => {
  const head = prefix(message.length);
  head[0] = flag;
  return Buffer.concat([head, message]);
};

interface Outcome {
  code: number | undefined;
  message: string;
  /** The answer's headers (HTTP/2: with :status). */
  headers: Record<string, string>;
}

/** gRPC-web trailer frames (flag 0x80) of a binary gRPC-web body, as name → value. */
function grpcWebTrailer(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (let at = 0; at + 5 <= body.length;) {
    const length = body.readUInt32BE(at + 1);
    if (body[at]! & 0x80) {
      for (const line of body
        .subarray(at + 5, at + 5 + length)
        .toString('latin1')
        .split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
    }
    at += 5 + length;
  }
  return out;
}

/** A text-mode body: padded base64 segments (one per envelope), each decoded on its own. */
const fromTextSegments = (text: string) => Buffer.concat(text.split(/(?<==)(?=[^=])/).map((segment) => Buffer.from(segment, 'base64')));

const headersOf = (h: Headers | Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(h instanceof Headers ? [...h.entries()] : Object.entries(h).map(([k, v]) => [k, String(v)]));

type Face = 'grpc' | 'grpc-web' | 'grpc-web-text' | 'connect';
const FACES: Face[] = ['grpc', 'grpc-web', 'grpc-web-text', 'connect'];

/**
 * One call of `path` with `body` (an enveloped body; Connect unary: the message of the first
 * envelope) over `face`, with the admin's token unless `token` says otherwise (null: none).
 */
async function call(
  face: Face,
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
  token: string | null = gw.adminToken,
): Promise<Outcome> {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (face === 'grpc') {
    const session = http2Connect(gw.baseUrl);
    try {
      const { authorization: _, ...plain } = grpcRequestHeaders(path, '');
      const stream = session.request({ ...plain, ...auth, ...headers });
      const answer = answerOf(stream);
      stream.end(body);
      const { grpcStatus, headers: h, trailers } = await answer;
      return {
        code: grpcStatus,
        message: decodeURIComponent(String(trailers['grpc-message'] ?? h['grpc-message'] ?? '')),
        headers: headersOf(h),
      };
    } finally {
      session.close();
    }
  }
  const contentType = {
    'grpc-web': 'application/grpc-web+proto',
    'grpc-web-text': 'application/grpc-web-text',
    connect: 'application/proto',
  }[face];
  const sent = face === 'grpc-web-text' ? Buffer.from(body.toString('base64')) : face === 'connect' ? body.subarray(5) : body;
  const res = await fetch(`${gw.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...auth, ...headers },
    body: new Uint8Array(sent),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  if (face === 'connect') {
    const json = res.ok ? {} : (JSON.parse(raw.toString('utf8')) as JsonObject);
    const code = res.ok
      ? 0
      : (Object.entries(Code).find(
          ([name]) => name.replace(/[A-Z]/g, (c, i) => (i ? '_' : '') + c.toLowerCase()) === json.code,
        )?.[1] as number);
    return { code, message: String(json.message ?? ''), headers: headersOf(res.headers) };
  }
  const trailer = grpcWebTrailer(face === 'grpc-web-text' ? fromTextSegments(raw.toString('latin1')) : raw);
  const status = trailer['grpc-status'] ?? res.headers.get('grpc-status');
  return {
    code: status == null ? undefined : Number(status),
    message: decodeURIComponent(trailer['grpc-message'] ?? res.headers.get('grpc-message') ?? ''),
    headers: headersOf(res.headers),
  };
}

/** A good call over a new gRPC connection: the server still serves, and nothing was logged as unexpected. */
async function stillServing() {
  const auth = createAuthServiceClient(createGrpcTransport({ baseUrl: gw.baseUrl, interceptors: [bearer(gw.adminToken)] }));
  expect((await auth.getMyUser({})).user!.id).toBe(gw.adminId);
  expect(gw.logs.filter((l) => l.includes('unexpected error') || l.includes('rpc handler failed'))).toEqual([]);
}

/** Text no answer may carry: the decoders' own words. */
const DECODER_TEXT = /parse binary|varint|recursion|utf-8|encoded data|premature|wire type|do not know how/i;

/** A VerifyU2FRegistration whose credential (a google.protobuf.Struct) nests `depth` objects. */
function deepCredential(depth: number): Uint8Array {
  let value: JsonObject = { leaf: true };
  for (let i = 0; i < depth; i++) value = { a: value };
  return toBinary(
    VerifyU2FRegistrationRequestSchema,
    create(VerifyU2FRegistrationRequestSchema, { userId: gw.adminId, u2fId: 'u2f-1', tokenName: 'key', publicKeyCredential: value }),
  );
}

const BAD_MESSAGES: [name: string, path: string, message: () => Uint8Array, typeName: string][] = [
  // GetUserByIDRequest.id (field 1, a string) of two bytes that are not UTF-8.
  [
    'a string field that is not UTF-8',
    GET_USER_BY_ID,
    () => Buffer.from([0x0a, 0x02, 0xff, 0xfe]),
    'zitadel.management.v1.GetUserByIDRequest',
  ],
  // An unknown varint field (number 1 as varint) of eleven bytes: no varint is longer than ten.
  [
    'a varint of eleven bytes',
    GET_USER_BY_ID,
    () => Buffer.from([0x08, ...Array(10).fill(0xff), 0x01]),
    'zitadel.management.v1.GetUserByIDRequest',
  ],
  // A length prefix past the end of the message.
  ['a field longer than the message', GET_USER_BY_ID, () => Buffer.from([0x0a, 0x7f, 0x41]), 'zitadel.management.v1.GetUserByIDRequest'],
  // 120 levels of Struct in Value in Struct: past the decoder's recursion limit of 100.
  ['messages nested past the decoder’s depth', VERIFY_U2F, () => deepCredential(120), 'zitadel.user.v2.VerifyU2FRegistrationRequest'],
];

describe('a message that does not decode is INVALID_ARGUMENT in the gateway’s words, on every binary face', () => {
  for (const [name, path, message, typeName] of BAD_MESSAGES) {
    it(name, async () => {
      for (const face of FACES) {
        const outcome = await call(face, path, envelope(message()));
        expect({ face, code: outcome.code, message: outcome.message }).toEqual({
          face,
          code: Code.InvalidArgument,
          message: `request message: not a valid ${typeName} in protobuf binary encoding`,
        });
        expect(outcome.message).not.toMatch(DECODER_TEXT);
      }
      await stillServing();
    });
  }

  it("the same messages gzipped (grpc-encoding, or Connect's content-encoding): INVALID_ARGUMENT too", async () => {
    for (const [, path, message, typeName] of BAD_MESSAGES) {
      for (const face of FACES) {
        const headers: Record<string, string> = face === 'connect' ? { 'content-encoding': 'gzip' } : { 'grpc-encoding': 'gzip' };
        const outcome = await call(face, path, envelope(gzipSync(message()), 1), headers);
        expect({ face, code: outcome.code, message: outcome.message }).toEqual({
          face,
          code: Code.InvalidArgument,
          message: `request message: not a valid ${typeName} in protobuf binary encoding`,
        });
      }
    }
    await stillServing();
  });

  it('compressed data that does not decompress (a truncated or garbled gzip stream): INVALID_ARGUMENT, not INTERNAL', async () => {
    const good = gzipSync(toBinary(GetUserByIDRequestSchema, create(GetUserByIDRequestSchema, { id: gw.adminId })));
    for (const bytes of [good.subarray(0, good.length - 6), Buffer.from('not gzip at all')]) {
      for (const face of FACES) {
        const headers: Record<string, string> = face === 'connect' ? { 'content-encoding': 'gzip' } : { 'grpc-encoding': 'gzip' };
        const outcome = await call(face, GET_USER_BY_ID, envelope(bytes, 1), headers);
        expect({ face, code: outcome.code, message: outcome.message }).toEqual({
          face,
          code: Code.InvalidArgument,
          message: 'request message: not valid gzip data',
        });
      }
    }
    await stillServing();
  });

  it('a good message still passes on every face (the check decodes what the router decodes)', async () => {
    const good = toBinary(GetUserByIDRequestSchema, create(GetUserByIDRequestSchema, { id: gw.adminId }));
    for (const face of FACES) expect({ face, code: (await call(face, GET_USER_BY_ID, envelope(good))).code }).toEqual({ face, code: 0 });
    for (const face of FACES) {
      const headers: Record<string, string> = face === 'connect' ? { 'content-encoding': 'gzip' } : { 'grpc-encoding': 'gzip' };
      expect({ face, code: (await call(face, GET_USER_BY_ID, envelope(gzipSync(good), 1), headers)).code }).toEqual({ face, code: 0 });
    }
  });
});

describe('compression the request does not declare, or the gateway does not know', () => {
  it('a compressed envelope without grpc-encoding (or with identity): INTERNAL, as grpc-go answers it, in the gateway’s words', async () => {
    const compressed = envelope(gzipSync(Buffer.alloc(0)), 1);
    for (const face of ['grpc', 'grpc-web', 'grpc-web-text'] as const) {
      for (const headers of [{}, { 'grpc-encoding': 'identity' }] as Record<string, string>[]) {
        const outcome = await call(face, GET_MY_USER, compressed, headers);
        expect({ face, headers, code: outcome.code, message: outcome.message }).toEqual({
          face,
          headers,
          code: Code.Internal,
          message: 'request message: compressed flag set, but the request names no grpc-encoding',
        });
      }
    }
    await stillServing();
  });

  it('an unknown grpc-encoding: UNIMPLEMENTED, with grpc-accept-encoding listing gzip and br in the answer’s headers', async () => {
    for (const face of ['grpc', 'grpc-web', 'grpc-web-text'] as const) {
      const outcome = await call(face, GET_MY_USER, envelope(Buffer.alloc(0), 1), { 'grpc-encoding': 'zstd' });
      expect({ face, code: outcome.code, accept: outcome.headers['grpc-accept-encoding'] }).toEqual({
        face,
        code: Code.Unimplemented,
        accept: 'gzip,br',
      });
      expect(outcome.message).toBe("the request's grpc-encoding is not supported: send gzip, br or identity");
    }
    await stillServing();
  });

  it('gzip, br and identity are still accepted', async () => {
    const empty = Buffer.alloc(0);
    for (const face of ['grpc', 'grpc-web', 'grpc-web-text'] as const) {
      expect((await call(face, GET_MY_USER, envelope(empty), { 'grpc-encoding': 'identity' })).code).toBe(0);
      expect((await call(face, GET_MY_USER, envelope(gzipSync(empty), 1), { 'grpc-encoding': 'gzip' })).code).toBe(0);
      // br declared, the message sent uncompressed (flag 0): allowed.
      expect((await call(face, GET_MY_USER, envelope(empty), { 'grpc-encoding': 'br' })).code).toBe(0);
    }
  });
});

describe('compressed messages count against the caller’s cap once decompressed', () => {
  const MiB = 1024 * 1024;
  /** A message of `n` zero bytes as gzip: a few KB on the wire. */
  const zeros = (n: number) => gzipSync(Buffer.alloc(n));

  it('without a token a bomb stops at 64 KiB of output: UNAUTHENTICATED with the edge’s words, on every face', async () => {
    for (const face of FACES) {
      const headers: Record<string, string> = face === 'connect' ? { 'content-encoding': 'gzip' } : { 'grpc-encoding': 'gzip' };
      const outcome = await call(face, GET_MY_USER, envelope(zeros(4 * MiB), 1), headers, null);
      expect({ face, code: outcome.code }).toEqual({ face, code: Code.Unauthenticated });
      expect(outcome.message).toContain('a request body over 65536 bytes needs a valid bearer token');
    }
  });

  it('the same for compressed JSON (Connect, gRPC +json), which connect decompressed to 13.5 MB before', async () => {
    const json = gzipSync(Buffer.from(`{${' '.repeat(4 * MiB)}}`));
    const connect = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: new Uint8Array(json),
    });
    const answer = (await connect.json()) as { code: string; message: string };
    expect({ status: connect.status, code: answer.code }).toEqual({ status: 401, code: 'unauthenticated' });
    expect(answer.message).toContain('needs a valid bearer token');
    const session = http2Connect(gw.baseUrl);
    try {
      const { authorization: _, ...plain } = grpcRequestHeaders(GET_MY_USER, '', 'application/grpc+json');
      const stream = session.request({ ...plain, 'grpc-encoding': 'gzip' });
      const reply = answerOf(stream);
      stream.end(envelope(json, 1));
      const { grpcStatus, headers, trailers } = await reply;
      expect(grpcStatus).toBe(Code.Unauthenticated);
      expect(decodeURIComponent(String(trailers['grpc-message'] ?? headers['grpc-message']))).toContain('needs a valid bearer token');
    } finally {
      session.close();
    }
  });

  it('with a token, a message over the body cap once decompressed: RESOURCE_EXHAUSTED; compressed JSON within it passes', async () => {
    for (const face of FACES) {
      const headers: Record<string, string> = face === 'connect' ? { 'content-encoding': 'gzip' } : { 'grpc-encoding': 'gzip' };
      const outcome = await call(face, GET_MY_USER, envelope(zeros(16 * MiB), 1), headers);
      expect({ face, code: outcome.code }).toEqual({ face, code: Code.ResourceExhausted });
      expect(outcome.message).toContain('Request body too large');
    }
    const ok = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${gw.adminToken}` },
      body: new Uint8Array(gzipSync(Buffer.from(`{${' '.repeat(MiB)}}`))),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { user: { id: string } }).user.id).toBe(gw.adminId);
    await stillServing();
  });
});
