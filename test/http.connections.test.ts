// The connection cap of the one port (src/http/connections.ts), against a gateway in a child
// process. The probe of issue 27: with 1,024 descriptors the gateway stopped answering /health
// while about 989 connections were held. Before the fix every connection was taken until the
// process ran out of descriptors; then new ones were accepted and closed by libuv at once.
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressKey } from '../src/http/address-window.ts';
import { defaultMaxConnections, descriptorLimit } from '../src/http/connections.ts';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { h2Request } from './support/grpc-raw.ts';
import { drain, get, sample, until } from './support/slow-peers.ts';

let gw: ChildGateway | undefined;
const held: { destroy(): void }[] = [];
afterEach(async () => {
  for (const h of held.splice(0)) h.destroy();
  await gw?.stop();
  gw = undefined;
});

const open = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', (err) => (socket.connecting ? reject(err) : undefined));
    held.push(socket);
  });

describe('the defaults', () => {
  it('HTTP_MAX_CONNECTIONS unset: the descriptor limit less a reserve (256, or a quarter of a small limit), at most 10,000', () => {
    expect([1024, 256, 100, 20_000, 1_048_576].map((n) => defaultMaxConnections(n))).toEqual([768, 192, 75, 10_000, 10_000]);
    expect(defaultMaxConnections(undefined)).toBe(10_000);
    expect(
      descriptorLimit(
        () =>
          'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n',
      ),
    ).toBe(1024);
    expect(descriptorLimit(() => 'Max open files            unlimited            unlimited            files\n')).toBeUndefined();
    expect(
      descriptorLimit(() => {
        throw new Error('no /proc');
      }),
    ).toBeUndefined();
  });

  it('per-address counts group IPv4 as it is and IPv6 by its /64', () => {
    expect(['127.0.0.1', '::ffff:10.1.2.3', '2001:db8:1:2:3:4:5:6', '2001:db8:1:2::9', 'fe80::1%eth0', undefined].map(addressKey)).toEqual([
      '127.0.0.1',
      '10.1.2.3',
      '2001:db8:1:2::/64',
      '2001:db8:1:2::/64',
      'fe80:0:0:0::/64',
      'unknown',
    ]);
  });
});

describe('connections that only hold the port', () => {
  it('with 256 descriptors, 400 silent connections: new connections still get /health and GraphQL answers (the longest idle make room)', async () => {
    gw = await spawnGateway({ maxOpenFiles: 256 });
    const port = Number(new URL(gw.base).port);
    // Sent nothing: idle, as a connection that sent only the HTTP/2 preface or a partial request line.
    for (let i = 0; i < 400; i++) await open(port);
    const health = await get(`${gw.base}/health`);
    expect(health.status).toBe(200);
    const me = await gw.post({ query: '{ me { id } }' });
    expect(me.json?.data?.me?.id).toBe(gw.adminId);
    const metrics = (await get(`${gw.base}/metrics`)).text;
    // The default cap: the descriptor limit less a reserve of a quarter of it (at most 256).
    expect(sample(metrics, 'gateway_http_connections_open')).toBeLessThanOrEqual(192);
    expect(sample(metrics, 'gateway_http_cut_total', { reason: 'evicted' })).toBeGreaterThan(200);
  });
});

describe('connections that are all busy', () => {
  it('over HTTP_MAX_CONNECTIONS with none idle, a new connection is closed at once; the open ones are still served', async () => {
    gw = await spawnGateway({ env: { HTTP_MAX_CONNECTIONS: '20' } });
    const port = Number(new URL(gw.base).port);
    const token = gw.adminToken;
    // One HTTP/2 session kept busy by a request whose body is still to come…
    const session: ClientHttp2Session = http2Connect(gw.base);
    session.on('error', () => {});
    held.push(session);
    const waiting = session.request({
      ':method': 'POST',
      ':path': '/graphql',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    });
    waiting.on('error', () => {});
    waiting.write('{"query":');
    // …and 19 HTTP/1.1 connections, each with a request whose body stops half-way.
    for (let i = 0; i < 19; i++) {
      const socket = await open(port);
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: 1000\r\n\r\n{"query":`,
      );
    }
    const metrics = async () => (await h2Request(session, { ':method': 'GET', ':path': '/metrics' })).text;
    await until(
      '20 requests in flight',
      async () => sample(await metrics(), 'gateway_http_requests_in_flight'),
      (n) => n >= 20,
    );

    // A 21st connection: closed before it gets any answer.
    const late = await open(port);
    late.write('GET /health HTTP/1.1\r\nHost: gw\r\n\r\n');
    const got = await drain(late);
    expect({ closed: got.closed, bytes: got.bytes }).toEqual({ closed: true, bytes: 0 });
    await expect(get(`${gw.base}/health`)).rejects.toThrow();

    // The connections it has go on: /health on the busy session.
    expect((await h2Request(session, { ':method': 'GET', ':path': '/health' })).status).toBe(200);
    expect(sample(await metrics(), 'gateway_http_connections_refused_total', { reason: 'limit' })).toBeGreaterThanOrEqual(2);
  });
});
