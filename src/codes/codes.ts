// Verification-code service (docs/architecture.md, Persistence): issues CSPRNG codes and
// keeps only their HMAC in the CodeStore.
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { CodeChannel, CodeStore } from './port.ts';

export type VerifyResult = 'ok' | 'wrong' | 'missing' | 'address-changed';

export interface CodeServiceOptions {
  store: CodeStore;
  hmacKey: string | Buffer;
  ttlSeconds: number;
  maxAttempts: number;
  length?: number;
}

/** Takes back an issue or a clear (CodeStore.restore): resolves once done; rejects only when the store could not be reached. */
export type Undo = () => Promise<void>;

export interface CodeService {
  issue(userId: string, channel: CodeChannel, address: string): Promise<string>;
  /**
   * Issues like issue, with the undo for when what the code is for could not be written:
   * it puts back the code pending before, unless another request has replaced it since.
   */
  issueUndoable(userId: string, channel: CodeChannel, address: string): Promise<{ code: string; undo: Undo }>;
  verify(userId: string, channel: CodeChannel, code: string, currentAddress: string): Promise<VerifyResult>;
  /**
   * Verifies like verify, with the undo for when what the code confirms could not be written:
   * it makes the code pending again (its attempts and lifetime as they were), unless another
   * request has issued or cleared one since. When the store's answer is lost (it timed out), the
   * match, if it happened, is taken back before the error is thrown.
   */
  verifyUndoable(userId: string, channel: CodeChannel, code: string, currentAddress: string): Promise<{ result: VerifyResult; undo: Undo }>;
  /** Voids any pending code; the undo puts it back (as issueUndoable's). */
  clear(userId: string, channel: CodeChannel): Promise<Undo>;
}

/**
 * Runs `write` (a mutation's append); when it throws, runs the undos of the codes issued
 * or cleared for it, last first, then rethrows: an error answered means nothing changed.
 * An undo that fails (the code store is down) is swallowed, as is its error's text: the
 * mutation's own error is the answer, and a code left behind is no worse than before
 * (the code the answer would have carried was never handed out).
 */
export async function undoIfThrows<T>(undos: readonly (Undo | null | undefined)[], write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    for (const undo of [...undos].reverse()) await undo?.().catch(() => {});
    throw err;
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function createCodeService(options: CodeServiceOptions): CodeService {
  const { store, hmacKey, ttlSeconds, maxAttempts, length = 6 } = options;
  const hash = (userId: string, channel: CodeChannel, code: string) =>
    createHmac('sha256', hmacKey).update(`${userId}|${channel}|${code}`).digest('hex');

  /**
   * A put, clear or check named by a token made here, and its undo. When it fails its undo is
   * sent behind it: a stalled Redis may still run it after its caller was answered UNAVAILABLE
   * (a put or clear would then void the code the user was sent before, a check consume it).
   */
  async function undoable<T>(
    userId: string,
    channel: CodeChannel,
    change: (token: string) => Promise<T>,
  ): Promise<{ value: T; undo: () => Promise<void> }> {
    const token = randomBytes(12).toString('hex');
    const undo = () => store.restore(userId, channel, token).then(() => {});
    try {
      return { value: await change(token), undo };
    } catch (err) {
      await undo().catch(() => {});
      throw err;
    }
  }

  const issueUndoable: CodeService['issueUndoable'] = async (userId, channel, address) => {
    let code = '';
    for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    const { undo } = await undoable(userId, channel, (token) =>
      store.put(userId, channel, { hash: hash(userId, channel, code), address }, ttlSeconds, token),
    );
    return { code, undo };
  };

  async function verify(userId: string, channel: CodeChannel, code: string, currentAddress: string, token?: string): Promise<VerifyResult> {
    const result = await store.check(userId, channel, hash(userId, channel, code.trim().toUpperCase()), maxAttempts, token);
    if (result.status !== 'ok') return result.status;
    // The store has consumed the code by now. That is deliberate: once the
    // address has changed this code can never become valid again. The store
    // only reveals the address on a match, so a wrong code for a changed
    // address is still 'wrong' (and counts an attempt).
    return result.address === currentAddress ? 'ok' : 'address-changed';
  }

  return {
    async issue(userId, channel, address) {
      return (await issueUndoable(userId, channel, address)).code;
    },

    issueUndoable,

    verify,

    async verifyUndoable(userId, channel, code, currentAddress) {
      const { value: result, undo } = await undoable(userId, channel, (token) => verify(userId, channel, code, currentAddress, token));
      return { result, undo };
    },

    clear: async (userId, channel) => (await undoable(userId, channel, (token) => store.clear(userId, channel, token))).undo,
  };
}
