// Request messages that would decode into far more objects than any legal request holds are
// refused before they are decoded (src/wire/request-limits.ts, src/wire/protobuf-fields.ts):
// an AddHumanUser of 100,000+ empty `metadata` entries is INVALID_ARGUMENT over REST, Connect
// JSON, Connect proto, gRPC, gRPC-web (binary and text), compressed or not, and creates
// nothing; the largest legal list (20 metadata entries) still passes on every face.
import { gzipSync } from 'node:zlib';
import { connect as http2Connect } from 'node:http2';
import { create, toBinary, type DescMessage } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { compressionGzip, createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { createUserServiceClient } from '@zitadel/client/v2';
import { AddHumanUserRequestSchema, ListUsersRequestSchema } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../src/model/users.ts';
import { MAX_MESSAGE_FIELDS, MAX_REPEATED_ELEMENTS, protobufFieldsRefusal } from '../src/wire/protobuf-fields.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { answerOf, grpcRequestHeaders } from './support/grpc-raw.ts';
import { bearer, failure, WIRE_KINDS, wireTransport } from './support/wire-clients.ts';

const ADD_HUMAN_USER = '/zitadel.user.v2.UserService/AddHumanUser';
const MANY = 100_000;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
});

let seq = 0;
const tag = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

/** An AddHumanUser with a fixed user_id and username (so a refusal can be shown to create nothing), as proto3 JSON. */
const requestJson = (metadata: unknown[]) => ({
  userId: tag('ml-'),
  username: tag('ml-'),
  profile: { givenName: 'Ada', familyName: 'Lovelace' },
  email: { email: `${tag('m')}@example.com`, isVerified: true },
  metadata,
});
const requestMessage = (metadata: { key?: string; value?: Uint8Array }[]) => {
  const json = requestJson([]);
  return create(AddHumanUserRequestSchema, {
    userId: json.userId,
    username: json.username,
    profile: json.profile,
    email: { email: json.email.email, verification: { case: 'isVerified', value: true } },
    metadata,
  });
};
const empties = (n: number) => Array.from({ length: n }, () => ({}));
const legalMetadata = () => Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: new TextEncoder().encode(`v${i}`) }));

async function expectNoUser(req: { userId?: string; username?: string }) {
  expect(await gw.gateway.deps.store.load<User>('user', req.userId!)).toBeNull();
  expect(await gw.gateway.deps.store.lookup(`username:${req.username!.toLowerCase()}`)).toBeNull();
}
async function expectUserWith20Metadata(userId: string) {
  const user = await gw.gateway.deps.store.load<User>('user', userId);
  expect(user).not.toBeNull();
  expect(user!.state.metadata).toHaveLength(20);
}

const TOO_MANY_ELEMENTS = `request message: more than ${MAX_REPEATED_ELEMENTS} elements in zitadel.user.v2.AddHumanUserRequest.metadata`;
const TOO_MANY_JSON = 'request body: more than 10000 JSON objects and arrays';

