// GraphiQL's 9 MB page and clients that ask for it and never read (issue 27): the page is
// rendered and compressed once and every answer sends those same bytes, so 30 such clients
// cost the gateway about nothing. (Before: each answer rendered and held its own 9 MB copy,
// RSS 726 → 1,224 MB.) A real child gateway; its RSS read from /proc/<pid>/status.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';

const CLIENTS = 30;
/** Far below what 30 copies of the page take (30 × 9 MB), far above what sharing one costs. */
const MAX_GROWTH_MB = 120;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** RSS once it has stopped moving (within 2 MB over three readings 500 ms apart), or after 60 s: the highest reading then. */
async function settledRssMb(pid: number): Promise<number> {
  const readings: number[] = [];
  for (const giveUp = Date.now() + 60_000; Date.now() < giveUp;) {
    readings.push(rssMb(pid));
    const last = readings.slice(-3);
    if (last.length === 3 && Math.max(...last) - Math.min(...last) < 2) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return Math.max(...readings.slice(-3));
}

/** A client that asks for the page (no Accept-Encoding: the 9 MB one) and stops reading after the first bytes. */
function idleClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/html\r\nSec-Fetch-Site: cross-site\r\n\r\n`);
    });
    socket.once('data', (chunk: Buffer) => {
      socket.pause(); // never read again: the rest waits in the gateway
      if (chunk.toString('latin1').startsWith('HTTP/1.1 200')) resolve(socket);
      else reject(new Error(`not the page: ${chunk.toString('latin1').slice(0, 200)}`));
    });
    socket.once('error', reject);
  });
}

describe('GraphiQL page and clients that never read it', () => {
  let gw: ChildGateway;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    gw = await spawnGateway({ env: { RATE_LIMIT_PER_IP_PER_MINUTE: '0' } });
  });
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await gw?.stop();
  });

  it(`${CLIENTS} of them grow the gateway's RSS by less than ${MAX_GROWTH_MB} MB`, async () => {
    const pid = gw.child.pid!;
    // One full read first: GraphiQL's module is loaded and the page rendered (the cost of any first view).
    const first = await fetch(gw.url, { headers: { accept: 'text/html', 'sec-fetch-site': 'cross-site' } });
    expect((await first.text()).length).toBeGreaterThan(5_000_000);
    const before = await settledRssMb(pid);
    const port = Number(new URL(gw.url).port);
    for (let i = 0; i < CLIENTS; i++) sockets.push(await idleClient(port));
    const during = await settledRssMb(pid);
    sockets.splice(0).forEach((s) => s.destroy());
    const after = await settledRssMb(pid);
    console.log(
      `[graphiql memory] RSS ${before.toFixed(0)} MB before, ${during.toFixed(0)} MB with ${CLIENTS} clients not reading, ${after.toFixed(0)} MB after they left`,
    );
    expect(during - before).toBeLessThan(MAX_GROWTH_MB);
  });
});
