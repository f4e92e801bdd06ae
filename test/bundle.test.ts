// The production build (npm run build: scripts/bundle.mjs → dist/gateway) run as `npm run
// start:prod` runs it: it starts, serves GraphQL, loads its lazily split parts (the wire API)
// and starts its SQLite worker from beside the bundle. Built here, so it is the current code.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/net.ts';

const root = path.resolve(import.meta.dirname, '..');
const startProd: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts['start:prod'];

describe('the production bundle, as start:prod runs it', () => {
  let child: ChildProcess | undefined;
  let dataDir: string;
  let origin: string;
  let token: string;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: root, stdio: 'pipe' });
    dataDir = mkdtempSync(path.join(tmpdir(), 'bundle-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    // "NAME=value … node <flags> dist/gateway/main.js"
    const words = startProd.split(/\s+/);
    const launchEnv = Object.fromEntries(words.slice(0, words.indexOf('node')).map((w) => w.split('=', 2)));
    child = spawn(process.execPath, words.slice(words.indexOf('node') + 1), {
      cwd: root,
      env: {
        ...process.env,
        ...launchEnv,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        MONGODB_URL: '',
        REDIS_URL: '',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The banner is log lines on stderr (JSON: not a terminal).
    const lines = createInterface({ input: child.stderr! });
    // NODE_ENV=production prints no token: it names the file (0600, in the data folder) that holds it.
    token = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        const file = /^Administrator token .*: written to (.+)$/.exec(messageOf(line));
        if (file) resolve(readFileSync(file[1]!, 'utf8').trim());
      });
      child!.once('exit', (code) => reject(new Error(`the bundle exited with ${code}`)));
    });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('was started from dist/gateway/main.js with the environment and V8 flags of start:prod', () => {
    expect(startProd).toMatch(/^([A-Z_]+=\w+ )*node (--[\w-]+=\d+ )+dist\/gateway\/main\.js$/);
    // The Dockerfile runs the same: its ENV holds start:prod's environment, its CMD the flags.
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const words = startProd.split(/\s+/);
    for (const assignment of words.slice(0, words.indexOf('node')))
      expect(dockerfile).toMatch(new RegExp(`^ENV .*\\b${assignment}\\b`, 'm'));
    expect(dockerfile).toContain(
      `CMD [${words
        .slice(words.indexOf('node'))
        .map((w) => JSON.stringify(w))
        .join(', ')}]`,
    );
  });

  it('answers GraphQL from its SQLite store (a worker beside the bundle) and a wire call (a chunk loaded at its first request)', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const me = await (
      await fetch(`${origin}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: '{ me { id username } }' }) })
    ).json();
    expect(me.data.me.username).toBeTruthy();
    const wire = await fetch(`${origin}/zitadel.auth.v1.AuthService/GetMyUser`, {
      method: 'POST',
      headers: { ...headers, 'connect-protocol-version': '1' },
      body: '{}',
    });
    expect(wire.status).toBe(200);
    expect((await wire.json()).user.id).toBe(me.data.me.id);
  });
});

/** The message of a JSON log line ('' for anything else). */
function messageOf(line: string): string {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
  } catch {
    return '';
  }
}
