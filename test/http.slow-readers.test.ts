// Answers for peers that do not read them (src/http/output-guard.ts). The probe of issue 27:
// 30 HTTP/1.1 clients that asked for a 9 MB page and never read took the gateway from 726 to
// 1,224 MB, and 965 MB stayed held; 10 HTTP/2 sessions with a zero window, +450 MB. Here the
// large answer is a user carrying the largest metadata SPEC.md allows (about 13 MB of JSON),
// asked for again and again by peers that never read, against a gateway in a child process
// whose RSS is read from /proc while it happens.
//
// Before the fix nothing was ever cut: every stalled answer stayed queued as long as its peer
// kept the connection, and memory grew by about 1.8 times the stalled answers' size.
import { randomBytes } from 'node:crypto';
import { connect as http2Connect, constants as h2, type ClientHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { drain, health, metric, rssMb, silentReader, until } from './support/slow-peers.ts';

/** A gateway whose admin can read a user with the largest metadata: the request for it and the answer's size. */
async function withLargeUser(env: Record<string, string>): Promise<{ gw: ChildGateway; body: string; answerBytes: number }> {
  const gw = await spawnGateway({ env });
  const metadata = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: randomBytes(500_000).toString('base64') }));
  const added = await gw.post({
    query: 'mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }',
    variables: {
      input: { profile: { firstName: 'Large', lastName: 'Metadata' }, email: { email: 'large@example.com', isVerified: true }, metadata },
    },
  });
  const userId = added.json.data.addHumanUser.userId;
  const body = JSON.stringify({ query: 'query($id: ID!) { user(id: $id) { metadata { key value } } }', variables: { id: userId } });
  // A peer that reads gets all of it.
  const answerBytes = Buffer.byteLength((await gw.post(body)).text);
  expect(answerBytes).toBeGreaterThan(13_000_000);
  return { gw, body, answerBytes };
}

const cuts = async (gw: ChildGateway, reason: string) => metric(`${gw.base}/metrics`, 'gateway_http_cut_total', { reason });

