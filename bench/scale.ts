// Start time and memory of the compiled gateway against the size of its embedded store
// (issue 13): `<start:prod's environment> node <its V8 flags> dist/gateway/main.js` on a data folder with no users,
// then bulk-loaded (tools/sqlite-bulk.ts) with 100,000 and 1,000,000 users (smoke: 10,000),
// each folder in a temp folder removed afterwards. Per folder three starts: the first (it
// creates the instance administrator and the default organization, as every first start
// does; the bulk loader writes none) and two restarts. A start is timed from the spawn to the
// first 200 from GET /ready (polled every 10 ms on a port chosen before the spawn); RSS is
// read from /proc when it first answers and after 20 `me` requests, one at a time, with the
// administrator token main.ts writes to DATA_DIR/admin-token (and names in its log).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bulkLoadUsers } from '../tools/sqlite-bulk.ts';
import { freePort } from '../test/support/servers-start.ts';
import { graphql, OPS } from './scenarios.ts';

export const SCALE_USERS = { full: [0, 100_000, 1_000_000], smoke: [0, 10_000] };
export const ME_REQUESTS = 20;

/** How start:prod runs the gateway: the environment set before node, and node's flags. */
export interface Launch {
  env: Record<string, string>;
  flags: string[];
}

export interface Start {
  kind: 'first' | 'restart';
  /** From the spawn to the first 200 of GET /ready. */
  ms: number;
  rssAtAnswerMb: number;
  rssAfterMeMb: number;
  /** `me` requests that failed (and why, the first). */
  failures: number;
  sample?: string;
}

export interface ScaleRow {
  users: number;
  loadSeconds?: number;
  /** The data folder after the load, before the first start. */
  databaseMb: number;
  starts: Start[];
}

const rssMb = (pid: number) => {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
};
const folderMb = (dir: string) =>
  Math.round(readdirSync(dir).reduce((s, f) => s + statSync(path.join(dir, f)).size, 0) / 1024 / 102.4) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The status of GET url, or 0 when nothing answers (yet). */
const statusOf = (url: string) =>
  new Promise<number>((resolve) => {
    const req = request(url, { timeout: 2000 }, (res) => (res.resume(), resolve(res.statusCode ?? 0)));
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });

/** The last lines a failed gateway wrote, for the error that reports it. */
const tail = (stdout: string, stderr: string) => `${stdout}${stderr}`.trim().split('\n').slice(-20).join('\n') || '(nothing)';

export async function start(
  root: string,
  launch: Launch,
  dataDir: string,
  kind: Start['kind'],
  script = 'dist/gateway/main.js',
): Promise<Start> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...launch.flags, path.join(root, script)], {
    cwd: root,
    env: {
      ...process.env,
      ...launch.env,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URL: '',
      REDIS_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Settles once the process is gone, however early: a start that fails at once has exited
  // before anything below could wait for it.
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  const kill = () => proc.kill('SIGKILL');
  process.once('exit', kill); // the bench stopped (Ctrl-C): no gateway left behind
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout = (stdout + c).slice(-4000)));
  proc.stderr.on('data', (c: Buffer) => (stderr = (stderr + c).slice(-20_000)));
  const failed = (why: string) => new Error(`the gateway (${script}) ${why}; its last output:\n${tail(stdout, stderr)}`);
  try {
    let ms: number | undefined;
    while (ms === undefined) {
      if (gone()) throw failed(`exited with ${proc.exitCode ?? proc.signalCode} before it answered`);
      if (performance.now() - t0 > 60_000) throw failed('did not answer within 60 s');
      if ((await statusOf(`${origin}/ready`)) === 200) ms = Math.round(performance.now() - t0);
      else await sleep(10);
    }
    const rssAtAnswerMb = rssMb(proc.pid!);
    // main.ts logs (JSON lines on stderr, NODE_ENV=production) "Identity gateway listening on <url>" and
    // the file that holds the administrator token: "Administrator token (…): written to <DATA_DIR>/admin-token".
    const tokenFile = /"Administrator token [^\n]*?: written to ([^"\n]+)"/;
    while (!tokenFile.test(stderr)) {
      if (gone() || performance.now() - t0 > 70_000) throw failed('named no administrator token file');
      await sleep(10);
    }
    const url = /listening on (http[^\s"]+)/.exec(stderr)![1]!;
    if (!url.startsWith(origin)) throw new Error(`the gateway listens on ${url}, not on ${origin}`);
    const target = { url, adminToken: readFileSync(tokenFile.exec(stderr)![1]!, 'utf8').trim() };
    let failures = 0;
    let sample: string | undefined;
    for (let i = 0; i < ME_REQUESTS; i++) {
      await graphql(target, OPS.me).catch((e) => (failures++, (sample ??= String(e).slice(0, 300))));
    }
    return { kind, ms, rssAtAnswerMb, rssAfterMeMb: rssMb(proc.pid!), failures, ...(sample ? { sample } : {}) };
  } finally {
    if (!gone()) proc.kill('SIGTERM');
    const timer = setTimeout(kill, 15_000);
    await exited;
    clearTimeout(timer);
    process.off('exit', kill);
  }
}