describe('AddHumanUser with 100,000 empty metadata entries is refused before decoding', () => {
  for (const kind of WIRE_KINDS) {
    it(`over ${kind}: INVALID_ARGUMENT, nothing created; 20 entries pass`, async () => {
      const users = createUserServiceClient(wireTransport(kind, gw.baseUrl, gw.adminToken));
      const bad = requestMessage(empties(MANY));
      const err = await failure(users.addHumanUser(bad));
      expect(err.code, err.message).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe(kind === 'connect-json' ? TOO_MANY_JSON : TOO_MANY_ELEMENTS);
      await expectNoUser(bad);

      const good = requestMessage(legalMetadata());
      expect((await users.addHumanUser(good)).userId).toBe(good.userId);
      await expectUserWith20Metadata(good.userId!);
    });
  }

  it('over REST: 400 with code 3, nothing created; 20 entries pass', async () => {
    const post = (body: string) =>
      fetch(`${gw.baseUrl}/v2/users/human`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
        body,
      });
    const bad = requestJson(empties(MANY));
    const res = await post(JSON.stringify(bad));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: Code.InvalidArgument, message: TOO_MANY_JSON, details: [] });
    await expectNoUser(bad);

    const good = requestJson(legalMetadata().map((m) => ({ key: m.key, value: Buffer.from(m.value).toString('base64') })));
    const ok = await post(JSON.stringify(good));
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect((await ok.json()).userId).toBe(good.userId);
    await expectUserWith20Metadata(good.userId);
  });

  it('the largest legal AddHumanUser (20 values of 500 KB) still passes over gRPC and REST', async () => {
    const big = () => Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: new Uint8Array(500_000).fill(65 + i) }));
    const users = createUserServiceClient(wireTransport('grpc', gw.baseUrl, gw.adminToken));
    const viaGrpc = requestMessage(big());
    expect((await users.addHumanUser(viaGrpc)).userId).toBe(viaGrpc.userId);
    await expectUserWith20Metadata(viaGrpc.userId!);

    const viaRest = requestJson(big().map((m) => ({ key: m.key, value: Buffer.from(m.value).toString('base64') })));
    const res = await fetch(`${gw.baseUrl}/v2/users/human`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
      body: JSON.stringify(viaRest),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await expectUserWith20Metadata(viaRest.userId);
  });

  it('compressed (gzip) over gRPC and Connect proto: refused once decompressed; 20 entries pass', async () => {
    const transports = [
      createGrpcTransport({
        baseUrl: gw.baseUrl,
        interceptors: [bearer(gw.adminToken)],
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
      }),
      createConnectTransport({
        baseUrl: gw.baseUrl,
        httpVersion: '1.1',
        useBinaryFormat: true,
        interceptors: [bearer(gw.adminToken)],
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
      }),
    ];
    for (const transport of transports) {
      const users = createUserServiceClient(transport);
      const bad = requestMessage(empties(MANY));
      const err = await failure(users.addHumanUser(bad));
      expect(err.code, err.message).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe(TOO_MANY_ELEMENTS);
      await expectNoUser(bad);
      const good = requestMessage(legalMetadata());
      expect((await users.addHumanUser(good)).userId).toBe(good.userId);
    }
  });

  it('compressed Connect JSON (gzip content-encoding): refused once decompressed', async () => {
    const bad = requestJson(empties(MANY));
    const res = await fetch(`${gw.baseUrl}${ADD_HUMAN_USER}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'connect-protocol-version': '1',
        authorization: `Bearer ${gw.adminToken}`,
      },
      body: gzipSync(JSON.stringify(bad)),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_argument', message: TOO_MANY_JSON });
    await expectNoUser(bad);
  });

  it('over gRPC-web text (base64): INVALID_ARGUMENT, nothing created', async () => {
    const bad = requestMessage(empties(MANY));
    const bytes = toBinary(AddHumanUserRequestSchema, bad);
    const envelope = Buffer.alloc(5 + bytes.length);
    envelope.writeUInt32BE(bytes.length, 1);
    envelope.set(bytes, 5);
    const res = await fetch(`${gw.baseUrl}${ADD_HUMAN_USER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web-text', 'x-grpc-web': '1', authorization: `Bearer ${gw.adminToken}` },
      body: envelope.toString('base64'),
    });
    const trailer = Buffer.from(await res.text(), 'base64').toString('latin1');
    expect(res.headers.get('grpc-status') ?? /grpc-status: ?(\d+)/.exec(trailer)?.[1]).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(res.headers.get('grpc-message') ?? /grpc-message: ?([^\r\n]*)/.exec(trailer)?.[1] ?? '')).toBe(
      TOO_MANY_ELEMENTS,
    );
    await expectNoUser(bad);
  });

  it('raw gRPC: a 13 MB message of 6.5 million entries, sent in 64 KB writes, is refused', async () => {
    const session = http2Connect(gw.baseUrl);
    try {
      const bad = requestMessage([]);
      const head = toBinary(AddHumanUserRequestSchema, bad);
      // 13 MB of `metadata` entries of 2 bytes (tag 0x32, length 0), sent in 64 KB writes.
      const entries = 6_500_000;
      const message = Buffer.alloc(head.length + 2 * entries);
      message.set(head, 0);
      for (let i = 0; i < entries; i++) message[head.length + 2 * i] = 0x32;
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(message.length, 1);
      const stream = session.request(grpcRequestHeaders(ADD_HUMAN_USER, gw.adminToken));
      const answer = answerOf(stream);
      const body = Buffer.concat([prefix, message]);
      for (let at = 0; at < body.length; at += 65536) stream.write(body.subarray(at, at + 65536));
      stream.end();
      const { grpcStatus, trailers, headers } = await answer;
      expect(grpcStatus).toBe(Code.InvalidArgument);
      expect(decodeURIComponent(String(trailers['grpc-message'] ?? headers['grpc-message']))).toBe(TOO_MANY_ELEMENTS);
      await expectNoUser(bad);
    } finally {
      session.close();
    }
  });
});

