// gRPC-web text mode (application/grpc-web-text): src/wire/grpc-web-text.ts. The decoder on its
// own (padded segments, chunks split anywhere, bad base64, the text cap), then the real gateway
// over plain fetch (HTTP/1.1), sent as a browser's grpc-web client sends it in text mode: base64
// of the binary gRPC-web body; the answer base64 too, decoded here independently of the
// gateway's code (Buffer's base64, segment by segment).
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { GetMyUserRequestSchema, GetMyUserResponseSchema } from '@zitadel/proto/zitadel/auth_pb.js';
import {
  AddProjectRequestSchema,
  GetUserByIDRequestSchema,
  GetUserByIDResponseSchema,
  UpdateHumanProfileRequestSchema,
  UpdateHumanProfileResponseSchema,
} from '@zitadel/proto/zitadel/management_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRequestBodyBytes } from '../src/http/body-limit.ts';
import { createBase64Decoder, decodeGrpcWebText, maxTextLength } from '../src/wire/grpc-web-text.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const GET_MY_USER = '/zitadel.auth.v1.AuthService/GetMyUser';
const GET_USER_BY_ID = '/zitadel.management.v1.ManagementService/GetUserByID';
const UPDATE_HUMAN_PROFILE = '/zitadel.management.v1.ManagementService/UpdateHumanProfile';
const ADD_PROJECT = '/zitadel.management.v1.ManagementService/AddProject';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const ascii = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));

/** A gRPC-web data envelope: flag 0, the length as a 32-bit big-endian number, the message. */
function envelope(message: Uint8Array): Uint8Array {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return new Uint8Array(out);
}

const frameOf = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => envelope(toBinary(schema, create(schema, init)));

/** The decoder's output for `text` pushed in pieces cut at `cuts`. */
function decodeInPieces(text: string, cuts: number[]): Buffer {
  const decoder = createBase64Decoder();
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const at of [...cuts, text.length]) {
    parts.push(decoder.push(ascii(text.slice(from, at))));
    from = at;
  }
  decoder.end();
  return Buffer.concat(parts);
}

