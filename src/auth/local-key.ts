// Quick-start key material kept in the data folder (docs/authentication.md).
import { randomBytes } from 'node:crypto';
import { readFile, writeFile, link, unlink, chmod } from 'node:fs/promises';
import path from 'node:path';
import { FILE_MODE, makeDataDir } from '../data-dir.ts';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

export const LOCAL_KEY_ALG = 'ES256';
const KEY_FILE = 'signing-key.json';

export interface LocalKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
  kid: string;
}

/**
 * Returns the file's content, creating it with `create()` if absent. The new file is
 * written to a temp name and hard-linked into place, so a crash never leaves a partial
 * file and two concurrent first starts agree on one winner (link fails with EEXIST).
 */
async function readOrCreate(file: string, create: () => Promise<string>): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await makeDataDir(path.dirname(file));
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, await create(), { mode: FILE_MODE, flag: 'wx' });
  try {
    await chmod(tmp, FILE_MODE);
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  return readFile(file, 'utf8');
}

export async function loadOrCreateLocalKey(dataDir: string): Promise<LocalKey> {
  const file = path.join(dataDir, KEY_FILE);
  const text = await readOrCreate(file, async () => {
    const { privateKey } = await generateKeyPair(LOCAL_KEY_ALG, { extractable: true });
    const jwk = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint(jwk);
    return `${JSON.stringify({ ...jwk, kid, alg: LOCAL_KEY_ALG, use: 'sig' }, null, 2)}\n`;
  });
  let stored: JWK;
  try {
    stored = JSON.parse(text) as JWK;
  } catch {
    throw new Error(`${file} is not valid JSON; delete it to generate a new signing key`);
  }
  if (stored.kty !== 'EC' || stored.crv !== 'P-256' || !stored.d || !stored.x || !stored.y) {
    throw new Error(`${file} does not hold a P-256 private JWK; delete it to generate a new signing key`);
  }
  const { kty, crv, x, y } = stored;
  const publicJwk: JWK = { kty, crv, x, y };
  const kid = stored.kid ?? (await calculateJwkThumbprint(publicJwk));
  Object.assign(publicJwk, { kid, alg: LOCAL_KEY_ALG, use: 'sig' });
  const privateKey = (await importJWK({ kty, crv, x, y, d: stored.d }, LOCAL_KEY_ALG)) as CryptoKey;
  const publicKey = (await importJWK({ kty, crv, x, y }, LOCAL_KEY_ALG)) as CryptoKey;
  return { privateKey, publicKey, publicJwk, kid };
}

/** A random secret kept hex-encoded in `<dataDir>/<name>`, e.g. the code HMAC key. */
export async function loadOrCreateSecret(dataDir: string, name: string, bytes = 32): Promise<Buffer> {
  if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) throw new Error(`invalid secret file name: ${name}`);
  const file = path.join(dataDir, name);
  const text = await readOrCreate(file, async () => `${randomBytes(bytes).toString('hex')}\n`);
  const hex = text.trim();
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) throw new Error(`${file} does not hold a hex secret; delete it to generate one`);
  return Buffer.from(hex, 'hex');
}
