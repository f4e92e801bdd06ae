// The data folder (event log with password hashes, emails and phones; the local
// keys) is owner-only: at creation, and corrected at start when it was not.
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalTokenSigner } from '../src/auth/tokens.ts';
import { bootstrap } from '../src/commands/bootstrap.ts';
import { systemContext } from '../src/commands/request-context.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { createGateway } from '../src/server.ts';

const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

/** Every entry below dir (dir included) with its mode. */
async function modes(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = { '.': await modeOf(dir) };
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(e.parentPath, e.name);
    out[path.relative(dir, full)] = await modeOf(full);
  }
  return out;
}

/** Starts the gateway on dataDir as `npm start` would: stores, administrator, a signed token, one write. */
async function runGateway(dataDir: string) {
  const logs: string[] = [];
  const config = loadConfig({ BCRYPT_COST: '4', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
  const gateway = await createGateway(config, { logger: createLogger('debug', (l) => logs.push(l)) });
  try {
    await bootstrap(systemContext(gateway.deps));
    await createLocalTokenSigner(config).sign('someone');
  } finally {
    await gateway.close();
  }
  return logs;
}

describe('data folder modes', () => {
  let root = '';
  let previousUmask = 0;
  beforeEach(() => {
    previousUmask = process.umask(0o022); // the usual umask, which made 0755 folders and 0644 files
  });
  afterEach(async () => {
    process.umask(previousUmask);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('creates the folder 0700 and every file in it 0600', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'modes-'));
    const dataDir = path.join(root, 'data');
    await runGateway(dataDir);
    const found = await modes(dataDir);
    expect(Object.keys(found)).toEqual(expect.arrayContaining(['.', 'events.sqlite', 'signing-key.json', 'code-hmac.key']));
    for (const [name, mode] of Object.entries(found)) expect([name, mode.toString(8)]).toEqual([name, name === '.' ? '700' : '600']);
  });

  it('corrects a folder and files that others could read, at start, and says so', async () => {
    root = await mkdtemp(path.join(tmpdir(), 'modes-'));
    const dataDir = path.join(root, 'data');
    await mkdir(path.join(dataDir, 'old'), { recursive: true });
    await writeFile(path.join(dataDir, 'events.log'), '');
    await writeFile(path.join(dataDir, 'old', 'notes.txt'), 'left by hand');
    await chmod(dataDir, 0o755);
    await chmod(path.join(dataDir, 'old'), 0o755);
    await chmod(path.join(dataDir, 'events.log'), 0o644);
    await chmod(path.join(dataDir, 'old', 'notes.txt'), 0o644);

    const logs = await runGateway(dataDir);
    const found = await modes(dataDir);
    // The old log is imported into the SQLite store at start and kept renamed, owner-only.
    expect(found).toMatchObject({ '.': 0o700, old: 0o700, 'old/notes.txt': 0o600, 'events.log.imported': 0o600, 'events.sqlite': 0o600 });
    for (const [name, mode] of Object.entries(found)) expect(mode & 0o077, name).toBe(0);
    expect(logs.some((l) => l.includes('data folder was readable by others'))).toBe(true);
  });
});
