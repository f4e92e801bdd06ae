// TLS on the one port (TLS_CERT_FILE, TLS_KEY_FILE): a self-signed certificate made with the
// openssl CLI; gRPC, gRPC-web, Connect and GraphQL over it with that certificate as the CA; ALPN
// (h2, http/1.1, none); a cleartext client gets no answer; a graceful stop over TLS. Under CI a
// missing openssl fails the suite; elsewhere it is skipped with a loud line saying so.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { findOpenssl, makeCertificate } from './support/certificate.ts';
import { h2Request } from './support/grpc-raw.ts';
import { describeRequiring } from './support/servers.ts';
import { bearer, zitadelClients } from './support/wire-clients.ts';

/** One HTTPS GET: status, body, and the ALPN protocol of its socket. */
function httpsGet(url: string, options: RequestOptions) {
  return new Promise<{ status: number; text: string; alpn: string | false | null }>((resolve, reject) => {
    const req = httpsRequest(url, options, (res) => {
      const alpn = (res.socket as TLSSocket).alpnProtocol;
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, alpn }));
    });
    req.on('error', reject);
    req.end();
  });
}

const h2Connected = (session: ClientHttp2Session) =>
  new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });

describe('TLS configuration', () => {
  it('TLS_CERT_FILE without TLS_KEY_FILE (and the reverse) fails loadConfig naming the missing one', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/some/cert.pem' })).toThrow(/TLS_KEY_FILE is not/);
    expect(() => loadConfig({ TLS_KEY_FILE: '/some/key.pem' })).toThrow(/TLS_CERT_FILE is not/);
    expect(loadConfig({ TLS_CERT_FILE: '', TLS_KEY_FILE: '' }).tls).toBeNull();
  });

  it('an unreadable file fails loadConfig naming the variable and the path', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/nonexistent/cert.pem', TLS_KEY_FILE: '/nonexistent/key.pem' })).toThrow(
      /TLS_CERT_FILE: cannot read \/nonexistent\/cert\.pem/,
    );
  });
});

