// The bench's start-up table (bench/scale.ts) on a fresh clone: `npm run bench` must build
// everything it runs (dist/gateway comes from the bundle step, not from tsc) and a gateway
// that fails to start must fail the bench loudly, not leave it waiting on an exit that has
// already happened (it hung, or exited 0 having printed nothing).
//
// The fresh clone is a copy of the files git knows (tracked, and new ones not ignored) in a
// temp folder, with no dist/ and this checkout's node_modules linked in: what `git clone`
// gives, with the working tree's changes.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../bench/scale.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Runs `node --import tsx <args>` in `cwd`; resolves with its exit code and everything it printed. */
function run(cwd: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    child.once('close', (code) => resolve({ code, out }));
  });
}

describe('the bench start-up table on a fresh clone', () => {
  let clone: string;

  beforeAll(() => {
    clone = mkdtempSync(path.join(tmpdir(), 'bench-clone-'));
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f && existsSync(path.join(root, f)));
    for (const f of files) {
      mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
      cpSync(path.join(root, f), path.join(clone, f));
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
    expect(existsSync(path.join(clone, 'dist'))).toBe(false);
  });
  afterAll(() => clone && rmSync(clone, { recursive: true, force: true }));

  // The empty folder only: the start-up step is what this is about (bench:smoke in CI loads
  // 10,000 users too).
  const startUp = ['bench/run.ts', '--smoke', '--only', 'scale', '--scale-users', '0'];

  it('builds what it starts, then measures every start (npm run bench -- --smoke --only scale)', async () => {
    const { code, out } = await run(clone, startUp);
    expect(code, out.slice(-3000)).toBe(0);
    expect(existsSync(path.join(clone, 'dist/gateway/main.js'))).toBe(true);
    // The folder's row: its first start and two restarts, each timed, and no `me` failed.
    expect(out).toMatch(/^\| 0 \| - \| - \| \d+ \| \d+, \d+ \| .* \| 0 \|$/m);
  }, 600_000);

  it('a gateway that fails to start fails the bench, with its last output', async () => {
    // The gateway refuses this setting at start (config.ts is strict) and exits at once.
    const { code, out } = await run(clone, startUp, { BCRYPT_COST: 'eleven' });
    expect(code, out.slice(-3000)).toBe(1);
    expect(out).toMatch(/FAILED: .*the gateway \(dist\/gateway\/main\.js\) exited with 1 before it answered/);
    expect(out).toContain('BCRYPT_COST');
  }, 600_000);
});

describe("bench/scale.ts's start on its own", () => {
  it('rejects, with the output, when the script is missing (it waited forever for an exit already gone)', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-start-'));
    try {
      const failed = start(root, { env: {}, flags: [] }, dataDir, 'first', 'dist/no-such-gateway.js');
      await expect(failed).rejects.toThrow(/exited with 1 before it answered; its last output:\n[^]*Cannot find module/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
