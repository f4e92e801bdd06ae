// In-process CodeStore with the same semantics as the Redis one (tests, single-node dev).
import type { CheckResult, CodeChannel, CodeStore, PendingCode } from './port.ts';

interface Entry extends PendingCode {
  attempts: number;
  expiresAt: number;
}

export interface MemoryCodeStoreOptions {
  /** Milliseconds clock; injectable so tests can expire codes without sleeping. */
  now?: () => number;
}

const SWEEP_EVERY = 100; // puts between sweeps of expired entries

export function createMemoryCodeStore(options: MemoryCodeStoreOptions = {}): CodeStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const key = (userId: string, channel: CodeChannel) => `${channel}\u0000${userId}`;
  let puts = 0;

  const live = (k: string): Entry | undefined => {
    const entry = entries.get(k);
    if (entry && entry.expiresAt <= now()) {
      entries.delete(k);
      return undefined;
    }
    return entry;
  };

  const sweep = () => {
    const t = now();
    for (const [k, entry] of entries) if (entry.expiresAt <= t) entries.delete(k);
  };

  return {
    async put(userId, channel, code, ttlSeconds) {
      if (++puts % SWEEP_EVERY === 0) sweep();
      entries.set(key(userId, channel), {
        hash: code.hash,
        address: code.address,
        attempts: 0,
        expiresAt: now() + ttlSeconds * 1000,
      });
    },

    async check(userId, channel, hash, maxAttempts): Promise<CheckResult> {
      const k = key(userId, channel);
      const entry = live(k);
      if (!entry || entry.attempts >= maxAttempts) return { status: 'missing' };
      if (entry.hash === hash) {
        entries.delete(k);
        return { status: 'ok', address: entry.address };
      }
      entry.attempts++;
      if (entry.attempts >= maxAttempts) entries.delete(k);
      return { status: 'wrong', attemptsLeft: maxAttempts - entry.attempts };
    },

    async clear(userId, channel) {
      entries.delete(key(userId, channel));
    },

    async ping() {},

    async close() {
      entries.clear();
    },
  };
}
