// Verification-code service (DESIGN.md section 4): issues CSPRNG codes and
// keeps only their HMAC in the CodeStore.
import { createHmac, randomInt } from 'node:crypto';
import type { CodeChannel, CodeStore } from './port.ts';

export type VerifyResult = 'ok' | 'wrong' | 'missing' | 'address-changed';

export interface CodeServiceOptions {
  store: CodeStore;
  hmacKey: string | Buffer;
  ttlSeconds: number;
  maxAttempts: number;
  length?: number;
}

export interface CodeService {
  issue(userId: string, channel: CodeChannel, address: string): Promise<string>;
  verify(userId: string, channel: CodeChannel, code: string, currentAddress: string): Promise<VerifyResult>;
  /** Puts back a code that verified when what it confirms could not be written (the store was down). */
  restore(userId: string, channel: CodeChannel, code: string, address: string): Promise<void>;
  /** Voids any pending code. */
  clear(userId: string, channel: CodeChannel): Promise<void>;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function createCodeService(options: CodeServiceOptions): CodeService {
  const { store, hmacKey, ttlSeconds, maxAttempts, length = 6 } = options;
  const hash = (userId: string, channel: CodeChannel, code: string) =>
    createHmac('sha256', hmacKey).update(`${userId}|${channel}|${code}`).digest('hex');

  return {
    async issue(userId, channel, address) {
      let code = '';
      for (let i = 0; i < length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
      await store.put(userId, channel, { hash: hash(userId, channel, code), address }, ttlSeconds);
      return code;
    },

    async verify(userId, channel, code, currentAddress) {
      const result = await store.check(userId, channel, hash(userId, channel, code.trim().toUpperCase()), maxAttempts);
      if (result.status !== 'ok') return result.status;
      // The store has consumed the code by now. That is deliberate: once the
      // address has changed this code can never become valid again. The store
      // only reveals the address on a match, so a wrong code for a changed
      // address is still 'wrong' (and counts an attempt).
      return result.address === currentAddress ? 'ok' : 'address-changed';
    },

    async restore(userId, channel, code, address) {
      await store.put(userId, channel, { hash: hash(userId, channel, code.trim().toUpperCase()), address }, ttlSeconds);
    },

    clear(userId, channel) {
      return store.clear(userId, channel);
    },
  };
}
