// What `npm start` writes: readable lines for a person at a terminal, JSON lines for a pipe (a log
// collector, docker logs), and LOG_FORMAT overriding either. The terminal is a real pseudo-terminal
// (util-linux `script`, in Debian's essential bsdutils); the start banner is log lines on stderr.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_DEFAULTS } from './support/test-defaults.ts';

const root = path.resolve(import.meta.dirname, '..');
const ANSI = /\x1b\[[0-9;]*m/g;
/** pino-pretty's line: `[HH:MM:ss.l] LEVEL: message {fields}`. */
const READABLE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (DEBUG|INFO|WARN|ERROR): \S/;
/** The banner's last line, as either format words it. */
const BANNER_END = /Administrator token[^\n]*(?:written to [^\n]+\n|also in [^\n]+\n[^\n]+\n)/;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function environment(env: Record<string, string>): Record<string, string> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'log-format-'));
  dirs.push(dataDir);
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    SHELL: '/bin/sh',
    ...TEST_DEFAULTS,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  };
}

/**
 * Runs `npm start` until its banner ends, then stops it; resolves with its output lines. Under
 * `script` stdout and stderr are the one terminal; through pipes, stderr only (stdout must stay empty).
 */
function start(terminal: boolean, env: Record<string, string> = {}): Promise<{ lines: string[]; stdout: string }> {
  const child = terminal
    ? spawn('script', ['-qfec', 'exec npm start --silent', '/dev/null'], {
        cwd: root,
        env: environment(env),
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn('npm', ['start', '--silent'], { cwd: root, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  let stdout = '';
  let seen = false;
  return new Promise((resolve, reject) => {
    // Whatever happens, it is ended: `script` by its pty's hang-up, npm's group by a signal to it.
    const stop = () => (terminal ? child.kill('SIGTERM') : process.kill(-child.pid!, 'SIGTERM'));
    const giveUp = setTimeout(stop, 100_000);
    child.once('close', (code) => {
      clearTimeout(giveUp);
      if (seen) resolve({ lines: log.split('\n').filter((l) => l.trim() !== ''), stdout });
      else reject(new Error(`exited (${code}) before the banner ended:\n${log}${stdout}`));
    });
    const take = (c: Buffer) => {
      log += c.toString('utf8').replace(/\r/g, '').replace(ANSI, '');
      if (!seen && BANNER_END.test(log)) {
        seen = true;
        stop();
      }
    };
    if (terminal) child.stdout!.on('data', take);
    else {
      child.stderr!.on('data', take);
      child.stdout!.on('data', (c: Buffer) => (stdout += c));
    }
  });
}

const bannerOf = (lines: string[]) => lines.slice(0, lines.findIndex((l) => /Administrator token/.test(l)) + 1);

describe('npm start', () => {
  it('at a terminal: readable lines (a level word and the message), none of them JSON', async () => {
    const { lines } = await start(true);
    const banner = bannerOf(lines);
    expect(banner.some((l) => /INFO: Identity gateway listening on http:\/\/127\.0\.0\.1:\d+\/graphql/.test(l))).toBe(true);
    expect(banner.some((l) => /INFO: Storage: embedded, in /.test(l))).toBe(true);
    expect(banner.some((l) => /INFO: stores open /.test(l))).toBe(true);
    for (const line of banner) {
      expect(line).not.toMatch(/^\s*\{/);
      expect(line).toMatch(READABLE);
    }
  });

  it('through a pipe: JSON lines on stderr, banner included, nothing on stdout', async () => {
    const { lines, stdout } = await start(false);
    expect(stdout).toBe('');
    const parsed = bannerOf(lines).map((l) => JSON.parse(l) as { level: string; msg: string; time: string });
    expect(parsed.find((l) => l.msg.startsWith('Identity gateway listening on'))).toMatchObject({ level: 'info', url: expect.any(String) });
    expect(parsed.find((l) => l.msg.startsWith('Administrator token'))).toMatchObject({ file: expect.stringMatching(/admin-token$/) });
    for (const line of parsed) expect(Date.parse(line.time)).not.toBeNaN();
  });

  it('LOG_FORMAT=json at a terminal: JSON lines all the same', async () => {
    const { lines } = await start(true, { LOG_FORMAT: 'json' });
    const logLines = bannerOf(lines);
    expect(logLines.length).toBeGreaterThan(3);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('LOG_FORMAT=pretty through a pipe: readable lines', async () => {
    const { lines } = await start(false, { LOG_FORMAT: 'pretty' });
    const banner = bannerOf(lines);
    expect(banner.some((l) => /INFO: Administrator token .*: written to .*admin-token/.test(l))).toBe(true);
    for (const line of banner) expect(line).toMatch(READABLE);
  });
});
