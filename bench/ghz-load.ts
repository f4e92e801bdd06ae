// The gRPC load generator: ghz (github.com/bojand/ghz, v0.120.0, native Go), in a process of its
// own rather than in the bench's node process (node's http2 client, bench/h2-load.ts before):
// its CPU is its own, read exactly and apart from the server's. It still shares the machine's
// cores with the server; per request it costs about what node's client did (0.30-0.33 ms against
// 0.30-0.34, back to back on grpc-durable at about 1,000 req/s). It mirrors how bench/run.ts drives
// autocannon: `connections` HTTP/2 connections with one worker each (-c N --connections N, one
// stream at a time per connection), for `duration` seconds; requests still in flight at the
// deadline are not counted (--duration-stop=ignore), as autocannon does not count them.
// ghz's --data is a Go text/template with .WorkerID and .RequestNumber (unique per request); the
// workers are named g0c0, g1c1, ... g{N-1}c{N-1} with -c N --connections N (ghzWorker), so a value
// that carries {{.WorkerID}} is the worker's own (bench/scenarios.ts: a user per connection, its id
// ending in the worker's name). Template functions (sprig) are off: ghz builds a template with
// their map for every request, which cost half as much again in client CPU per request (a
// per-worker value looked up with sprig's dict and get: 0.70 ms, the worker's name in the id:
// 0.45 ms, at about 500 req/s on a loaded machine).
// The method's types come from a --protoset written here from @zitadel/proto's descriptors: the
// servers measured need not serve reflection.
// ghz's own CPU time (user + system) is read from bash's `times` after it exits: the children's
// line, the exact rusage of the ghz process the kernel kept, at 1 ms resolution.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, toBinary, type DescFile } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { Measured } from './run.ts';
import { file_zitadel_management } from '@zitadel/proto/zitadel/management_pb.js';

export const GHZ_VERSION = 'v0.120.0';
export const GHZ_INSTALL = `go install github.com/bojand/ghz/cmd/ghz@${GHZ_VERSION}`;

/** One unary method called with a templated message (ghz's --data) and metadata. */
export interface GhzCall {
  /** package.Service/Method, e.g. zitadel.management.v1.ManagementService/UpdateHumanProfile. */
  call: string;
  /** The request message as JSON, a Go template (see workerTemplate). */
  data: string;
  metadata?: Record<string, string>;
}

export interface GhzLoadOptions {
  /** Origin of the server, e.g. http://127.0.0.1:4000 (h2c with prior knowledge). */
  origin: string;
  connections: number;
  /** Seconds. */
  duration: number;
  call: GhzCall;
  /** Per request, as autocannon's default of 10 s. */
  timeoutMs?: number;
}

/** The figures bench/run.ts reports for autocannon, in the same units (ms), with the gRPC status errors apart and ghz's own CPU (user + system) over the run. */
export type GhzLoadResult = Omit<Measured, 'graphqlErrors' | 'loader' | 'clientCpuMsPerRequest'> & {
  /** Answers whose gRPC status is not OK. */
  statusErrors: number;
  clientCpuMs: number;
};

/** ghz's JSON report (-O json), the fields read here; durations in ns. */
interface GhzReport {
  count: number;
  total: number;
  rps: number;
  slowest: number;
  latencyDistribution: { percentage: number; latency: number }[] | null;
  statusCodeDistribution: Record<string, number> | null;
  errorDistribution: Record<string, number> | null;
}

const executable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

let found: string | null | undefined;
/** ghz on PATH, else in $(go env GOPATH)/bin or ~/go/bin (where `go install` puts it); undefined when there is none. */
export function findGhz(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  const onPath = (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'ghz'));
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  const goBins = gopath.status === 0 ? gopath.stdout.trim().split(path.delimiter).filter(Boolean) : [];
  const candidates = [...onPath, ...goBins.map((d) => path.join(d, 'bin', 'ghz')), path.join(os.homedir(), 'go', 'bin', 'ghz')];
  found = candidates.find(executable) ?? null;
  return found ?? undefined;
}