/** Every folder size in turn (`sizes`, default: SCALE_USERS' for the run): load, then the three starts. */
export async function runScale(
  root: string,
  launch: Launch,
  smoke: boolean,
  log: (line: string) => void,
  sizes?: number[],
): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  for (const users of sizes ?? SCALE_USERS[smoke ? 'smoke' : 'full']) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
    const dataDir = path.join(dir, 'data');
    try {
      let loadSeconds: number | undefined;
      if (users > 0) {
        log(`scale: bulk-loading ${users} users`);
        const t0 = performance.now();
        await bulkLoadUsers({
          dataDir,
          users,
          onProgress: (n) => n % 200_000 === 0 && log(`scale: ${n} users, ${((performance.now() - t0) / 1000).toFixed(0)} s`),
        });
        loadSeconds = Math.round((performance.now() - t0) / 100) / 10;
      }
      const row: ScaleRow = { users, loadSeconds, databaseMb: users > 0 ? folderMb(dataDir) : 0, starts: [] };
      for (const kind of ['first', 'restart', 'restart'] as const) {
        const s = await start(root, launch, dataDir, kind);
        row.starts.push(s);
        log(
          `scale: ${users} users, ${kind} start: ${s.ms} ms to the first answer, RSS ${s.rssAtAnswerMb} MB then, ${s.rssAfterMeMb} MB after ${ME_REQUESTS} me` +
            (s.failures ? `; ${s.failures} me failed, e.g. ${s.sample}` : ''),
        );
      }
      rows.push(row);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

/** The slowest start and the largest RSS of a folder: what the targets are held to. */
export const worst = (row: ScaleRow) => ({
  ms: Math.max(...row.starts.map((s) => s.ms)),
  rssMb: Math.max(...row.starts.flatMap((s) => [s.rssAtAnswerMb, s.rssAfterMeMb])),
});

export function scaleTable(rows: ScaleRow[]): string {
  const head = [
    'users',
    'bulk load s',
    'database MB',
    'start ms: first',
    'restarts',
    `RSS MB at the first answer: first, restarts`,
    `after ${ME_REQUESTS} me`,
    'me failures',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---:').join('|')}|`];
  for (const r of rows) {
    const [first, ...restarts] = r.starts;
    const list = (f: (s: Start) => number) => restarts.map(f).join(', ');
    lines.push(
      `| ${[
        String(r.users),
        r.loadSeconds === undefined ? '-' : r.loadSeconds.toFixed(1),
        r.users ? r.databaseMb.toFixed(0) : '-',
        String(first!.ms),
        list((s) => s.ms),
        `${first!.rssAtAnswerMb.toFixed(0)}; ${list((s) => Math.round(s.rssAtAnswerMb))}`,
        `${first!.rssAfterMeMb.toFixed(0)}; ${list((s) => Math.round(s.rssAfterMeMb))}`,
        String(r.starts.reduce((n, s) => n + s.failures, 0)),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
