// OIDC client secrets at rest (docs/architecture.md, Persistence): AES-256-GCM with a configured
// 32-byte key, a random 12-byte IV per encryption and the 16-byte auth tag. The
// additional authenticated data is the IDP id, so a ciphertext copied to another
// IDP does not decrypt there.
//
// Stored form: `v1:<iv>:<tag>:<data>`, each part standard base64. The object form
// {iv, tag, data} (same encodings) is accepted when opening, too.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { isStandardBase64 } from './base64.ts';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';

export interface SealedParts {
  iv: string;
  tag: string;
  data: string;
}

/** A sealed secret as stored in events and state. */
export type Sealed = string;

/** The secret could not be opened: wrong key, wrong IDP, or tampered/garbled ciphertext. */
export class SecretBoxError extends Error {
  constructor(message = 'the secret cannot be decrypted') {
    super(message);
    this.name = 'SecretBoxError';
  }
}

function checkKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new RangeError(`the key must be ${KEY_BYTES} bytes`);
}

const aad = (idpId: string) => Buffer.from(idpId, 'utf8');

/** Encrypts `secret` for the IDP `idpId`; two calls with the same input give different results. */
export function seal(key: Buffer, idpId: string, secret: string): Sealed {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(idpId));
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64'), tag.toString('base64'), data.toString('base64')].join(':');
}

function decode(part: unknown, bytes?: number): Buffer {
  if (typeof part !== 'string' || !isStandardBase64(part)) throw new SecretBoxError('malformed sealed secret');
  const buf = Buffer.from(part, 'base64');
  if (bytes !== undefined && buf.length !== bytes) throw new SecretBoxError('malformed sealed secret');
  return buf;
}

/** The parts of a sealed secret in either stored form. */
export function partsOf(sealed: Sealed | SealedParts): SealedParts {
  if (typeof sealed === 'string') {
    const pieces = sealed.split(':');
    if (pieces.length !== 4 || pieces[0] !== VERSION) throw new SecretBoxError('unknown sealed secret format');
    return { iv: pieces[1]!, tag: pieces[2]!, data: pieces[3]! };
  }
  if (!sealed || typeof sealed !== 'object') throw new SecretBoxError('unknown sealed secret format');
  return { iv: sealed.iv, tag: sealed.tag, data: sealed.data };
}

/** Decrypts a secret sealed for `idpId`; throws SecretBoxError when it does not authenticate. */
export function open(key: Buffer, idpId: string, sealed: Sealed | SealedParts): string {
  checkKey(key);
  const parts = partsOf(sealed);
  const iv = decode(parts.iv, IV_BYTES);
  const tag = decode(parts.tag, TAG_BYTES);
  const data = decode(parts.data);
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(idpId));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError();
  }
}