describe('HTTP/1.1 peers that never read what they asked for', () => {
  let gw: ChildGateway;
  let body: string;
  let answerBytes: number;
  beforeAll(async () => {
    ({ gw, body, answerBytes } = await withLargeUser({ HTTP_WRITE_TIMEOUT_MS: '2000' }));
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('each is cut after HTTP_WRITE_TIMEOUT_MS, wave after wave; memory stays bounded and /health answers', async () => {
    const port = Number(new URL(gw.base).port);
    const request = `POST /graphql HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAuthorization: Bearer ${gw.adminToken}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const WAVES = 15;
    const PER_WAVE = 4;
    const before = rssMb(gw.child.pid!);
    let peak = before;
    const watch = () => (peak = Math.max(peak, rssMb(gw.child.pid!)));
    const firstWave: Socket[] = [];
    const all: Socket[] = [];
    const cutBefore = await cuts(gw, 'write_timeout');
    try {
      for (let wave = 1; wave <= WAVES; wave++) {
        const sockets = await Promise.all(Array.from({ length: PER_WAVE }, () => silentReader(port, request)));
        all.push(...sockets);
        if (wave === 1) firstWave.push(...sockets);
        await until(
          `wave ${wave} cut`,
          async () => (watch(), await cuts(gw, 'write_timeout')) - cutBefore,
          (n) => n >= wave * PER_WAVE,
        );
        expect(await health(gw.base), `/health during wave ${wave}`).toBe(200);
      }
      watch();
      // Each of them got part of the answer (what the kernel's buffers held), then the end of the connection.
      for (const socket of firstWave) {
        const got = await drain(socket);
        expect(got.closed).toBe(true);
        expect(got.bytes).toBeLessThan(answerBytes);
      }
      expect(await metric(`${gw.base}/metrics`, 'gateway_http_unsent_bytes')).toBe(0);
      // 60 stalled answers of 13 MB: held, they took 1.8 times their size (1.4 GB for 60 of them
      // before the fix). Cut, only about a wave's requests are in memory at once (each costs a few
      // times its answer while it is made), with what the collector has not yet taken back.
      const stalledMb = (WAVES * PER_WAVE * answerBytes) / 2 ** 20;
      const grewMb = peak - before;
      expect(grewMb, `RSS grew ${grewMb.toFixed(0)} MB for ${stalledMb.toFixed(0)} MB of stalled answers`).toBeLessThan(stalledMb);
    } finally {
      for (const socket of all) socket.destroy();
    }
  });
});

describe('HTTP/2 peers with a zero flow-control window', () => {
  /** A POST of `body` on the session; resolves with the stream's RST_STREAM code (0: it ended normally) and the bytes it got. */
  const ask = (session: ClientHttp2Session, body: string, token: string) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/graphql',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    });
    stream.on('error', () => {});
    let bytes = 0;
    stream.on('data', (d: Buffer) => (bytes += d.length));
    const answered = new Promise<void>((resolve) => stream.once('response', () => resolve()));
    // Within a generous cap: before the fix a stalled stream was never closed.
    const closed = new Promise<{ rstCode: number | 'still open'; bytes: number }>((resolve) => {
      const timer = setTimeout(() => resolve({ rstCode: 'still open', bytes }), 60_000);
      stream.once('close', () => {
        clearTimeout(timer);
        resolve({ rstCode: stream.rstCode ?? 0, bytes });
      });
    });
    stream.end(body);
    return { stream, answered, closed };
  };
  /** A session that lets the gateway send nothing on any stream. */
  const zeroWindow = (base: string) => {
    const session = http2Connect(base, { settings: { initialWindowSize: 0 } });
    session.on('error', () => {});
    return session;
  };

  describe('wave after wave', () => {
    let gw: ChildGateway;
    let body: string;
    let answerBytes: number;
    beforeAll(async () => {
      ({ gw, body, answerBytes } = await withLargeUser({ HTTP_WRITE_TIMEOUT_MS: '2000' }));
    });
    afterAll(async () => {
      await gw?.stop();
    });

    it('every stream of a peer that does not read is reset (by the write timeout or the unsent cap); memory stays bounded and /health answers', async () => {
      const WAVES = 6;
      const SESSIONS = 4;
      const STREAMS = 3;
      const before = rssMb(gw.child.pid!);
      let peak = before;
      const sessions: ClientHttp2Session[] = [];
      try {
        for (let wave = 1; wave <= WAVES; wave++) {
          const closed: Promise<{ rstCode: number | 'still open' }>[] = [];
          for (let i = 0; i < SESSIONS; i++) {
            const session = zeroWindow(gw.base);
            sessions.push(session);
            for (let j = 0; j < STREAMS; j++) closed.push(ask(session, body, gw.adminToken).closed);
          }
          let settled = false;
          const all = Promise.all(closed).finally(() => (settled = true));
          await until(`wave ${wave} reset`, () => ((peak = Math.max(peak, rssMb(gw.child.pid!))), settled), Boolean);
          expect(new Set((await all).map((c) => c.rstCode)), `wave ${wave}`).toEqual(new Set([h2.NGHTTP2_CANCEL]));
          expect(await health(gw.base), `/health during wave ${wave}`).toBe(200);
        }
        const [timedOut, capped] = [await cuts(gw, 'write_timeout'), await cuts(gw, 'unsent_cap')];
        expect(timedOut + capped).toBe(WAVES * SESSIONS * STREAMS);
        expect(await metric(`${gw.base}/metrics`, 'gateway_http_unsent_bytes')).toBe(0);
        // Held, the stalled answers took 1.7 times their size; cut, about a wave's requests are in memory at once.
        const stalledMb = (WAVES * SESSIONS * STREAMS * answerBytes) / 2 ** 20;
        const grewMb = peak - before;
        expect(grewMb, `RSS grew ${grewMb.toFixed(0)} MB for ${stalledMb.toFixed(0)} MB of stalled answers`).toBeLessThan(stalledMb);
      } finally {
        for (const session of sessions) session.destroy();
      }
    });
  });

  describe('unsent bytes per connection', () => {
    let gw: ChildGateway;
    let body: string;
    let answerBytes: number;
    beforeAll(async () => {
      // The write timeout does not come into it.
      ({ gw, body, answerBytes } = await withLargeUser({ HTTP_WRITE_TIMEOUT_MS: '600000' }));
    });
    afterAll(async () => {
      await gw?.stop();
    });

    it('two answers at once on a session that reads nothing: the one that would take it past HTTP_MAX_UNSENT_BYTES_PER_CONNECTION is reset at once; another connection is served', async () => {
      const session = zeroWindow(gw.base);
      const reader = http2Connect(gw.base);
      reader.on('error', () => {});
      try {
        // Both streams open before either answer is queued: node's own cap on a session's memory
        // (10 MB) refuses only streams opened after that, so both are taken and both answered.
        const both = [ask(session, body, gw.adminToken), ask(session, body, gw.adminToken)];
        const first = await Promise.race(both.map((a, i) => a.closed.then((c) => ({ ...c, i }))));
        // 13 MB queued for one, 13 MB more would pass 16 MiB: that one is reset, the other waits on.
        expect({ rstCode: first.rstCode, bytes: first.bytes }).toEqual({ rstCode: h2.NGHTTP2_CANCEL, bytes: 0 });
        expect(both[1 - first.i]!.stream.closed).toBe(false);
        expect(await cuts(gw, 'unsent_cap')).toBe(1);
        // The cap is the connection's: a peer that reads, on its own connection, gets the whole answer.
        expect(await ask(reader, body, gw.adminToken).closed).toEqual({ rstCode: 0, bytes: answerBytes });
      } finally {
        session.destroy();
        reader.destroy();
      }
    });
  });
});
