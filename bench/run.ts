// `npm run bench`: every scenario of bench/scenarios.ts against a server started here in a
// child process (so its RSS is its own), autocannon in this process, loopback only; the gRPC
// scenario is driven by bench/h2-load.ts instead (autocannon speaks only HTTP/1.1), with the
// same connections, warm-up and duration, one stream at a time per connection.
// Gateway scenarios run on the embedded stores and on MongoDB-wire + Redis (FerretDB and
// redis-server started like the tests do, unless MONGODB_URL / REDIS_URL are set).
// Prints one markdown table and writes bench/results/latest.json.
//
//   npm run bench                       10 s per scenario, 10 connections
//   npm run bench:smoke                 2 s per scenario, 4 connections; fails on any error
//   npm run bench -- --only updateHumanProfile/embedded,yoga-ping --cpu-prof
//
// Options: --smoke, --duration S, --warmup S, --connections N, --only a,b (substrings of
// "scenario/store"), --cpu-prof (profile the server children, print their hottest frames),
// --out FILE (default bench/results/latest.json; the smoke run writes nothing unless given).
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { startServers, type ServerChoice } from '../test/support/servers-start.ts';
import { formatSummary, summarize, type ProfileSummary } from './cpuprofile-top.ts';
import { h2Load, type H2LoadResult } from './h2-load.ts';
import { meLoad, scenarios, type Load, type Scenario, type ServerKind, type Target } from './scenarios.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// The servers run compiled (npm run build), as in production: no TypeScript loader in the measured process.
const childScript = path.join(root, 'dist/bench/server-child.js');

// ---------------------------------------------------------------- options

function parseArgs(argv: string[]) {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const [k, v] = a.slice(2).split('=', 2) as [string, string | undefined];
    if (v !== undefined) flags.set(k, v);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') && !['smoke', 'cpu-prof'].includes(k)) flags.set(k, argv[++i]!);
    else flags.set(k, true);
  }
  const smoke = flags.has('smoke');
  const num = (k: string, d: number) => (typeof flags.get(k) === 'string' ? Number(flags.get(k)) : d);
  const out = flags.get('out');
  return {
    smoke,
    duration: num('duration', smoke ? 2 : 10),
    warmup: num('warmup', smoke ? 1 : 2),
    connections: num('connections', smoke ? 4 : 10),
    only: typeof flags.get('only') === 'string' ? (flags.get('only') as string).split(',').filter(Boolean) : [],
    cpuProf: flags.has('cpu-prof'),
    out: typeof out === 'string' ? path.resolve(out) : smoke ? undefined : path.join(root, 'bench/results/latest.json'),
    /** Rate of the `me` probe in the latency-under-load check. */
    probeRate: 20,
  };
}

const opts = parseArgs(process.argv.slice(2));
const bcryptCost = Number(process.env.BCRYPT_COST || 10);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------- child servers

interface Child {
  proc: ChildProcess;
  target: Target;
  /** When the server listened, on the monotonic clock of its CPU profile (µs). */
  readyUs: number;
  nextLine: (timeoutMs?: number) => Promise<Record<string, any>>;
  stderrTail: () => string;
}

/** What the child reports on SIGUSR2: figures since the previous mark. */
interface Mark {
  mark: number;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  memoryMb: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  /** Embedded store only: appends and disk syncs (group commit makes syncs < appends). */
  store?: { appends: number; syncs: number };
}

let current: ChildProcess | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (current && current.exitCode === null) current.kill('SIGKILL');
    process.exit(130); // the servers started by servers-start.ts die in its exit handler
  });
}

