// The administrator token `npm start` mints (no JWKS_URL): written to DATA_DIR/admin-token
// (0600) on every start; shown on stderr only to a person at a terminal outside production.
// stderr that is a pipe (a log collector, docker logs, this test) and NODE_ENV=production
// get the file's path instead, so the token never lands in a shipped log.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnGateway } from './support/child-gateway.ts';
import { TEST_DEFAULTS } from './support/test-defaults.ts';

const root = path.resolve(import.meta.dirname, '..');
const JWT = /ey[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/;

describe('the administrator token of a start', () => {
  for (const [name, env] of [
    ['NODE_ENV=production', { NODE_ENV: 'production' }],
    ['quick start, stderr not a terminal', {}],
  ] as const) {
    it(`${name}: in DATA_DIR/admin-token (0600), its path in the log, the token in no output`, async () => {
      const gw = await spawnGateway({ env });
      try {
        const file = path.join(gw.dataDir, 'admin-token');
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(readFileSync(file, 'utf8').trim()).toBe(gw.adminToken);
        // spawnGateway read it from the file that line names; stdout and the logs never held it.
        expect(gw.logs.join('\n')).toContain(`: written to ${file}`);
        expect(gw.stdout.join('\n')).not.toMatch(JWT);
        expect(gw.logs.join('\n')).not.toMatch(JWT);
        const me = await gw.post({ query: '{ me { id } }' });
        expect(me.json.data).toEqual({ me: { id: gw.adminId } });
      } finally {
        await gw.stop();
      }
    });
  }

  it('the next start replaces the file (atomically: written beside it and renamed), owner-only again', async () => {
    const first = await spawnGateway();
    const dataDir = first.dataDir;
    await first.stop({ keepData: true });
    try {
      const second = await spawnGateway({ dataDir });
      try {
        expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim()).toBe(second.adminToken);
        expect(statSync(path.join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * main.ts under a pseudo-terminal (util-linux `script`, Debian's essential bsdutils): what a
 * person running `npm start` sees. Resolves, once it is stopped, with what it printed up to the end of the banner.
 */
function startOnTerminal(env: Record<string, string>, dataDir: string): Promise<string> {
  const command = `exec ${JSON.stringify(process.execPath)} --import tsx src/main.ts`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SHELL: '/bin/sh',
      ...TEST_DEFAULTS,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise<string>((resolve, reject) => {
    // Whatever happens, `script` is ended (and with the pty's end the gateway gets SIGHUP).
    const giveUp = setTimeout(() => child.kill('SIGTERM'), 100_000);
    let seen = false;
    child.once('close', (code) => {
      clearTimeout(giveUp);
      if (seen) resolve(out);
      else reject(new Error(`script exited (${code}) before the banner:\n${out}`));
    });
    child.stdout.on('data', (c: Buffer) => {
      // Carriage returns of the terminal, and the colours of the readable log lines, left out.
      out += c
        .toString('utf8')
        .replace(/\r/g, '')
        .replace(/\x1b\[[0-9;]*m/g, '');
      // The banner's last line: the file's path, or (at a terminal outside production) the token after it.
      if (!seen && /Administrator token[^\n]*(?:written to [^\n]+\n|:\n[^\n]+\n)/.test(out)) {
        seen = true;
        child.kill('SIGTERM');
      }
    });
  });
}

describe('at a terminal', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const dataDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'token-tty-'));
    dirs.push(dir);
    return dir;
  };

  it("quick start shows the token (the newcomer's first minute) and names the file", async () => {
    const dir = dataDir();
    const out = await startOnTerminal({}, dir);
    const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
    expect(out).toContain(`also in ${path.join(dir, 'admin-token')}:\n${token}\n`);
  });

  it('NODE_ENV=production shows only the file', async () => {
    const dir = dataDir();
    const out = await startOnTerminal({ NODE_ENV: 'production' }, dir);
    expect(out).toContain(`: written to ${path.join(dir, 'admin-token')}`);
    expect(out).not.toMatch(JWT);
    expect(existsSync(path.join(dir, 'admin-token'))).toBe(true);
  });
});
