import { mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { base64url, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { loadConfig, type Config } from '../src/config.ts';
import { AppError } from '../src/errors.ts';
import { loadOrCreateLocalKey, loadOrCreateSecret } from '../src/auth/local-key.ts';
import { createLocalTokenSigner, createTokenVerifier } from '../src/auth/tokens.ts';

const dirs: string[] = [];

async function tempDir() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'auth-test-'));
  dirs.push(dir);
  return dir;
}

function configFor(dataDir: string, extra: Partial<Config> = {}): Config {
  return { ...loadConfig({}), dataDir, jwtIssuer: 'test-issuer', jwtAudience: 'test-aud', ...extra };
}

async function expectUnauthenticated(p: Promise<unknown>, token?: string) {
  const err = await p.then(
    () => expect.fail('expected UNAUTHENTICATED'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('UNAUTHENTICATED');
  if (token) expect((err as AppError).message).not.toContain(token);
}

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('local key', () => {
  it('persists the key with mode 0600 and reuses it', async () => {
    const dir = path.join(await tempDir(), 'nested', 'data');
    const first = await loadOrCreateLocalKey(dir);
    expect((await stat(path.join(dir, 'signing-key.json'))).mode & 0o777).toBe(0o600);
    const config = configFor(dir);
    const token = await createLocalTokenSigner(config).sign('user-1');

    const second = await loadOrCreateLocalKey(dir);
    expect(second.kid).toBe(first.kid);
    expect(second.publicJwk).toEqual(first.publicJwk);
    expect(await createTokenVerifier(config).verify(`Bearer ${token}`)).toEqual({ userId: 'user-1' });
  });

  it('concurrent first calls agree on one key', async () => {
    const dir = await tempDir();
    const keys = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateLocalKey(dir)));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
  });

  it('keeps a secret in the data folder', async () => {
    const dir = await tempDir();
    const a = await loadOrCreateSecret(dir, 'code-hmac.key');
    expect(a).toHaveLength(32);
    expect((await stat(path.join(dir, 'code-hmac.key'))).mode & 0o777).toBe(0o600);
    expect((await loadOrCreateSecret(dir, 'code-hmac.key')).equals(a)).toBe(true);
    await expect(loadOrCreateSecret(dir, '../escape')).rejects.toThrow();
  });
});

describe('local token verification', () => {
  let config: Config;
  beforeAll(async () => {
    config = configFor(await tempDir());
  });

  it('verifies a token from the local signer', async () => {
    const token = await createLocalTokenSigner(config).sign('user-42');
    const verifier = createTokenVerifier(config);
    expect(await verifier.verify(`Bearer ${token}`)).toEqual({ userId: 'user-42' });
    expect(await verifier.verify(`bearer ${token}`)).toEqual({ userId: 'user-42' }); // cached path
  });

  it('rejects an expired token, also once cached', async () => {
    const { privateKey, kid } = await loadOrCreateLocalKey(config.dataDir);
    const now = Math.floor(Date.now() / 1000);
    const sign = (exp: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(config.jwtIssuer)
        .setAudience(config.jwtAudience)
        .setSubject('user-1')
        .setIssuedAt(now - 100)
        .setExpirationTime(exp)
        .sign(privateKey);
    const expired = await sign(now - 10);
    await expectUnauthenticated(createTokenVerifier(config).verify(`Bearer ${expired}`), expired);

    const verifier = createTokenVerifier(config);
    const shortLived = await sign(now + 60);
    expect(await verifier.verify(`Bearer ${shortLived}`)).toEqual({ userId: 'user-1' });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime((now + 61) * 1000);
      await expectUnauthenticated(verifier.verify(`Bearer ${shortLived}`));
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects a token from another key, audience or issuer', async () => {
    const verifier = createTokenVerifier(config);
    const other = await generateKeyPair('ES256');
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(config.jwtIssuer)
      .setAudience(config.jwtAudience)
      .setSubject('user-1')
      .setExpirationTime('1h')
      .sign(other.privateKey);
    await expectUnauthenticated(verifier.verify(`Bearer ${foreign}`), foreign);

    const wrongAud = await createLocalTokenSigner({ ...config, jwtAudience: 'other' }).sign('user-1');
    await expectUnauthenticated(verifier.verify(`Bearer ${wrongAud}`), wrongAud);
    const wrongIss = await createLocalTokenSigner({ ...config, jwtIssuer: 'other' }).sign('user-1');
    await expectUnauthenticated(verifier.verify(`Bearer ${wrongIss}`), wrongIss);
  });

  it('rejects alg none, garbage and bad headers', async () => {
    const verifier = createTokenVerifier(config);
    const enc = (o: object) => base64url.encode(JSON.stringify(o));
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const none = `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ sub: 'user-1', iss: config.jwtIssuer, aud: config.jwtAudience, exp })}.`;
    await expectUnauthenticated(verifier.verify(`Bearer ${none}`), none);
    await expectUnauthenticated(verifier.verify('Bearer not.a.jwt'));
    await expectUnauthenticated(verifier.verify('Bearer garbage'));
    await expectUnauthenticated(verifier.verify(undefined));
    await expectUnauthenticated(verifier.verify(null));
    await expectUnauthenticated(verifier.verify(''));
    await expectUnauthenticated(verifier.verify('Basic x'));
    const good = await createLocalTokenSigner(config).sign('user-1');
    await expectUnauthenticated(verifier.verify(good)); // no scheme
    const [h, p] = good.split('.');
    const tampered = `${h}.${p}.${base64url.encode(new Uint8Array(64))}`;
    await expectUnauthenticated(verifier.verify(`Bearer ${tampered}`), tampered);
  });
});

describe('JWKS verification', () => {
  let server: http.Server;
  let fetches = 0;
  let jwksUrl: string;
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = http.createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const issue = (sub: string, aud = 'test-aud') =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer('test-issuer')
      .setAudience(aud)
      .setSubject(sub)
      .setExpirationTime('10m')
      .sign(privateKey);

  it('verifies through the JWKS with one fetch for many tokens', async () => {
    const dataDir = await tempDir();
    const verifier = createTokenVerifier(configFor(dataDir, { jwksUrl }));
    fetches = 0;
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => issue(`user-${i}`)));
    for (const [i, token] of tokens.entries()) {
      expect(await verifier.verify(`Bearer ${token}`)).toEqual({ userId: `user-${i}` });
    }
    expect(fetches).toBeGreaterThanOrEqual(1);
    expect(fetches).toBeLessThanOrEqual(1);

    await expectUnauthenticated(verifier.verify(`Bearer ${await issue('user-1', 'other-aud')}`));
    const localToken = await createLocalTokenSigner(configFor(dataDir)).sign('user-1');
    await expectUnauthenticated(verifier.verify(`Bearer ${localToken}`));
  });

  it('reports an unreachable JWKS as UNAVAILABLE, not as a bad token', async () => {
    const verifier = createTokenVerifier(configFor(await tempDir(), { jwksUrl: 'http://127.0.0.1:1/jwks.json' }));
    await expect(verifier.verify(`Bearer ${await issue('user-1')}`)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});
