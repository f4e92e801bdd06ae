// `npm run token -- <userId>`: no options (a flag is a mistake, not a user id), a token only for a
// user the configured store holds, and that token accepted by the gateway on the same data folder.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnGateway } from './support/child-gateway.ts';
import { startGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';

const root = path.resolve(import.meta.dirname, '..');
const JWT = /^ey[\w-]+\.[\w-]+\.[\w-]+\n$/;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run --silent token -- ...args` with this environment (no JWKS_URL, MONGODB_URL unless given). */
async function token(args: string[], env: Record<string, string>): Promise<Run> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  try {
    const { stdout, stderr } = await promisify(execFile)('npm', ['run', '--silent', 'token', '--', ...args], {
      cwd: root,
      env: { ...base, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** `{ me { id } }` with the token, from the gateway at url. */
async function me(url: string, bearer: string): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query: '{ me { id } }' }),
  });
  return ((await res.json()) as { data?: unknown }).data;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const freshDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'token-cli-'));
  dirs.push(dir);
  return dir;
};

describe('npm run token', () => {
  for (const args of [['--help'], ['-h'], ['-x'], ['--', 'x'], [], ['a', 'b']]) {
    it(`refuses ${JSON.stringify(args)}: usage on stderr, exit 2, no token`, async () => {
      const run = await token(args, { DATA_DIR: freshDir() });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^usage: npm run token -- <userId>/);
      expect(run.stdout).toBe('');
    });
  }

  it('refuses with JWKS_URL: tokens come from the real issuer', async () => {
    const run = await token(['user-1'], { DATA_DIR: freshDir(), JWKS_URL: 'http://127.0.0.1:1/jwks.json' });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('JWKS_URL is set');
  });

  it('refuses an id with no user in a data folder that has no store yet, and creates nothing there', async () => {
    const dataDir = path.join(freshDir(), 'never-started');
    const run = await token(['385000000000000000'], { DATA_DIR: dataDir });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain(`no user 385000000000000000 in the embedded store in ${dataDir}`);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a real user: a token the gateway accepts; an unknown one refused; a running gateway: issued, said unchecked', async () => {
    const first = await spawnGateway();
    const dataDir = first.dataDir;
    dirs.push(dataDir);
    await first.stop({ keepData: true });

    const unknown = await token(['1'], { DATA_DIR: dataDir });
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain(`no user 1 in the embedded store in ${dataDir}`);

    const issued = await token([first.adminId], { DATA_DIR: dataDir });
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stdout).toMatch(JWT);
    expect(issued.stderr).toBe('');

    const gw = await spawnGateway({ dataDir });
    try {
      expect(await me(gw.url, issued.stdout.trim())).toEqual({ me: { id: first.adminId } });
      // The running gateway holds its database exclusively: the command cannot look, and says so.
      const unchecked = await token([first.adminId], { DATA_DIR: dataDir });
      expect(unchecked.code).toBe(0);
      expect(unchecked.stderr).toMatch(
        /cannot check that user \d+ exists in the embedded store .*a running gateway holds it.*token issued unchecked/,
      );
      expect(await me(gw.url, unchecked.stdout.trim())).toEqual({ me: { id: first.adminId } });
    } finally {
      await gw.stop({ keepData: true });
    }
  });
});

describeWith('mongo', 'npm run token on MongoDB', (mongoUrl) => {
  it('refuses an unknown id naming the database, issues one the gateway accepts for a real user', async () => {
    const dbName = `token_cli_${Date.now()}`;
    const gw = await startGateway({ env: { MONGODB_URL: mongoUrl, MONGODB_DB: dbName } });
    try {
      const env = { DATA_DIR: gw.config.dataDir, MONGODB_URL: mongoUrl, MONGODB_DB: dbName };
      const unknown = await token(['1'], env);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toContain(`no user 1 in MongoDB at `);
      expect(unknown.stderr).toContain(`(database ${dbName})`);

      const issued = await token([gw.adminId], env);
      expect(issued.code, issued.stderr).toBe(0);
      expect(issued.stdout).toMatch(JWT);
      expect(await me(gw.url, issued.stdout.trim())).toEqual({ me: { id: gw.adminId } });
    } finally {
      await gw.close();
    }
  });
});
