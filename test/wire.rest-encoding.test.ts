// REST bodies with a Content-Encoding (src/wire/rest-encoding.ts), through a real gateway's port
// with fetch: gzip, x-gzip, deflate and br are decompressed and the call goes through as with a
// plain body; the decompressed size counts against the same cap (a bomb is cut there: 413 with
// a token, 401 without one); data that does not decompress is 400; any other coding is 415 with
// grpc-gateway's error body and Accept-Encoding. A refused body changes nothing.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxRequestBodyBytes, UNAUTHENTICATED_BODY_BYTES } from '../src/http/body-limit.ts';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

let gw: TestGateway;
let userId: string;
let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

beforeAll(async () => {
  gw = await startGateway();
  const res = await fetch(`${gw.baseUrl}/v2/users/human`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}` },
    body: JSON.stringify({
      username: unique('enc'),
      profile: { givenName: 'Ada', familyName: 'Lovelace' },
      email: { email: `${unique('e')}@example.com`, isVerified: true },
    }),
  });
  expect(res.status).toBe(200);
  userId = ((await res.json()) as { userId: string }).userId;
});
afterAll(async () => {
  await gw?.close();
});

const stored = async () => (await gw.gateway.deps.store.load<User>('user', userId))!;

/** PUT the profile with `body` sent as it is, under `encoding`. */
async function putProfile(body: Uint8Array, encoding: string | null, token: string | null = gw.adminToken) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (encoding !== null) headers['content-encoding'] = encoding;
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${gw.baseUrl}/management/v1/users/${userId}/profile`, { method: 'PUT', headers, body: new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: JSON.parse(text) as { code?: number; message?: string; details?: unknown[] } };
}

const profile = (firstName: string) => Buffer.from(JSON.stringify({ firstName, lastName: 'Lovelace' }));

/** A gzip stream of `total` zero bytes: members of 16 MiB each, concatenated (gunzip reads them all), so building it costs little. */
function gzipBomb(total: number): Buffer {
  const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
  return Buffer.concat(Array.from({ length: Math.ceil(total / (16 * 1024 * 1024)) }, () => member));
}

describe('REST bodies with a Content-Encoding', () => {
  it('gzip, x-gzip, deflate and br are decompressed, in any case; identity is no encoding', async () => {
    const encodings: [string, (b: Buffer) => Buffer][] = [
      ['gzip', gzipSync],
      ['x-gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      [' GZip ', gzipSync],
      ['identity', (b) => b],
    ];
    for (const [encoding, compress] of encodings) {
      const firstName = unique('N');
      const res = await putProfile(compress(profile(firstName)), encoding);
      expect({ encoding, status: res.status }, JSON.stringify(res.json)).toEqual({ encoding, status: 200 });
      expect((await stored()).state.profile.firstName).toBe(firstName);
    }
  });

  it('the largest legal body, gzipped, still passes: the cap counts the decompressed bytes, and they fit', async () => {
    const metadata = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(500_000, 65 + i).toString('base64') }));
    const body = Buffer.from(
      JSON.stringify({
        username: unique('big'),
        profile: { givenName: 'Ada', familyName: 'Lovelace' },
        email: { email: `${unique('b')}@example.com`, isVerified: true },
        metadata,
      }),
    );
    expect(body.length).toBeGreaterThan(maxRequestBodyBytes(gw.config) * 0.9);
    const res = await fetch(`${gw.baseUrl}/v2/users/human`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${gw.adminToken}` },
      body: new Uint8Array(gzipSync(body)),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const created = (await res.json()) as { userId: string };
    expect((await gw.gateway.deps.store.load<User>('user', created.userId))!.state.metadata).toHaveLength(20);
  });

  it('a gzip bomb (1 GiB of zeros in 1 MB) is cut at the body cap: 413, nothing changed, and the gateway serves on', async () => {
    const before = await stored();
    const cap = maxRequestBodyBytes(gw.config);
    const bomb = gzipBomb(1024 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(cap);
    const res = await putProfile(bomb, 'gzip');
    expect({ status: res.status, code: res.json.code, message: res.json.message }).toEqual({
      status: 413,
      code: 8,
      message: `request body larger than the configured limit of ${cap} bytes`,
    });
    expect((await stored()).sequence).toBe(before.sequence);
    expect((await putProfile(gzipSync(profile(unique('After'))), 'gzip')).status).toBe(200);
  });

  it('without a valid token the decompressed body is held to the unauthenticated cap: 401', async () => {
    const bomb = gzipBomb(16 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(UNAUTHENTICATED_BODY_BYTES);
    const res = await putProfile(bomb, 'gzip', null);
    expect(res.status).toBe(401);
    expect(res.json.code).toBe(16);
    expect(res.json.message).toContain(`a request body over ${UNAUTHENTICATED_BODY_BYTES} bytes needs a valid bearer token`);
  });

  it('data that does not decompress: 400 INVALID_ARGUMENT in the gateway’s words, nothing changed', async () => {
    const before = await stored();
    const whole = gzipSync(profile('Truncated'));
    for (const [encoding, body] of [
      ['gzip', whole.subarray(0, whole.length - 6)],
      ['gzip', Buffer.from('{"firstName":"plain","lastName":"text"}')],
      ['br', Buffer.from('not brotli')],
      ['deflate', gzipSync(profile('gzip, not zlib'))],
    ] as [string, Buffer][]) {
      const res = await putProfile(body, encoding);
      expect({ encoding, status: res.status, code: res.json.code, message: res.json.message }).toEqual({
        encoding,
        status: 400,
        code: 3,
        message: `request body: not valid ${encoding} data`,
      });
    }
    expect((await stored()).sequence).toBe(before.sequence);
  });

  it('another coding, or two stacked: 415 with grpc-gateway’s body (UNIMPLEMENTED) and Accept-Encoding, nothing changed', async () => {
    const before = await stored();
    for (const encoding of ['zstd', 'compress', 'gzip, br', 'constructor']) {
      const res = await putProfile(gzipSync(profile('Unsupported')), encoding);
      expect({ encoding, status: res.status, code: res.json.code, details: Array.isArray(res.json.details) }).toEqual({
        encoding,
        status: 415,
        code: 12,
        details: true,
      });
      expect(res.json.message).toBe('request body: this Content-Encoding is not supported: send gzip, deflate, br or identity');
      expect(res.headers.get('accept-encoding')).toBe('gzip, deflate, br');
    }
    expect((await stored()).sequence).toBe(before.sequence);
  });
});