async function startChild(kind: ServerKind, env: Record<string, string>, nodeArgs: string[]): Promise<Child> {
  const proc = spawn(process.execPath, [...nodeArgs, childScript, kind], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  current = proc;
  let tail = '';
  proc.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000)));
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else queued.push(line);
  });
  let exited = false;
  proc.once('exit', () => (exited = true));
  const nextLine = (timeoutMs = 15_000) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const line = queued.shift();
      if (line !== undefined) return resolve(JSON.parse(line));
      if (exited) return reject(new Error(`${kind} server exited: ${tail}`));
      const timer = setTimeout(() => reject(new Error(`${kind} server said nothing within ${timeoutMs} ms: ${tail}`)), timeoutMs);
      const onExit = (code: number | null) => (clearTimeout(timer), reject(new Error(`${kind} server exited with ${code}: ${tail}`)));
      proc.once('exit', onExit);
      waiting.push((l) => {
        clearTimeout(timer);
        proc.off('exit', onExit);
        resolve(JSON.parse(l));
      });
    });
  const info = await nextLine(60_000);
  return { proc, target: { url: info.url, adminToken: info.adminToken }, readyUs: info.readyUs, nextLine, stderrTail: () => tail };
}

/** Ends one phase in the child: its event-loop delay and memory since the previous mark. */
async function mark(child: Child): Promise<Mark> {
  const line = child.nextLine();
  child.proc.kill('SIGUSR2');
  return (await line) as Mark;
}

async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
  current = undefined;
}

// ---------------------------------------------------------------- process figures

const execFileAsync = promisify(execFile);

function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Peak RSS of a process: its RSS sampled every 100 ms, and the kernel's high-water mark where there is one. */
function rssSampler(pid: number) {
  let peakKb = 0;
  const hasProc = procStatusKb(pid, 'VmRSS') !== undefined;
  const timer = setInterval(async () => {
    let kb = hasProc ? procStatusKb(pid, 'VmRSS') : undefined;
    if (!hasProc) {
      try {
        kb = Number((await execFileAsync('ps', ['-o', 'rss=', '-p', String(pid)])).stdout.trim());
      } catch {
        kb = undefined;
      }
    }
    if (kb && kb > peakKb) peakKb = kb;
  }, 100);
  timer.unref();
  return {
    /** Peak in MB so far (call before the process exits). */
    peakMb(): number {
      const hwm = procStatusKb(pid, 'VmHWM') ?? 0;
      return Math.round(Math.max(peakKb, hwm) / 102.4) / 10;
    },
    stop: () => clearInterval(timer),
  };
}

/** CPU time (user + system) a process has used so far, in ms; Linux only. */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------- load

interface Measured extends Omit<H2LoadResult, 'statusErrors'> {
  /** 2xx answers that carry an error: a body naming "errors" (GraphQL), or a grpc-status other than 0 (gRPC). */
  graphqlErrors: number;
  /** CPU time of this (the load-generating) process per request, to see that the client is not the bottleneck. */
  clientCpuMsPerRequest?: number;
}

async function cannon(url: string, load: Load, connections: number, duration: number, overallRate?: number): Promise<Measured> {
  let sample: string | undefined;
  const status: Record<number, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration,
        ...(overallRate ? { overallRate, ignoreCoordinatedOmission: true } : {}),
        ...load.options,
        // A GraphQL error comes with HTTP 200: a body naming "errors" counts as a mismatch.
        verifyBody(body) {
          const ok = !String(body).includes('"errors"');
          if (!ok) sample ??= String(body).slice(0, 400);
          return ok;
        },
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (client, statusCode) => {
      if (statusCode < 200 || statusCode > 299) status[statusCode] = (status[statusCode] ?? 0) + 1;
    });
  });
  const non2xx = result.non2xx;
  if (non2xx && !sample) sample = `HTTP ${JSON.stringify(status)}`;
  return {
    requests: result.requests.total,
    rps: Math.round((result.requests.total / result.duration) * 10) / 10,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    graphqlErrors: result.mismatches,
    sample,
  };
}

/** One load run: autocannon, or bench/h2-load.ts when the load is HTTP/2 (gRPC). */
async function drive(url: string, load: Load, connections: number, duration: number): Promise<Measured> {
  const cpu = process.cpuUsage();
  let m: Measured;
  if (load.h2) {
    const r = await h2Load({ origin: new URL(url).origin, connections, duration, request: load.h2.request });
    const { statusErrors, ...rest } = r;
    m = { ...rest, graphqlErrors: statusErrors };
  } else {
    m = await cannon(url, load, connections, duration);
  }
  const used = process.cpuUsage(cpu);
  if (m.requests) m.clientCpuMsPerRequest = Math.round(((used.user + used.system) / 1000 / m.requests) * 1000) / 1000;
  return m;
}

