// A Redis Cluster of the test's own: `masters` redis-server processes, each with `replicas`
// replicas (none by default), on free loopback ports, each with its data (nodes.conf, AOF with
// appendfsync always) in a temp folder, joined by `redis-cli --cluster create`. A node can be
// killed (SIGKILL) and started again on the same port and folder: it comes back with its slots
// and its acknowledged writes (or, when a replica took its slots over meanwhile, as a replica
// of the new master). With replicas, `nodeTimeoutMs` (cluster-node-timeout; Redis's default,
// 15 s, unless given) bounds how soon a replica takes over from a dead master: waitForFailover.
// Every node dies with the test process; the folders are removed by stop() (and at exit).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net.ts';

/** One node as another node sees it (CLUSTER NODES). */
export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** A replica's master. */
  masterId?: string;
  masterPort?: number;
  /** Slot ranges served (a master's), inclusive. */
  slots: [number, number][];
  /** Flagged fail or fail? (pfail) by the node asked. */
  failing: boolean;
}

export interface RedisCluster {
  /** The value for REDIS_CLUSTER_NODES: "127.0.0.1:p1,127.0.0.1:p2,…" (every node, replicas too). */
  seeds: string;
  /** Every node's port, the index kill() and restart() take (which is a master, and which a replica: nodes()). */
  ports: number[];
  /** SIGKILL node i; resolves once it is gone. */
  kill(i: number): Promise<void>;
  /**
   * Starts node i again on the same port and folder; resolves when every node says cluster_state:ok
   * (and, with replicas and every node running, when each master with slots has its replicas, in sync).
   */
  restart(i: number): Promise<void>;
  /** Roles and slots, as the first live node that answers sees them. */
  nodes(): Promise<ClusterNode[]>;
  /** The port of the master serving the slot of `key`. */
  masterPortOf(key: string): Promise<number>;
  /** The ports of the replicas of the master on `port`. */
  replicasOf(port: number): Promise<number[]>;
  /**
   * Resolves once every replica of the master on `port` has applied everything that master had
   * written when this was called (its master_repl_offset), and its link to the master is up.
   */
  waitForReplication(port: number, timeoutMs?: number): Promise<void>;
  /**
   * After kill() of a master: resolves with the port of the replica that took its slots over,
   * once every live node sees that replica as a master of those slots and says cluster_state:ok.
   */
  waitForFailover(killedPort: number, timeoutMs?: number): Promise<number>;
  /** Kills every node and removes the folders. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Masters (at least 3; 3 by default). */
  masters?: number;
  /** Replicas per master (0 by default): redis-cli --cluster create --cluster-replicas. */
  replicas?: number;
  /** cluster-node-timeout in ms (Redis's default, 15000, unless given): how soon a dead master is failed over. */
  nodeTimeoutMs?: number;
}

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const alive = new Set<ChildProcess>();
const folders = new Set<string>();
process.on('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

// CRC16-CCITT (XModem), as Redis Cluster hashes keys.
const CRC16 = new Uint16Array(256).map((_, i) => {
  let crc = i << 8;
  for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});

/** The Cluster slot of a key (its hash tag's, when it has a non-empty {…}), as CLUSTER KEYSLOT answers. */
export function slotOf(key: string): number {
  let bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}

/** Parses CLUSTER NODES. Slots being migrated or imported ([slot->-id], [slot-<-id]) are left out. */
export function parseClusterNodes(text: string): ClusterNode[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const nodes = lines.map((line): ClusterNode => {
    const [id, addr, flags, master, , , , , ...slots] = line.split(' ');
    const flagList = flags!.split(',');
    return {
      id: id!,
      port: Number(/:(\d+)@/.exec(addr!)?.[1]),
      role: flagList.includes('slave') ? ('replica' as const) : ('master' as const),
      ...(master !== '-' && { masterId: master }),
      slots: slots
        .filter((s) => !s.startsWith('['))
        .map((s) => {
          const [from, to] = s.split('-').map(Number);
          return [from!, to ?? from!] as [number, number];
        }),
      failing: flagList.includes('fail') || flagList.includes('fail?'),
    };
  });
  for (const node of nodes) {
    const master = node.masterId ? nodes.find((n) => n.id === node.masterId) : undefined;
    if (master) node.masterPort = master.port;
  }
  return nodes;
}

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
      if (
        (bulk && (Number(bulk[1]) < 0 || Buffer.byteLength(reply) >= bulk[0].length + Number(bulk[1]) + 2)) ||
        (!bulk && /^[+\-:].*\r\n/.test(reply))
      )
        done();
    });
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
  });
}