let protoset: string | undefined;
/** A FileDescriptorSet of management.proto and every file it imports, dependencies first, written once per process. */
function managementProtoset(): string {
  if (protoset) return protoset;
  const files: DescFile[] = [];
  const seen = new Set<string>();
  const visit = (f: DescFile) => {
    if (seen.has(f.proto.name)) return;
    seen.add(f.proto.name);
    for (const d of f.dependencies) visit(d);
    files.push(f);
  };
  visit(file_zitadel_management);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-ghz-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  protoset = path.join(dir, 'management.protoset');
  writeFileSync(protoset, toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: files.map((f) => f.proto) })));
  return protoset;
}

/** The name of ghz's i-th worker (with -c N --connections N), what {{.WorkerID}} becomes in its requests. */
export const ghzWorker = (i: number) => `g${i}c${i}`;
/** In --data: the worker's name. */
export const WORKER_ID = '{{.WorkerID}}';
/** In --data: the request's number, unique within a run. */
export const REQUEST_NUMBER = '{{.RequestNumber}}';

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

/** Runs ghz to its end; throws when it cannot run or writes no report. */
export async function ghzLoad(opts: GhzLoadOptions): Promise<GhzLoadResult> {
  const ghz = findGhz();
  if (!ghz) throw new Error(`ghz not found (PATH, $(go env GOPATH)/bin, ~/go/bin): install it with \`${GHZ_INSTALL}\``);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-ghz-run-'));
  const report = path.join(dir, 'report.json');
  const args = [
    '--insecure',
    `--protoset=${managementProtoset()}`,
    `--call=${opts.call.call}`,
    `--data=${opts.call.data}`,
    ...(opts.call.metadata ? [`--metadata=${JSON.stringify(opts.call.metadata)}`] : []),
    `--concurrency=${opts.connections}`,
    `--connections=${opts.connections}`,
    `--duration=${opts.duration}s`,
    '--duration-stop=ignore',
    '--disable-template-functions',
    `--timeout=${(opts.timeoutMs ?? 10_000) / 1000}s`,
    '--format=json',
    `--output=${report}`,
    new URL(opts.origin).host,
  ];
  try {
    // bash's `times` prints the shell's CPU, then its children's (ghz, waited for): "0m1.234s 0m0.056s".
    const { code, stdout, stderr } = await run('bash', ['-c', '"$0" "$@"; rc=$?; times; exit $rc', ghz, ...args]);
    const children = stdout.trim().split('\n').at(-1) ?? '';
    const cpu = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(children);
    let parsed: GhzReport;
    try {
      parsed = JSON.parse(readFileSync(report, 'utf8'));
    } catch {
      throw new Error(`ghz exited with ${code} and wrote no report: ${stderr.slice(-1000)}`);
    }
    if (!cpu) throw new Error(`ghz: no CPU times from bash's times: ${JSON.stringify(stdout)}`);
    const clientCpuMs = (Number(cpu[1]) * 60 + Number(cpu[2]) + Number(cpu[3]) * 60 + Number(cpu[4])) * 1000;
    return toResult(parsed, clientCpuMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function toResult(r: GhzReport, clientCpuMs: number): GhzLoadResult {
  const pct = (p: number) => ms(r.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? 0);
  const statuses = r.statusCodeDistribution ?? {};
  const notOk = Object.entries(statuses).filter(([s]) => s !== 'OK');
  const firstError = Object.entries(r.errorDistribution ?? {})[0];
  return {
    requests: r.count,
    rps: Math.round(r.rps * 10) / 10,
    p50: pct(50),
    p99: pct(99),
    max: ms(r.slowest),
    non2xx: 0,
    errors: 0,
    timeouts: statuses.DeadlineExceeded ?? 0,
    statusErrors: notOk.reduce((n, [, c]) => n + c, 0),
    sample: firstError ? `${firstError[1]} × ${firstError[0]}` : notOk.length ? JSON.stringify(statuses) : undefined,
    clientCpuMs,
  };
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-8000)));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
