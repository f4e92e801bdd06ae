// The data folder holds the embedded event log (password hashes, emails, phones)
// and the quick start's keys: readable by the gateway's own user only.
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Creates the folder owner-only (mkdir's mode is cut by the umask, so it is set again). */
export async function makeDataDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await chmod(dir, DIR_MODE);
}

/**
 * At start: a folder written by an older version, or by hand, gets owner-only
 * modes back, the folder and everything in it. Returns the paths corrected.
 */
export async function restrictDataDir(dir: string): Promise<string[]> {
  const corrected: string[] = [];
  const restrict = async (target: string, mode: number) => {
    if (((await stat(target)).mode & 0o777) === mode) return;
    await chmod(target, mode);
    corrected.push(target);
  };
  try {
    await restrict(dir, DIR_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return corrected;
    throw err;
  }
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isSymbolicLink()) continue;
    const target = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) await restrict(target, DIR_MODE);
    else if (entry.isFile()) await restrict(target, FILE_MODE);
  }
  return corrected;
}