/** A field of an INFO section ('' when absent). */
const infoField = (info: string, name: string) => new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(info)?.[1] ?? '';

function findCli(bin: string): string {
  const candidates = [
    path.join(path.dirname(bin), 'redis-cli'),
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((d) => path.join(d, 'redis-cli')),
  ];
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

export async function startRedisCluster(bin: string, opts: RedisClusterOptions = {}): Promise<RedisCluster> {
  if (!bin) throw new Error('redis-server not found: a Redis Cluster test starts its own nodes (install the Debian package redis-server)');
  const masters = opts.masters ?? 3;
  const replicas = opts.replicas ?? 0;
  if (masters < 3) throw new Error('a Redis Cluster needs at least 3 masters');
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`replicas must be a whole number ≥ 0, not ${replicas}`);
  const cli = findCli(bin);
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters * (1 + replicas); i++) {
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
  /** Per killed master's port: its replicas' ports when it was killed (for waitForFailover). */
  const replicasAtKill = new Map<number, number[]>();

  const isUp = (i: number) => {
    const child = procs[i];
    return !!child && child.exitCode === null && child.signalCode === null;
  };
  const livePorts = () => ports.filter((_, i) => isUp(i));

  async function up(i: number): Promise<void> {
    const port = ports[i]!;
    const dir = dirs[i]!;
    const child = spawn(
      bin,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, 'nodes.conf'),
        '--cluster-announce-ip',
        '127.0.0.1',
        ...(opts.nodeTimeoutMs !== undefined ? ['--cluster-node-timeout', String(opts.nodeTimeoutMs)] : []),
        // A replica that needs a full copy (a new one, an old master rejoining) gets it at once, not after 5 s.
        ...(replicas > 0 ? ['--repl-diskless-sync-delay', '0'] : []),
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
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

  /** CLUSTER NODES as the node on `port` sees it ([] when it does not answer). */
  async function viewOf(port: number): Promise<ClusterNode[]> {
    const reply = await ask(port, 'CLUSTER', 'NODES');
    const bulk = /^\$\d+\r\n([\s\S]*)\r\n$/.exec(reply);
    return bulk ? parseClusterNodes(bulk[1]!) : [];
  }

  async function nodes(): Promise<ClusterNode[]> {
    for (const port of livePorts()) {
      const view = await viewOf(port);
      if (view.length) return view;
    }
    throw new Error('no live node of the cluster answers CLUSTER NODES');
  }

  /** With replicas: every node sees `masters` masters with slots, each with `replicas` replicas, and every replica's link is up. */
  async function settled(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let problem = '';
    while (Date.now() < deadline) {
      problem = '';
      for (const port of ports) {
        const view = await viewOf(port);
        const withSlots = view.filter((n) => n.role === 'master' && n.slots.length > 0 && !n.failing);
        const linked = view.filter((n) => n.role === 'replica' && !n.failing && withSlots.some((m) => m.id === n.masterId));
        if (withSlots.length !== masters || linked.length !== masters * replicas) {
          problem = `${port} sees ${withSlots.length} masters with slots and ${linked.length} replicas`;
          break;
        }
        const me = view.find((n) => n.port === port);
        if (me?.role === 'replica' && infoField(await ask(port, 'INFO', 'replication'), 'master_link_status') !== 'up') {
          problem = `replica ${port}: link to its master not up`;
          break;
        }
      }
      if (!problem) return;
      await sleep(100);
    }
    throw new Error(`cluster not settled within ${timeoutMs} ms: ${problem}`);
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

  async function replicasOf(port: number): Promise<number[]> {
    const view = await nodes();
    const master = view.find((n) => n.port === port);
    if (!master) throw new Error(`no node on port ${port}`);
    return view.filter((n) => n.masterId === master.id).map((n) => n.port);
  }

  try {
    await Promise.all(ports.map((_, i) => up(i)));
    await run(
      cli,
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { timeout: 60_000 },
    );
    await allOk();
    if (replicas > 0) await settled();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
    ports,
    async kill(i) {
      if (replicas > 0 && isUp(i)) replicasAtKill.set(ports[i]!, await replicasOf(ports[i]!).catch(() => []));
      await down(i);
    },
    async restart(i) {
      await down(i);
      await up(i);
      await allOk();
      if (replicas > 0 && ports.every((_, j) => isUp(j))) await settled();
    },
    nodes,
    async masterPortOf(key) {
      const slot = slotOf(key);
      const owner = (await nodes()).find(
        (n) => n.role === 'master' && !n.failing && n.slots.some(([from, to]) => slot >= from && slot <= to),
      );
      if (!owner) throw new Error(`no live master serves slot ${slot} (key ${key})`);
      return owner.port;
    },
    replicasOf,
    async waitForReplication(port, timeoutMs = 5000) {
      const target = Number(infoField(await ask(port, 'INFO', 'replication'), 'master_repl_offset'));
      if (!Number.isFinite(target) || target <= 0) throw new Error(`master ${port}: no replication offset`);
      const followers = await replicasOf(port);
      if (!followers.length) throw new Error(`master ${port} has no replica`);
      const deadline = Date.now() + timeoutMs;
      let behind: string[] = [];
      while (Date.now() < deadline) {
        behind = [];
        for (const replica of followers) {
          const info = await ask(replica, 'INFO', 'replication');
          const applied = Number(infoField(info, 'slave_repl_offset'));
          if (infoField(info, 'master_link_status') !== 'up' || !(applied >= target))
            behind.push(`${replica} at ${applied || '?'} of ${target}`);
        }
        if (!behind.length) return;
        await sleep(20);
      }
      throw new Error(`replicas of ${port} not caught up within ${timeoutMs} ms: ${behind.join(', ')}`);
    },
    async waitForFailover(killedPort, timeoutMs = 20_000) {
      const i = ports.indexOf(killedPort);
      if (i < 0) throw new Error(`no node on port ${killedPort}`);
      if (isUp(i)) throw new Error(`node ${killedPort} is running: kill it first`);
      const candidates = replicasAtKill.get(killedPort);
      if (!candidates?.length) throw new Error(`node ${killedPort} had no replica when it was killed (or was not killed with kill())`);
      const deadline = Date.now() + timeoutMs;
      let seen = '';
      while (Date.now() < deadline) {
        const live = livePorts();
        const views = await Promise.all(
          live.map(async (p) => ({
            port: p,
            view: await viewOf(p),
            state: /cluster_state:(\w+)/.exec(await ask(p, 'CLUSTER', 'INFO'))?.[1] ?? 'no answer',
          })),
        );
        const promoted = candidates.filter((c) =>
          views.every(({ view }) => view.some((n) => n.port === c && n.role === 'master' && n.slots.length > 0 && !n.failing)),
        );
        if (promoted.length === 1 && views.every((v) => v.state === 'ok')) return promoted[0]!;
        seen = views
          .map(
            (v) =>
              `${v.port}: ${v.state}, ${v.view
                .filter((n) => candidates.includes(n.port))
                .map((n) => `${n.port} ${n.role}`)
                .join(' ')}`,
          )
          .join('; ');
        await sleep(100);
      }
      throw new Error(`no replica of ${killedPort} (${candidates.join(', ')}) took over within ${timeoutMs} ms: ${seen}`);
    },
    stop,
  };
}
