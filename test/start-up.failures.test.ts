// A start that cannot succeed, as a new user meets it: `node --import tsx src/main.ts` (what
// `npm start` runs) with one bad setting. It exits 1 with one line on stderr that names the
// variable and the address it tried (credentials masked), and no stack trace. MongoDB is
// waited for MONGODB_START_TIMEOUT_MS (and used when it comes up within it).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { faultyProxy, freePort } from './support/net.ts';
import { describeWith } from './support/servers.ts';
import { TEST_DEFAULTS } from './support/test-defaults.ts';

const root = path.resolve(import.meta.dirname, '..');
/** The cap on one start: far beyond what a failing start takes (a few seconds); a start that never ends fails here. */
const GIVE_UP_MS = 120_000;
const FAILED = /^Identity gateway cannot start: /;

interface Run {
  stdout: string[];
  stderr: string[];
  /** The exit code, or the signal that ended it ('SIGKILL': it ran past GIVE_UP_MS). */
  exited: Promise<number | string>;
  /** Resolves once a stderr line matches (or rejects when the process is gone first). */
  stderrLine(pattern: RegExp): Promise<string>;
  stop(): void;
}

const dataDirs: string[] = [];
afterAll(() => dataDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function startMain(env: Record<string, string>): Run {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'start-up-'));
  dataDirs.push(dataDir);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...TEST_DEFAULTS,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => stdout.push(line));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    for (const w of waiting.filter((w) => w.pattern.test(line))) w.resolve(line);
  });
  const giveUp = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(giveUp);
      resolve(code ?? signal ?? -1);
    }),
  );
  return {
    stdout,
    stderr,
    exited,
    stderrLine: (pattern) =>
      Promise.race([
        new Promise<string>((resolve) => waiting.push({ pattern, resolve })),
        exited.then((code) => Promise.reject(new Error(`exited (${code}) before a line matched ${pattern}:\n${stderr.join('\n')}`))),
      ]),
    stop: () => child.kill('SIGTERM'),
  };
}

/** Exit 1, exactly one failure line holding every one of `expected`, no stack line anywhere, no `secret`. */
async function expectOneLineFailure(run: Run, expected: string[], secret?: string) {
  const code = await run.exited;
  const all = [...run.stdout, ...run.stderr].join('\n');
  expect(code, all).toBe(1);
  const lines = run.stderr.filter((l) => FAILED.test(l));
  expect(lines, all).toHaveLength(1);
  for (const part of expected) expect(lines[0]).toContain(part);
  expect(all).not.toMatch(/^\s+at /m);
  if (secret) expect(all).not.toContain(secret);
  return lines[0]!;
}

/** A loopback port nothing listens on. */
const closedPort = () => freePort();

// Each start is cut at GIVE_UP_MS: the tests' own deadlines lie beyond, so a start that hangs fails on what it printed.
describe('a start that cannot succeed says why in one line and exits 1', { timeout: 4 * GIVE_UP_MS }, () => {
  it('a setting config.ts refuses: its message only', async () => {
    const run = startMain({ BCRYPT_COST: 'eleven' });
    await expectOneLineFailure(run, ['BCRYPT_COST', '"eleven"']);
    // Nothing else was started, so nothing else was said.
    expect(run.stderr).toHaveLength(1);
    const tls = startMain({ TLS_CERT_FILE: '/nonexistent/cert.pem' });
    await expectOneLineFailure(tls, ['TLS_CERT_FILE', 'TLS_KEY_FILE']);
    const manifest = startMain({ TRUSTED_DOCUMENTS: '/nonexistent/persisted-documents.json' });
    await expectOneLineFailure(manifest, ['TRUSTED_DOCUMENTS', '/nonexistent/persisted-documents.json', 'cannot be read']);
  });

  it('an unreachable Redis: REDIS_URL and its address, the password masked', async () => {
    const port = await closedPort();
    const run = startMain({ REDIS_URL: `redis://gateway:hunter2@127.0.0.1:${port}` });
    const line = await expectOneLineFailure(run, ['REDIS_URL', `127.0.0.1:${port}`], 'hunter2');
    expect(line).toMatch(/ECONNREFUSED/);
  });

  it('an unparsable MONGODB_URL: the variable and what it holds, the password masked', async () => {
    await expectOneLineFailure(startMain({ MONGODB_URL: 'notaurl' }), ['MONGODB_URL', 'notaurl']);
    await expectOneLineFailure(startMain({ MONGODB_URL: 'mongo://admin:hunter2@db.example' }), ['MONGODB_URL', 'db.example'], 'hunter2');
    // The scheme is right, the rest is not: the driver's own words, on the same line.
    await expectOneLineFailure(
      startMain({ MONGODB_URL: 'mongodb://admin:hunter2@127.0.0.1:notaport/' }),
      ['MONGODB_URL', '127.0.0.1:notaport'],
      'hunter2',
    );
  });

  it('an unreachable MongoDB: retried for MONGODB_START_TIMEOUT_MS, then MONGODB_URL and its address', async () => {
    const port = await closedPort();
    const run = startMain({ MONGODB_URL: `mongodb://admin:hunter2@127.0.0.1:${port}/`, MONGODB_START_TIMEOUT_MS: '2000' });
    const line = await expectOneLineFailure(run, ['MONGODB_URL', `127.0.0.1:${port}`, 'MONGODB_START_TIMEOUT_MS'], 'hunter2');
    expect(line).toMatch(/ECONNREFUSED/);
    expect([...run.stdout, ...run.stderr].join('\n')).not.toMatch(/listening/);
  });

  it('a port in use: PORT and HOST', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expectOneLineFailure(startMain({ PORT: String(port) }), [`PORT ${port}`, 'HOST 127.0.0.1', 'EADDRINUSE']);
    } finally {
      taken.close();
    }
  });
});

describeWith('mongo', 'a MongoDB that comes up while the start waits for it', (mongoUrl) => {
  it(
    'is used: the gateway starts once it answers',
    async () => {
      // Not listening yet: MongoDB is "down" until the gateway has tried it once. (The node-id lease
      // in MongoDB must come back too: its client used to stay dead after a failed first connect.)
      const proxy = await faultyProxy(mongoUrl);
      const run = startMain({ MONGODB_URL: proxy.url, MONGODB_DB: `start_wait_${Date.now()}`, MONGODB_START_TIMEOUT_MS: '600000' });
      try {
        await run.stderrLine(/store unreachable at start; retrying/);
        await proxy.up();
        const listening = /listening on http:\/\/127\.0\.0\.1:\d+\/graphql/;
        try {
          await expect.poll(() => run.stderr.join('\n'), { timeout: GIVE_UP_MS, interval: 200 }).toMatch(listening);
        } catch (err) {
          throw new Error(`${(err as Error).message}\nstderr:\n${run.stderr.join('\n')}`);
        }
        expect(run.stderr.filter((l) => FAILED.test(l))).toEqual([]);
      } finally {
        run.stop();
        await run.exited;
        await proxy.down();
      }
    },
    3 * GIVE_UP_MS,
  );
});