describe('nested lists and unknown fields', () => {
  it('ListUsers with 2,000 queries inside one or_query is refused naming the nested list', async () => {
    const users = createUserServiceClient(wireTransport('grpc', gw.baseUrl, gw.adminToken));
    const inner = Array.from({ length: 2000 }, () => ({ query: { case: 'userNameQuery' as const, value: { userName: 'x' } } }));
    const err = await failure(users.listUsers({ queries: [{ query: { case: 'orQuery', value: { queries: inner } } }] }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toBe(`request message: more than ${MAX_REPEATED_ELEMENTS} elements in zitadel.user.v2.OrQuery.queries`);
  });

  it('more than 10,000 fields in all (here unknown ones) is refused over Connect proto', async () => {
    const bytes = Buffer.alloc(2 * (MAX_MESSAGE_FIELDS + 1));
    for (let i = 0; i < MAX_MESSAGE_FIELDS + 1; i++) bytes[2 * i] = 0x78; // field 15 (not in ListUsersRequest), varint 0
    const res = await fetch(`${gw.baseUrl}/zitadel.user.v2.UserService/ListUsers`, {
      method: 'POST',
      headers: { 'content-type': 'application/proto', 'connect-protocol-version': '1', authorization: `Bearer ${gw.adminToken}` },
      body: bytes,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'invalid_argument',
      message: `request message: more than ${MAX_MESSAGE_FIELDS} fields`,
    });
  });
});

describe('protobufFieldsRefusal (the scan, against the decoder)', () => {
  const refusal = (desc: DescMessage, bytes: Uint8Array) => protobufFieldsRefusal(desc, bytes);
  const metadataEntries = (n: number, entry: number[]) => {
    const out = new Uint8Array(n * entry.length);
    for (let i = 0; i < out.length; i++) out[i] = entry[i % entry.length]!;
    return out;
  };

  it('passes legal messages, counts packed and unpacked the same, and stops at the bounds', () => {
    expect(refusal(AddHumanUserRequestSchema, toBinary(AddHumanUserRequestSchema, requestMessage(legalMetadata())))).toBeUndefined();
    expect(refusal(AddHumanUserRequestSchema, metadataEntries(MAX_REPEATED_ELEMENTS, [0x32, 0]))).toBeUndefined();
    expect(refusal(AddHumanUserRequestSchema, metadataEntries(MAX_REPEATED_ELEMENTS + 1, [0x32, 0]))).toBe(
      `more than ${MAX_REPEATED_ELEMENTS} elements in zitadel.user.v2.AddHumanUserRequest.metadata`,
    );
  });

  it('reads a message field by its kind whatever the wire type says, as the decoder does (no way around the count)', () => {
    // Tag of field 6 with wire type 0 (varint): the decoder still reads a length and a message.
    expect(refusal(AddHumanUserRequestSchema, metadataEntries(MAX_REPEATED_ELEMENTS + 1, [0x30, 0]))).toMatch(/metadata$/);
    // A leading empty unknown group does not stop the scan.
    const group = [0x7b, 0x7c]; // start and end of group 15 (not a field of AddHumanUserRequest)
    expect(
      refusal(AddHumanUserRequestSchema, new Uint8Array([...group, ...metadataEntries(MAX_REPEATED_ELEMENTS + 1, [0x32, 0])])),
    ).toMatch(/metadata$/);
  });

  it('leaves malformed messages to the decoder', () => {
    expect(refusal(AddHumanUserRequestSchema, new Uint8Array([0x32, 0x05, 0x0a]))).toBeUndefined(); // truncated entry
    expect(refusal(AddHumanUserRequestSchema, new Uint8Array([0x00, 0x00]))).toBeUndefined(); // field number 0
    expect(refusal(ListUsersRequestSchema, new Uint8Array([0x07]))).toBeUndefined(); // wire type 7
  });

  it('is linear: 6.5 million 2-byte entries are refused at once', () => {
    const bytes = metadataEntries(6_500_000, [0x32, 0]);
    const start = performance.now();
    expect(refusal(AddHumanUserRequestSchema, bytes)).toMatch(/metadata$/);
    // Milliseconds when linear; a scan per entry would take hours. The bound is for a loaded machine.
    expect(performance.now() - start).toBeLessThan(5_000);
  });
});
