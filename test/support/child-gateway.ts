// Real processes for the HTTP edge tests: the gateway as the Docker image runs it, bundled from
// src/main.ts (scripts/bundle.mjs, once per test run by the global setup). Loopback only, free
// ports, temp folders.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { readResponse } from './net.ts';
import { TEST_DEFAULTS } from './test-defaults.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildGateway {
  /** http://127.0.0.1:<port>/graphql */
  url: string;
  /** http://127.0.0.1:<port> */
  base: string;
  adminId: string;
  adminToken: string;
  /** GET /metrics on its own port (METRICS_PORT), as the gateway printed it. */
  metricsUrl?: string;
  dataDir: string;
  child: ChildProcess;
  /** Log lines (stderr), as they come. */
  logs: string[];
  /** What it printed on stdout (nothing: the start banner is log lines on stderr), as it comes. */
  stdout: string[];
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** POST a GraphQL request. */
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: any; text: string }>;
  /** SIGTERM (unless gone), wait for the exit, remove the data folder unless kept. */
  stop(options?: { keepData?: boolean }): Promise<number | string>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Use this data folder (e.g. one holding the signing key another gateway made) instead of a new one. */
  dataDir?: string;
  startTimeoutMs?: number;
  /** The process's limit on open files (ulimit -n), for tests that run it out of descriptors. */
  maxOpenFiles?: number;
  /** Listen on this port instead of a free one (a gateway restarted where its clients look for it). */
  port?: number;
}

export async function spawnGateway(options: SpawnOptions = {}): Promise<ChildGateway> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'gw-child-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...TEST_DEFAULTS,
    LOG_LEVEL: 'info',
    ...options.env,
    DATA_DIR: dataDir,
    PORT: String(options.port ?? 0),
    HOST: '127.0.0.1',
  };
  // The gateway as built for production (bundled once for the run by the global setup).
  const args = [inject('gatewayBundle')];
  // prlimit execs the gateway: the child's pid is the gateway's own (its /proc/<pid> for RSS).
  const child = options.maxOpenFiles
    ? spawn('prlimit', [`--nofile=${options.maxOpenFiles}`, process.execPath, ...args], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const stderrLines = createInterface({ input: child.stderr! });
  stderrLines.on('line', (line) => logs.push(line));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));

  const out: string[] = [];
  const started = new Promise<{ url: string; adminId: string; adminToken: string; metricsUrl?: string }>((resolve, reject) => {
    let url = '';
    let metricsUrl: string | undefined;
    let adminId = '';
    const timer = setTimeout(
      () => reject(new Error(`gateway did not start:\n${out.join('\n')}\n${logs.slice(-20).join('\n')}`)),
      options.startTimeoutMs ?? 90_000,
    );
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${code}) while starting:\n${out.join('\n')}\n${logs.slice(-20).join('\n')}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => out.push(line));
    // The banner is log lines on stderr, JSON since stderr is no terminal here.
    stderrLines.on('line', (raw) => {
      const line = messageOf(raw);
      const listening = /listening on (http:\/\/\S+\/graphql)/.exec(line);
      if (listening) url = listening[1]!;
      const metrics = /^Metrics \(Prometheus\) on (\S+)/.exec(line);
      if (metrics) metricsUrl = metrics[1]!;
      const admin = /user id (\d+)/.exec(line);
      if (admin) adminId = admin[1]!;
      // stderr is not a terminal: the token is in the file this line names, never in the log.
      const tokenFile = /^Administrator token .*: written to (.+)$/.exec(line);
      if (tokenFile) {
        clearTimeout(timer);
        resolve({ url, adminId, adminToken: readFileSync(tokenFile[1]!, 'utf8').trim(), ...(metricsUrl && { metricsUrl }) });
      }
    });
  });
  let info: { url: string; adminId: string; adminToken: string; metricsUrl?: string };
  try {
    info = await started;
  } catch (err) {
    if (child.exitCode === null) child.kill('SIGKILL');
    throw err;
  }

  return {
    ...info,
    base: info.url.replace(/\/graphql$/, ''),
    dataDir,
    child,
    logs,
    stdout: out,
    exited,
    async post(body, headers = {}) {
      const res = await fetch(info.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${info.adminToken}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return readResponse(res);
    },
    async stop({ keepData = false } = {}) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('timeout'), 20_000))]);
      if (code === 'timeout') child.kill('SIGKILL');
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** The message of a JSON log line ('' for anything else). */
function messageOf(line: string): string {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
  } catch {
    return '';
  }
}
