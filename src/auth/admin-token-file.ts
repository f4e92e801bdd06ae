// The administrator token of the quick start's local key, kept in the data folder (as ZITADEL's
// first instance writes its machine key to a file) so that it never has to pass through a log:
// DATA_DIR/admin-token, owner-only like everything there (src/data-dir.ts). The folder already
// holds the signing key, which mints any token, so the file exposes nothing more.
import { randomBytes } from 'node:crypto';
import { chmod, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FILE_MODE, makeDataDir } from '../data-dir.ts';

export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * Writes the token to DATA_DIR/admin-token, replacing the last one atomically: written to a
 * temp name (0600 from the start) and renamed over it, so a reader never sees half a token.
 * Returns the file's path.
 */
export async function writeAdminTokenFile(dataDir: string, token: string): Promise<string> {
  await makeDataDir(dataDir);
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, `${token}\n`, { mode: FILE_MODE, flag: 'wx' });
    await chmod(tmp, FILE_MODE); // the mode given to writeFile is cut by the umask
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  return file;
}
