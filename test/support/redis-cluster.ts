// A Redis Cluster of the test's own: `masters` redis-server processes (no replicas) on free
// loopback ports, each with its data (nodes.conf, AOF with appendfsync always) in a temp
// folder, joined by `redis-cli --cluster create`. A node can be killed (SIGKILL) and started
// again on the same port and folder: it comes back with its slots and its acknowledged writes.
// Every node dies with the test process; the folders are removed by stop() (and at exit).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net.ts';

export interface RedisCluster {
  /** The value for REDIS_CLUSTER_NODES: "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3". */
  seeds: string;
  ports: number[];
  /** SIGKILL node i; resolves once it is gone. */
  kill(i: number): Promise<void>;
  /** Starts node i again on the same port and folder; resolves when every node says cluster_state:ok. */
  restart(i: number): Promise<void>;
  /** Kills every node and removes the folders. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const alive = new Set<ChildProcess>();
const folders = new Set<string>();
process.on('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (port + 10000) is free too. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = await freePort();
    if (port + 10000 > 65535 || taken.has(port) || taken.has(port + 10000)) continue;
    if (await portIsFree(port + 10000)) return port;
  }
  throw new Error('no free port pair (port, port + 10000) for a cluster node');
}

/** One command in RESP over a fresh connection, the reply as text ('' when the node does not answer). */
function ask(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = () => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(1000, done);
    socket.once('error', done);
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // A simple reply (+, -, :) ends at its first CRLF; a bulk string after its length.
      const bulk = /^\$(-?\d+)\r\n/.exec(reply);
      if ((bulk && (Number(bulk[1]) < 0 || reply.length >= bulk[0].length + Number(bulk[1]) + 2)) || (!bulk && /^[+\-:].*\r\n/.test(reply))) done();
    });
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
  });
}

function findCli(bin: string): string {
  const candidates = [path.join(path.dirname(bin), 'redis-cli'), ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, 'redis-cli'))];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`redis-cli not found beside ${bin} or on PATH (Debian: redis-tools, a dependency of redis-server)`);
}

export async function startRedisCluster(bin: string, opts: { masters?: number } = {}): Promise<RedisCluster> {
  if (!bin) throw new Error('redis-server not found: a Redis Cluster test starts its own nodes (install the Debian package redis-server)');
  const masters = opts.masters ?? 3;
  if (masters < 3) throw new Error('a Redis Cluster needs at least 3 masters');
  const cli = findCli(bin);
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await freeClusterPort(taken);
    taken.add(port).add(port + 10000);
    ports.push(port);
  }
  const dirs = ports.map(() => {
    const dir = mkdtempSync(path.join(tmpdir(), 'redis-cluster-'));
    folders.add(dir);
    return dir;
  });
  const procs: (ChildProcess | undefined)[] = ports.map(() => undefined);
  const logs: string[] = ports.map(() => '');

  async function up(i: number): Promise<void> {
    const port = ports[i]!;
    const dir = dirs[i]!;
    const child = spawn(
      bin,
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--dir', dir,
        '--cluster-enabled', 'yes',
        '--cluster-config-file', path.join(dir, 'nodes.conf'),
        '--cluster-announce-ip', '127.0.0.1',
        '--appendonly', 'yes',
        '--appendfsync', 'always',
        '--save', '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    procs[i] = child;
    alive.add(child);
    child.once('exit', () => alive.delete(child));
    const keep = (chunk: Buffer) => (logs[i] = (logs[i] + chunk.toString()).slice(-2000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    for (let t = 0; t < 200; t++) {
      if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited with ${child.exitCode}: ${logs[i]}`);
      if ((await ask(port, 'PING')).startsWith('+PONG')) return;
      await sleep(50);
    }
    throw new Error(`redis-server on ${port} did not answer: ${logs[i]}`);
  }

  async function allOk(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let states: string[] = [];
    while (Date.now() < deadline) {
      states = await Promise.all(ports.map(async (p) => /cluster_state:(\w+)/.exec(await ask(p, 'CLUSTER', 'INFO'))?.[1] ?? 'no answer'));
      if (states.every((s) => s === 'ok')) return;
      await sleep(100);
    }
    throw new Error(`cluster not ok within ${timeoutMs} ms: ${states.join(', ')}`);
  }

  function down(i: number): Promise<void> {
    const child = procs[i];
    return new Promise((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async function stop(): Promise<void> {
    await Promise.all(ports.map((_, i) => down(i)));
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
      folders.delete(dir);
    }
  }

  try {
    await Promise.all(ports.map((_, i) => up(i)));
    await run(cli, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 });
    await allOk();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
    ports,
    kill: (i) => down(i),
    async restart(i) {
      await down(i);
      await up(i);
      await allOk();
    },
    stop,
  };
}
