// A Redis the test owns, for fault tests that stop and restart it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.ts';

/**
 * A redis-server of the test's own on a free port, which it can kill (SIGKILL) and
 * start again on the same port and data folder (with AOF, the data survives).
 */
export async function ownRedis(bin: string, { persistence = 'none' }: { persistence?: 'none' | 'aof' } = {}) {
  if (!bin)
    throw new Error('redis-server not found: these tests stop and restart a Redis of their own (install the Debian package redis-server)');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-own-'));
  let proc: ChildProcess | undefined;
  const up = async () => {
    const aof = persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...aof, '--dir', dir], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}`).then(
        () => true,
        (e) => e?.cause?.code !== 'ECONNREFUSED',
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const down = () =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  await up();
  return {
    url: `redis://127.0.0.1:${port}`,
    up,
    down,
    async close() {
      await down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
