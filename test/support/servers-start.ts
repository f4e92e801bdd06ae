// Finding and starting redis-server and FerretDB (SQLite backend), each on a free
// loopback port with its data in a temp folder; both die with the process that
// started them. Used by the test global setup and by the benchmark (bench/run.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { MongoClient } from 'mongodb';

const children: ChildProcess[] = [];
const tempDirs: string[] = [];

/** Set once cleanup() has begun: the exits it causes are expected. */
let stopping = false;

/** Kills the servers started here and removes their temp folders (also runs at process exit). */
export function cleanup(): void {
  stopping = true;
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);

export function findBinary(name: string, extra: string[]): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const candidate of [...dirs.map((d) => join(d, name)), ...extra]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** redis-server on PATH or in the usual Debian places; empty when not found. */
export function findRedisBinary(): string {
  return findBinary('redis-server', ['/usr/bin/redis-server', '/usr/sbin/redis-server']) ?? '';
}

/** ferretdb on PATH, FERRETDB_BIN, or where `go install` puts it (scripts/install-ferretdb.sh). */
export function findFerretBinary(): string | undefined {
  const home = process.env.HOME ?? '/root';
  return findBinary('ferretdb', [
    ...(process.env.FERRETDB_BIN ? [process.env.FERRETDB_BIN] : []),
    join(home, 'go/bin/ferretdb'),
    '/root/go/bin/ferretdb',
    ...(process.env.GOPATH ? process.env.GOPATH.split(delimiter).map((p) => join(p, 'bin/ferretdb')) : []),
  ]);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

async function mongoPing(url: string): Promise<boolean> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
  try {
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => {});
  }
}

/** Spawns bin and waits until ready() says yes; returns the reason when it does not come up. */
async function start(bin: string, args: string[], ready: () => Promise<boolean>, timeoutMs = 20_000) {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  // What it said first once ready: a crash's reason comes before its stack dump (Go: "panic:", "fatal error:").
  let sinceReady: string | undefined;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-2000);
    if (sinceReady !== undefined && sinceReady.length < 1500) sinceReady = (sinceReady + chunk.toString()).slice(0, 1500);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | undefined;
  let givenUp = false;
  child.once('error', (e) => (spawnError = e));
  // A server that dies while in use says so, with its first and last words: its clients only see refused connections.
  child.once('exit', (code, signal) => {
    if (stopping || givenUp) return;
    const first = sinceReady?.trim() ? `first said after start: ${sinceReady.trim()}\n…\nlast: ` : '';
    process.stderr.write(`[servers] ${bin} (pid ${child.pid}) exited unexpectedly (${code ?? signal}): ${first}${output.trim()}\n`);
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (spawnError) return `${bin} failed to start: ${spawnError.message}`;
    if (child.exitCode !== null) return `${bin} exited with ${child.exitCode}: ${output.trim()}`;
    if (await ready()) {
      sinceReady = '';
      return '';
    }
    await sleep(100);
  }
  givenUp = true;
  child.kill('SIGKILL');
  return `${bin} did not answer within ${timeoutMs} ms: ${output.trim()}`;
}

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export async function startRedis(bin: string): Promise<{ url: string; problem: string }> {
  const port = await freePort();
  const dir = tempDir('test-redis-');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const problem = await start(bin, args, () => redisPing(port));
  return problem ? { url: '', problem } : { url: `redis://127.0.0.1:${port}`, problem: '' };
}

export async function startFerret(bin: string): Promise<{ url: string; problem: string }> {
  const port = await freePort();
  const dir = tempDir('test-ferretdb-');
  const url = `mongodb://127.0.0.1:${port}/`;
  const args = [
    '--handler=sqlite',
    `--sqlite-url=file:${dir}/`,
    `--listen-addr=127.0.0.1:${port}`,
    '--telemetry=disable',
    `--state-dir=${dir}`,
    '--debug-addr=-', // no debug HTTP listener
    '--log-level=error',
  ];
  const problem = await start(bin, args, () => mongoPing(url));
  return problem ? { url: '', problem } : { url, problem: '' };
}

export interface ServerChoice {
  url: string;
  /** Why there is no server (empty when url is set). */
  problem: string;
  /** How the url came about: given by the environment or started here. */
  how: string;
}

/** Redis and MongoDB-wire: REDIS_URL / MONGODB_URL when set, else redis-server and FerretDB started here. */
export async function startServers(
  redisBin: string = findRedisBinary(),
  ferretBin: string | undefined = findFerretBinary(),
): Promise<{ redis: ServerChoice; mongo: ServerChoice }> {
  const redis = process.env.REDIS_URL
    ? { url: process.env.REDIS_URL, problem: '', how: 'given by REDIS_URL' }
    : redisBin
      ? { ...(await startRedis(redisBin)), how: `started ${redisBin}` }
      : { url: '', problem: 'redis-server not found (install Debian package redis-server or set REDIS_URL)', how: '' };
  const mongo = process.env.MONGODB_URL
    ? { url: process.env.MONGODB_URL, problem: '', how: 'given by MONGODB_URL' }
    : ferretBin
      ? { ...(await startFerret(ferretBin)), how: `started ${ferretBin}` }
      : { url: '', problem: 'ferretdb not found (run scripts/install-ferretdb.sh or set MONGODB_URL)', how: '' };
  return { redis, mongo };
}