const openssl = findOpenssl();
describeRequiring(openssl, 'openssl not found on PATH (apt-get install openssl)', 'TLS on the one port', (opensslBin) => {
  let dir: string;
  let env: Record<string, string>;
  let ca: Buffer;
  let gw: TestGateway;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gw-tls-'));
    const { certFile, keyFile } = makeCertificate(opensslBin, dir);
    env = { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile };
    gw = await startGateway({ env });
    ca = gw.config.tls!.cert;
    port = Number(new URL(gw.baseUrl).port);
  });
  afterAll(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves https:// and a key that does not fit the certificate fails loadConfig', () => {
    expect(gw.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/graphql$/);
    const other = makeCertificate(opensslBin, mkdtempSync(path.join(dir, 'other-')));
    expect(() => loadConfig({ TLS_CERT_FILE: env.TLS_CERT_FILE, TLS_KEY_FILE: other.keyFile })).toThrow(
      /not a PEM certificate and its private key/,
    );
    writeFileSync(path.join(dir, 'garbage.pem'), 'not a certificate');
    expect(() => loadConfig({ TLS_CERT_FILE: path.join(dir, 'garbage.pem'), TLS_KEY_FILE: env.TLS_KEY_FILE })).toThrow(/TLS_CERT_FILE/);
  });

  it('gRPC (HTTP/2) updates a profile with UpdateHumanProfile and reads it back with GetUserByID', async () => {
    const c = zitadelClients(createGrpcTransport({ baseUrl: gw.baseUrl, nodeOptions: { ca }, interceptors: [bearer(gw.adminToken)] }));
    await c.mgmt.updateHumanProfile({ userId: gw.adminId, firstName: 'Grace', lastName: 'Hopper', displayName: 'Amazing Grace' });
    const user = (await c.mgmt.getUserByID({ id: gw.adminId })).user!;
    expect(user.id).toBe(gw.adminId);
    expect((user.type.value as any).profile).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', displayName: 'Amazing Grace' });
  });

  it.each([
    [
      'Connect over HTTP/1.1',
      () => createConnectTransport({ baseUrl: gw.baseUrl, httpVersion: '1.1', nodeOptions: { ca }, interceptors: [bearer(gw.adminToken)] }),
    ],
    [
      'Connect over HTTP/2',
      () => createConnectTransport({ baseUrl: gw.baseUrl, httpVersion: '2', nodeOptions: { ca }, interceptors: [bearer(gw.adminToken)] }),
    ],
    [
      'gRPC-web over HTTP/1.1',
      () => createGrpcWebTransport({ baseUrl: gw.baseUrl, httpVersion: '1.1', nodeOptions: { ca }, interceptors: [bearer(gw.adminToken)] }),
    ],
    [
      'gRPC-web over HTTP/2',
      () => createGrpcWebTransport({ baseUrl: gw.baseUrl, httpVersion: '2', nodeOptions: { ca }, interceptors: [bearer(gw.adminToken)] }),
    ],
  ])('%s: GetMyUser answers', async (_name, transport) => {
    expect((await zitadelClients(transport()).auth.getMyUser({})).user!.id).toBe(gw.adminId);
  });

  it('GraphQL over HTTPS answers { me { id } } with the admin token', async () => {
    const res = await gw.raw({ query: '{ me { id } }' });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ me: { id: gw.adminId } });
  });

  it('a client without the CA is refused', async () => {
    await expect(httpsGet(`${gw.baseUrl}/health`, {})).rejects.toThrow(/self-signed|certificate/i);
  });

  it('ALPN: h2 for an HTTP/2 client, http/1.1 for an HTTP/1.1 client', async () => {
    const session = http2Connect(gw.baseUrl, { ca });
    try {
      await h2Connected(session);
      expect(session.alpnProtocol).toBe('h2');
      expect((await h2Request(session, { ':method': 'GET', ':path': '/health' })).status).toBe(200);
    } finally {
      session.close();
    }
    const agent = new Agent({ ca, ALPNProtocols: ['http/1.1'] });
    try {
      expect(await httpsGet(`${gw.baseUrl}/health`, { agent })).toMatchObject({ status: 200, alpn: 'http/1.1' });
    } finally {
      agent.destroy();
    }
  });

  it('no ALPN: the first bytes decide, so HTTP/1.1 and HTTP/2 with prior knowledge both work over TLS', async () => {
    const agent = new Agent({ ca }); // node:https offers no ALPN by default
    try {
      expect(await httpsGet(`${gw.baseUrl}/health`, { agent })).toMatchObject({ status: 200, alpn: false });
    } finally {
      agent.destroy();
    }
    const session = http2Connect(gw.baseUrl, {
      createConnection: () => tlsConnect({ port, host: '127.0.0.1', ca, servername: 'localhost' }),
    });
    session.on('error', () => {});
    try {
      const answer = await h2Request(session, { ':method': 'GET', ':path': '/health' });
      expect(answer.status).toBe(200);
      expect((session.socket as unknown as TLSSocket).alpnProtocol).toBe(false);
    } finally {
      session.close();
    }
  });

  it('a cleartext HTTP/1.1 request gets no HTTP answer and is disconnected; TLS clients are served afterwards', async () => {
    const socket = netConnect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await closed;
    expect(Buffer.concat(received).toString('latin1')).not.toMatch(/HTTP\//);
    expect(await httpsGet(`${gw.baseUrl}/health`, { ca, agent: false })).toMatchObject({ status: 200 });
    expect((await gw.raw({ query: '{ me { id } }' })).data).toEqual({ me: { id: gw.adminId } });
  });

  it('graceful stop with an idle keep-alive HTTPS connection and an h2 session open: clean, prompt, both closed (GOAWAY for h2)', async () => {
    const own = await startGateway({ env: { ...env, SHUTDOWN_TIMEOUT_MS: '5000' } });
    const agent = new Agent({ ca, keepAlive: true, ALPNProtocols: ['http/1.1'] });
    const session = http2Connect(own.baseUrl, { ca });
    session.on('error', () => {});
    try {
      // An idle HTTP/1.1 keep-alive connection over TLS.
      let keepAliveClosed: Promise<void> | undefined;
      const first = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(`${own.baseUrl}/health`, { agent }, (res) => {
          const socket = res.socket as TLSSocket;
          keepAliveClosed = new Promise((r) => socket.once('close', () => r()));
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end();
      });
      expect(first).toBe(200);
      // An h2 session with one answered request, now idle.
      expect((await h2Request(session, { ':method': 'GET', ':path': '/health' })).status).toBe(200);
      const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
      const sessionClosed = new Promise<void>((resolve) => session.once('close', () => resolve()));

      const started = Date.now();
      const clean = await own.gateway.shutdown();
      await Promise.all([keepAliveClosed, goaway, sessionClosed]);
      const took = Date.now() - started;
      // Clean: nothing was cut at SHUTDOWN_TIMEOUT_MS (10 s); prompt: well before it.
      expect({ clean, promptly: took < 8000 }, `shutdown took ${took} ms`).toEqual({ clean: true, promptly: true });
      await expect(httpsGet(`${own.baseUrl}/health`, { ca, agent: false })).rejects.toThrow();
    } finally {
      agent.destroy();
      session.destroy();
      await own.close();
    }
  });
});
