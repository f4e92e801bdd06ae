// Upstream mode over TLS: a front gateway calls an upstream that serves HTTPS (TLS_CERT_FILE) with
// a self-signed certificate. Trusted by ZITADEL_CA_FILE it works; not trusted (the system's CAs
// only) no call gets through: UNAVAILABLE, and /ready says the upstream is not reachable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { loadConfig } from '../src/config.ts';
import { createUpstreamGateway, type UpstreamGateway } from '../src/upstream-gateway.ts';
import { MeDocument } from './generated/graphql.ts';
import { findOpenssl, makeCertificate } from './support/certificate.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { describeRequiring } from './support/servers.ts';
import { TEST_DEFAULTS } from './support/test-defaults.ts';
import { print } from 'graphql';

describeRequiring(findOpenssl(), 'openssl not found on PATH (apt-get install openssl)', 'upstream mode over TLS', (openssl) => {
  let dir: string;
  let upstream: TestGateway;
  const fronts: UpstreamGateway[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'up-tls-'));
    const { certFile, keyFile } = makeCertificate(openssl, dir);
    process.env.UPSTREAM_TLS_CERT = certFile;
    upstream = await startGateway({ env: { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } });
  });
  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.close()));
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function front(env: Record<string, string>) {
    const frontDir = mkdtempSync(path.join(dir, 'front-'));
    const config = loadConfig({ ...TEST_DEFAULTS, DATA_DIR: frontDir, PORT: '0', HOST: '127.0.0.1', ZITADEL_TIMEOUT_MS: '20000', ...env });
    const gw = await createUpstreamGateway(config, { logger: createLogger('error', () => {}) });
    fronts.push(gw);
    const { url } = await gw.listen();
    const me = async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${upstream.adminToken}` },
        body: JSON.stringify({ query: print(MeDocument) }),
      });
      return (await res.json()) as { data?: { me: { id: string } } | null; errors?: { extensions: { code: string } }[] };
    };
    return { me, ready: async () => (await fetch(new URL('/ready', url))).status };
  }

  it('with ZITADEL_CA_FILE the upstream certificate is trusted: the caller reads itself through the front', async () => {
    const f = await front({ ZITADEL_URL: upstream.baseUrl, ZITADEL_CA_FILE: process.env.UPSTREAM_TLS_CERT! });
    const res = await f.me();
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data!.me.id).toBe(upstream.adminId);
    expect(await f.ready()).toBe(200);
  });

  it('without it (the system CAs only) the self-signed upstream is refused: UNAVAILABLE, and /ready answers 503', async () => {
    const f = await front({ ZITADEL_URL: upstream.baseUrl, JWKS_URL: `${upstream.baseUrl}/oauth/v2/keys` });
    const res = await f.me();
    expect(res.errors?.[0]?.extensions.code).toBe('UNAVAILABLE');
    expect(await f.ready()).toBe(503);
  });
});