// ---------------------------------------------------------------- runs

type StoreKind = 'embedded' | 'mongodb+redis';

interface Row extends Measured {
  scenario: string;
  store: StoreKind | '-';
  what: string;
  peakRssMb: number;
  cpuMsPerRequest?: number;
  ratioRawHttp?: number;
  ratioYogaPing?: number;
  /** The scenario (same store, same run) this one is set against: GraphQL updateHumanProfile for the wire rows. */
  versus?: string;
  /** req/s divided by the `versus` scenario's req/s (1 for that scenario itself). */
  ratioGraphql?: number;
  /** Read back after the measurement: storeWrites = sum of the users' sequences - 1, for the write scenarios. */
  check?: Record<string, number>;
  /** In the server during the measurement (perf_hooks.monitorEventLoopDelay, 10 ms resolution). */
  eventLoopDelayMs?: Mark['eventLoopDelayMs'];
  /** process.memoryUsage() of the server right after the measurement. */
  memoryMb?: Mark['memoryMb'];
  /** Embedded store: appends and fdatasyncs during the measurement. */
  storeIo?: Mark['store'];
  /** RSS when the server had just started listening, before any load. */
  readyRssMb?: number;
  /** With --cpu-prof: the server's main thread during the measurement. */
  profile?: ProfileSummary & { busyMsPerRequest: number };
}

interface LatencyCheck {
  store: StoreKind;
  hashing: Measured;
  probe: Measured & { rate: number };
  targetP99Ms: number;
  eventLoopDelayMs: Mark['eventLoopDelayMs'];
  peakRssMb: number;
}

interface Plan {
  scenario: Scenario;
  store: StoreKind | '-';
}

const RUN = `${Date.now().toString(36)}${process.pid.toString(36)}`;
/** Non-2xx, connection errors and errors in 2xx answers (GraphQL errors, gRPC status), as one string; a response can be both non-2xx and carry errors. */
const failuresOf = (m: Measured) => `${m.non2xx}/${m.errors}/${m.graphqlErrors}`;
const failed = (m: Measured) => m.non2xx + m.errors + m.graphqlErrors > 0;