function failureOf(run: () => unknown): ConnectError {
  try {
    run();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('expected a failure');
}

describe('the base64 decoder', () => {
  it('decodes one segment, several padded segments, and any split into chunks, as Buffer does segment by segment', () => {
    let seed = 7;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 300; round++) {
      const bytes = new Uint8Array(random(40));
      for (let i = 0; i < bytes.length; i++) bytes[i] = random(256);
      // Cut the bytes into segments, each encoded (and padded) on its own.
      const segments: Uint8Array[] = [];
      for (let from = 0; from < bytes.length;) {
        const to = Math.min(bytes.length, from + 1 + random(8));
        segments.push(bytes.subarray(from, to));
        from = to;
      }
      const text = segments.map(b64).join('');
      const cuts = [...new Set(Array.from({ length: random(6) }, () => random(text.length + 1)))].sort((a, b) => a - b);
      expect(decodeInPieces(text, cuts).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('keeps at most 3 characters between chunks: one character at a time decodes too', () => {
    const bytes = new Uint8Array(Array.from({ length: 100 }, (_, i) => (i * 37) % 256));
    const text = b64(bytes.subarray(0, 10)) + b64(bytes.subarray(10, 11)) + b64(bytes.subarray(11));
    expect(
      decodeInPieces(
        text,
        Array.from({ length: text.length }, (_, i) => i),
      ).equals(Buffer.from(bytes)),
    ).toBe(true);
  });

  it.each([
    ['a character outside the alphabet', 'AAA!'],
    ['the URL-safe alphabet', 'AA-_'],
    ['whitespace', 'AAAA AAAA'],
    ['a line break', 'AAAA\nAAAA'],
    ["'=' in the first half of a quantum", 'A===AAAA'],
    ["'=' before a character in a quantum", 'AA=A'],
    ['a quantum that is only padding', 'AAAA===='],
    ['a body that ends inside a quantum (no padding)', 'AAAAAA'],
    ['a non-ASCII byte', 'AAA\u00e9'],
  ])('refuses %s with INVALID_ARGUMENT', (_why, text) => {
    const err = failureOf(() => decodeInPieces(text, [1]));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/^invalid grpc-web-text body: .* at character \d+$/);
  });

  it('cuts a body over the text cap with RESOURCE_EXHAUSTED', async () => {
    const max = maxTextLength(30);
    const chunks = async function* () {
      for (let i = 0; i < 1000; i++) yield ascii('AAAA'.repeat(100));
    };
    let read = 0;
    const err = await (async () => {
      try {
        for await (const bytes of decodeGrpcWebText(chunks(), max)) read += bytes.length;
      } catch (e) {
        return ConnectError.from(e);
      }
      throw new Error('expected a failure');
    })();
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(read).toBeLessThanOrEqual((max / 4) * 3);
  });
});

interface TextAnswer {
  status: number;
  headers: Headers;
  text: string;
  messages: Uint8Array[];
  trailer: Record<string, string>;
  /** grpc-status from the trailer envelope, or from the headers of a trailers-only answer. */
  grpcStatus: number | undefined;
  grpcMessage: string | undefined;
}

/** A text-mode answer: base64 (possibly padded segments) → envelopes → messages and the trailer. */
async function readTextAnswer(res: Response): Promise<TextAnswer> {
  const text = await res.text();
  expect(text).toMatch(/^[A-Za-z0-9+/=]*$/);
  const segments = text.match(/[^=]+=*/g) ?? [];
  for (const s of segments) expect(s.length % 4).toBe(0);
  const body = Buffer.concat(segments.map((s) => Buffer.from(s, 'base64')));
  const messages: Uint8Array[] = [];
  const trailer: Record<string, string> = {};
  let trailers = 0;
  for (let at = 0; at < body.length;) {
    const flags = body[at]!;
    const length = body.readUInt32BE(at + 1);
    const data = body.subarray(at + 5, at + 5 + length);
    expect(data.length).toBe(length);
    if (flags & 0x80) {
      trailers++;
      for (const line of data.toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailer[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
    } else {
      expect(trailers).toBe(0); // the trailer comes last
      messages.push(new Uint8Array(data));
    }
    at += 5 + length;
  }
  expect(trailers).toBeLessThanOrEqual(1);
  const status = trailer['grpc-status'] ?? res.headers.get('grpc-status') ?? undefined;
  const message = trailer['grpc-message'] ?? res.headers.get('grpc-message') ?? undefined;
  return {
    status: res.status,
    headers: res.headers,
    text,
    messages,
    trailer,
    grpcStatus: status === undefined ? undefined : Number(status),
    grpcMessage: message === undefined ? undefined : decodeURIComponent(message),
  };
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.close();
});

/** Headers of a browser's grpc-web client in text mode. */
const textHeaders = (token: string | null) => ({
  'content-type': 'application/grpc-web-text',
  accept: 'application/grpc-web-text',
  'x-grpc-web': '1',
  'x-user-agent': 'grpc-web-javascript/0.1',
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

/** One text-mode call over HTTP/1.1: `body` is the base64 text (or a stream of it). */
async function textCall(
  path: string,
  body: string | ReadableStream<Uint8Array>,
  token: string | null = gw.adminToken,
): Promise<TextAnswer> {
  const res = await fetch(`${gw.baseUrl}${path}`, { method: 'POST', headers: textHeaders(token), body, duplex: 'half' } as RequestInit);
  return readTextAnswer(res);
}

/** The single message of a successful answer, decoded. */
function okMessage<D extends DescMessage>(answer: TextAnswer, schema: D) {
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('application/grpc-web-text+proto');
  expect(answer.grpcStatus).toBe(0);
  expect(answer.messages).toHaveLength(1);
  return fromBinary(schema, answer.messages[0]!);
}

const getUser = async (id: string) =>
  okMessage(await textCall(GET_USER_BY_ID, b64(frameOf(GetUserByIDRequestSchema, { id }))), GetUserByIDResponseSchema).user!;

/** A good text-mode call, and /health: the server still serves. */
async function stillServing() {
  const me = okMessage(await textCall(GET_MY_USER, b64(frameOf(GetMyUserRequestSchema, {}))), GetMyUserResponseSchema);
  expect(me.user!.id).toBe(gw.adminId);
  expect((await fetch(`${gw.baseUrl}/health`)).status).toBe(200);
  expect(gw.logs.filter((l) => l.includes('unexpected error') || l.includes('rpc handler failed'))).toEqual([]);
}

describe('gRPC-web text mode on the gateway (HTTP/1.1)', () => {
  it("GetMyUser answers the admin's user: base64 of the message envelope and the trailer envelope with grpc-status 0", async () => {
    const answer = await textCall(GET_MY_USER, b64(frameOf(GetMyUserRequestSchema, {})));
    const me = okMessage(answer, GetMyUserResponseSchema);
    expect(me.user!.id).toBe(gw.adminId);
    expect(me.user!.type.case).toBe('human');
    expect(answer.trailer['grpc-status']).toBe('0');
    expect(answer.headers.get('content-length')).toBeNull();
  });

  it('UpdateHumanProfile writes; GetUserByID (text mode too) reads the new first name and the sequence advanced by one', async () => {
    const before = await getUser(gw.adminId);
    const firstName = `Text${Date.now().toString(36)}`;
    const updated = okMessage(
      await textCall(
        UPDATE_HUMAN_PROFILE,
        b64(frameOf(UpdateHumanProfileRequestSchema, { userId: gw.adminId, firstName, lastName: 'Admin', displayName: 'Text Admin' })),
      ),
      UpdateHumanProfileResponseSchema,
    );
    expect(updated.details!.sequence).toBe(before.details!.sequence + 1n);
    const after = await getUser(gw.adminId);
    expect(after.details!.sequence).toBe(before.details!.sequence + 1n);
    expect(after.type.case).toBe('human');
    expect((after.type.value as { profile?: { firstName: string } }).profile!.firstName).toBe(firstName);
  });

  it('a request sent as two padded base64 segments, split across several body chunks (some inside the padding), works', async () => {
    const frame = frameOf(GetUserByIDRequestSchema, { id: gw.adminId });
    const first = b64(frame.subarray(0, 7));
    const second = b64(frame.subarray(7));
    expect(first).toMatch(/==$/); // 7 bytes: a padded quantum in the middle of the body
    const text = first + second;
    const cuts = [1, 3, first.length - 1, first.length + 2, text.length - 1];
    const pieces = [0, ...cuts].map((from, i) => text.slice(from, [...cuts, text.length][i]));
    expect(pieces.join('')).toBe(text);
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 15));
        if (next < pieces.length) controller.enqueue(ascii(pieces[next++]!));
        else controller.close();
      },
    });
    const user = okMessage(await textCall(GET_USER_BY_ID, body), GetUserByIDResponseSchema).user!;
    expect(user.id).toBe(gw.adminId);
  });

  it.each([
    ['a character outside the alphabet', () => b64(frameOf(GetMyUserRequestSchema, {})).slice(0, 4) + '!!!!'],
    ['whitespace', () => ` ${b64(frameOf(GetMyUserRequestSchema, {}))}`],
    ['bad padding', () => 'AA=A'],
    ['a body ending inside a quantum', () => 'AAAAA'],
  ])('invalid base64 (%s) answers INVALID_ARGUMENT, and the server keeps serving', async (_why, text) => {
    const answer = await textCall(GET_MY_USER, text());
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/grpc-web-text+proto');
    expect(answer.messages).toHaveLength(0);
    expect(answer.grpcStatus).toBe(Code.InvalidArgument);
    expect(answer.grpcMessage).toMatch(/^invalid grpc-web-text body: /);
    await stillServing();
  });

  it('an unknown user id answers NOT_FOUND with its grpc-message', async () => {
    const answer = await textCall(GET_USER_BY_ID, b64(frameOf(GetUserByIDRequestSchema, { id: '999999999999' })));
    expect(answer.status).toBe(200);
    expect(answer.messages).toHaveLength(0);
    expect(answer.grpcStatus).toBe(Code.NotFound);
    expect(answer.grpcMessage).toMatch(/\S/);
  });

  it('no token answers UNAUTHENTICATED with its grpc-message', async () => {
    const answer = await textCall(GET_MY_USER, b64(frameOf(GetMyUserRequestSchema, {})), null);
    expect(answer.status).toBe(200);
    expect(answer.messages).toHaveLength(0);
    expect(answer.grpcStatus).toBe(Code.Unauthenticated);
    expect(answer.grpcMessage).toMatch(/\S/);
  });

  it('a message over the body cap (maxRequestBodyBytes, encoded) answers RESOURCE_EXHAUSTED, and the server keeps serving', async () => {
    const cap = maxRequestBodyBytes(gw.config);
    const text = b64(frameOf(AddProjectRequestSchema, { name: 'x'.repeat(cap + 1) }));
    const answer = await textCall(ADD_PROJECT, text);
    expect(answer.status).toBe(200);
    expect(answer.messages).toHaveLength(0);
    expect(answer.grpcStatus).toBe(Code.ResourceExhausted);
    await stillServing();
  });

  it('binary gRPC-web beside it is unchanged: application/grpc-web+proto in and out', async () => {
    const res = await fetch(`${gw.baseUrl}${GET_MY_USER}`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1', authorization: `Bearer ${gw.adminToken}` },
      body: Buffer.from(frameOf(GetMyUserRequestSchema, {})),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/grpc-web+proto');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body[0]).toBe(0);
    const me = fromBinary(GetMyUserResponseSchema, body.subarray(5, 5 + body.readUInt32BE(1)));
    expect(me.user!.id).toBe(gw.adminId);
  });
});