async function runOne(plan: Plan, servers: { redis?: ServerChoice; mongo?: ServerChoice }, index: number) {
  const { scenario, store } = plan;
  const label = store === '-' ? scenario.name : `${scenario.name}/${store}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-gw-'));
  const profDir = path.join(dataDir, 'cpuprofile');
  const dbName = `bench_${RUN}_${index}`;
  // As deployed (Dockerfile): NODE_ENV=production unless the caller sets NODE_ENV.
  const env: Record<string, string> = { NODE_ENV: process.env.NODE_ENV ?? 'production', DATA_DIR: path.join(dataDir, 'data'), BCRYPT_COST: String(bcryptCost) };
  // The load comes from one caller and one address: the request rate limits would measure themselves.
  Object.assign(env, { RATE_LIMIT_PER_CALLER_PER_MINUTE: '0', RATE_LIMIT_PER_IP_PER_MINUTE: '0' });
  if (store === 'embedded') Object.assign(env, { MONGODB_URL: '', REDIS_URL: '' });
  if (store === 'mongodb+redis') Object.assign(env, { MONGODB_URL: servers.mongo!.url, MONGODB_DB: dbName, REDIS_URL: servers.redis!.url });
  const nodeArgs = opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  if (opts.cpuProf) mkdirSync(profDir, { recursive: true });

  log(`${label}: starting the ${scenario.server} server`);
  const child = await startChild(scenario.server, env, nodeArgs);
  const pid = child.proc.pid!;
  const readyKb = procStatusKb(pid, 'VmRSS');
  const readyRssMb = readyKb === undefined ? undefined : Math.round(readyKb / 102.4) / 10;
  const rss = rssSampler(pid);
  let latency: LatencyCheck | undefined;
  let row: Row | undefined;
  let measureFrom: number | undefined;
  let measureTo: number | undefined;
  let measured = 0;
  try {
    const { url } = child.target;
    if (opts.warmup > 0) {
      log(`${label}: warm-up ${opts.warmup} s`);
      const warm = await drive(url, await scenario.load(child.target, opts.connections), opts.connections, opts.warmup);
      if (failed(warm)) log(`${label}: warm-up failures (non-2xx/conn/app) ${failuresOf(warm)}, e.g. ${warm.sample}`);
    }
    const load = await scenario.load(child.target, opts.connections);
    log(`${label}: measuring ${opts.duration} s, ${opts.connections} connections`);
    const cpuBefore = cpuMs(pid);
    measureFrom = (await mark(child)).mark;
    const m = await drive(url, load, opts.connections, opts.duration);
    const during = await mark(child);
    measureTo = during.mark;
    measured = m.requests;
    const cpuAfter = cpuMs(pid);
    const check = load.after ? await load.after() : undefined;
    row = {
      scenario: scenario.name,
      store,
      what: scenario.what,
      ...(scenario.versus ? { versus: scenario.versus } : {}),
      ...m,
      peakRssMb: 0,
      cpuMsPerRequest: cpuBefore !== undefined && cpuAfter !== undefined && m.requests ? Math.round(((cpuAfter - cpuBefore) / m.requests) * 1000) / 1000 : undefined,
      check,
      eventLoopDelayMs: during.eventLoopDelayMs,
      memoryMb: during.memoryMb,
      storeIo: during.store,
      readyRssMb,
    };
    if (failed(m)) log(`${label}: failures (non-2xx/conn/app) ${failuresOf(m)}, e.g. ${m.sample}`);

    // Latency under load: while bcrypt hashing saturates the server, a slow `me` probe.
    if (scenario.name === 'addHumanUser+password' && store === 'embedded') {
      log(`${label}: latency under load: ${opts.duration} s of hashing with \`me\` at ${opts.probeRate}/s beside it`);
      const hashingLoad = await scenario.load(child.target, opts.connections);
      await mark(child);
      const [hashing, probe] = await Promise.all([
        cannon(url, hashingLoad, opts.connections, opts.duration),
        cannon(url, meLoad(child.target), 2, opts.duration, opts.probeRate),
      ]);
      const { eventLoopDelayMs } = await mark(child);
      latency = { store, hashing, probe: { ...probe, rate: opts.probeRate }, targetP99Ms: 50, eventLoopDelayMs, peakRssMb: 0 };
    }
  } finally {
    const peak = rss.peakMb();
    rss.stop();
    if (row) row.peakRssMb = peak;
    if (latency) latency.peakRssMb = peak;
    await stopChild(child);
  }
  if (!row) throw new Error(`${label}: no result`);
  if (opts.cpuProf) {
    // One profile per thread (tsx runs its loader in a worker): keep the busiest, the main thread.
    const window = { fromUs: measureFrom, toUs: measureTo };
    const profiles = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f, i) => {
        const keep = path.join(os.tmpdir(), `bench-${label.replace(/[^\w.+-]/g, '_')}-${RUN}-${i}.cpuprofile`);
        writeFileSync(keep, readFileSync(path.join(profDir, f)));
        return summarize(keep, 15, window);
      })
      .sort((a, b) => b.busyMs - a.busyMs);
    if (profiles[0]) {
      row.profile = { ...profiles[0], busyMsPerRequest: measured ? Math.round((profiles[0].busyMs / measured) * 1000) / 1000 : 0 };
      log(`${label}: CPU profile of the measurement, ${row.profile.busyMsPerRequest} ms busy per request\n${formatSummary(profiles[0])}`);
    }
  }
  if (store === 'mongodb+redis') {
    const client = new MongoClient(servers.mongo!.url, { serverSelectionTimeoutMS: 5000 });
    await client.db(dbName).dropDatabase().catch((e) => log(`could not drop ${dbName}: ${e}`));
    await client.close();
  }
  rmSync(dataDir, { recursive: true, force: true });
  log(
    `${label}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, peak RSS ${row.peakRssMb} MB` +
      (row.check?.storeWrites !== undefined ? `, ${row.requests} requests / ${row.check.storeWrites} store writes` : '') +
      (row.clientCpuMsPerRequest !== undefined ? `, client CPU ${row.clientCpuMsPerRequest} ms/req` : ''),
  );
  return { row, latency };
}

// ---------------------------------------------------------------- report

const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '-' : n.toFixed(digits));
const ratio = (n: number | undefined) => (n === undefined ? '-' : n < 0.1 ? n.toFixed(3) : n.toFixed(2));

function table(rows: Row[]): string {
  const head = [
    'scenario',
    'store',
    'req/s',
    'p50 ms',
    'p99 ms',
    'failures: non-2xx/conn/app',
    'peak RSS MB',
    '× raw-http',
    '× yoga-ping',
    '× GraphQL',
    'server CPU ms/req',
    'requests / store writes',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) {
    lines.push(
      `| ${[
        r.scenario,
        r.store,
        fmt(r.rps, 0),
        fmt(r.p50, 0),
        fmt(r.p99, 0),
        failuresOf(r),
        fmt(r.peakRssMb, 0),
        ratio(r.ratioRawHttp),
        ratio(r.ratioYogaPing),
        ratio(r.ratioGraphql),
        fmt(r.cpuMsPerRequest, 2),
        r.check?.storeWrites !== undefined ? `${r.requests} / ${r.check.storeWrites}` : '-',
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function machine() {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryMb: Math.round(os.totalmem() / 1024 / 1024),
    node: process.version,
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const plans: Plan[] = [];
  for (const scenario of scenarios) if (scenario.server !== 'gateway') plans.push({ scenario, store: '-' });
  for (const store of ['embedded', 'mongodb+redis'] as const) {
    for (const scenario of scenarios) if (scenario.server === 'gateway') plans.push({ scenario, store });
  }
  const selected = opts.only.length
    ? plans.filter((p) => opts.only.some((o) => (p.store === '-' ? p.scenario.name : `${p.scenario.name}/${p.store}`).includes(o)))
    : plans;
  if (!selected.length) throw new Error(`--only ${opts.only.join(',')} selects no scenario`);

  log('building the servers (npm run build)');
  const build = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');

  const servers: { redis?: ServerChoice; mongo?: ServerChoice } = {};
  let runnable = selected;
  if (selected.some((p) => p.store === 'mongodb+redis')) {
    const { redis, mongo } = await startServers();
    Object.assign(servers, { redis, mongo });
    for (const [name, s] of [['redis', redis], ['mongo', mongo]] as const) {
      log(s.url ? `${name}: ${s.url} (${s.how})` : `${name}: none (${s.problem})`);
    }
    if (!redis.url || !mongo.url) {
      const message = `MongoDB-wire + Redis scenarios cannot run: ${[redis.problem, mongo.problem].filter(Boolean).join('; ')}`;
      if (process.env.CI) throw new Error(`CI: ${message}`);
      log(`!!! SKIPPED: ${message}`);
      runnable = selected.filter((p) => p.store !== 'mongodb+redis');
    }
  }

  const started = Date.now();
  const rows: Row[] = [];
  let latency: LatencyCheck | undefined;
  for (const [i, plan] of runnable.entries()) {
    const out = await runOne(plan, servers, i);
    rows.push(out.row);
    latency ??= out.latency;
  }
  const raw = rows.find((r) => r.scenario === 'raw-http');
  const yoga = rows.find((r) => r.scenario === 'yoga-ping');
  for (const r of rows) {
    if (raw?.rps) r.ratioRawHttp = Math.round((r.rps / raw.rps) * 1000) / 1000;
    if (yoga?.rps) r.ratioYogaPing = Math.round((r.rps / yoga.rps) * 1000) / 1000;
    // The wire rows against GraphQL: same store setup, same run; the GraphQL row itself gets 1.
    const base = r.versus ? rows.find((b) => b.scenario === r.versus && b.store === r.store) : undefined;
    if (base?.rps) {
      r.ratioGraphql = Math.round((r.rps / base.rps) * 1000) / 1000;
      base.ratioGraphql = 1;
    }
  }

  const profileRow = rows.find((r) => r.scenario === 'updateHumanProfile' && r.store === 'embedded');
  const gatewayRows = rows.filter((r) => r.store !== '-');
  const targets = {
    updateHumanProfileVsYogaPing: profileRow?.ratioYogaPing !== undefined ? { value: profileRow.ratioYogaPing, target: '>= 0.8', met: profileRow.ratioYogaPing >= 0.8 } : undefined,
    peakGatewayRssMb: gatewayRows.length ? (() => { const v = Math.max(...gatewayRows.map((r) => r.peakRssMb)); return { value: v, target: '< 250', met: v < 250 }; })() : undefined,
    meP99UnderHashingMs: latency ? { value: latency.probe.p99, target: '< 50', met: latency.probe.p99 < 50 } : undefined,
    errors: (() => {
      const all: Measured[] = [...rows, ...(latency ? [latency.hashing, latency.probe] : [])];
      const sum = (k: 'non2xx' | 'errors' | 'graphqlErrors') => all.reduce((s, m) => s + m[k], 0);
      const value = `${sum('non2xx')}/${sum('errors')}/${sum('graphqlErrors')} (non-2xx/conn/app)`;
      return { value, target: '0/0/0', met: !all.some(failed) };
    })(),
  };

  const m = machine();
  const lines = [
    table(rows),
    '',
    `${opts.duration} s per scenario after ${opts.warmup} s of warm-up, ${opts.connections} connections, loopback; BCRYPT_COST ${bcryptCost}; ${m.cpuCount} × ${m.cpuModel}, ${m.totalMemoryMb} MB, Node ${m.node}, ${m.os}.`,
  ];
  if (latency) {
    lines.push(
      '',
      `Latency under load (embedded): \`me\` at ${latency.probe.rate}/s while addHumanUser+password runs at ${fmt(latency.hashing.rps, 0)} req/s: ` +
        `p50 ${latency.probe.p50} ms, p99 ${latency.probe.p99} ms, max ${latency.probe.max} ms (target p99 < ${latency.targetP99Ms} ms); ` +
        `server event-loop delay p99 ${latency.eventLoopDelayMs.p99} ms, max ${latency.eventLoopDelayMs.max} ms; ` +
        `failures (non-2xx/conn/app): probe ${failuresOf(latency.probe)}, hashing ${failuresOf(latency.hashing)}.`,
    );
  }
  lines.push('', 'Targets:');
  for (const [name, t] of Object.entries(targets)) if (t) lines.push(`- ${name}: ${t.value} (target ${t.target}) ${t.met ? 'met' : 'MISSED'}`);
  process.stdout.write(lines.join('\n') + '\n');

  if (opts.out) {
    const report = {
      date: new Date().toISOString(),
      command: `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
      machine: m,
      options: { duration: opts.duration, warmup: opts.warmup, connections: opts.connections, bcryptCost, smoke: opts.smoke },
      servers: { redis: servers.redis?.how || servers.redis?.problem, mongo: servers.mongo?.how || servers.mongo?.problem },
      elapsedSeconds: Math.round((Date.now() - started) / 1000),
      results: rows,
      latencyUnderLoad: latency,
      targets,
      table: table(rows),
    };
    mkdirSync(path.dirname(opts.out), { recursive: true });
    writeFileSync(opts.out, JSON.stringify(report, null, 2) + '\n');
    log(`written ${path.relative(process.cwd(), opts.out)}`);
  }

  if (!targets.errors.met) {
    log(`FAILED: failed responses ${targets.errors.value}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`FAILED: ${err instanceof Error ? err.stack : err}`);
    process.exit(1);
  },
);
