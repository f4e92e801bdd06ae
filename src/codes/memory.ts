// In-process CodeStore with the same semantics as the Redis one (tests, single-node dev).
import { randomBytes } from 'node:crypto';
import { MAX_BELOW, type CheckResult, type CodeChannel, type CodeStore, type Replaced, type StoredCode } from './port.ts';

/** One entry of a user's and channel's stack (port.ts): a code, or a clear (hash null). */
interface Entry {
  token: string;
  hash: string | null;
  address: string;
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
  /** Per key, the stack: the pending entry last. */
  const stacks = new Map<string, Entry[]>();
  const key = (userId: string, channel: CodeChannel) => `${channel}\u0000${userId}`;
  let puts = 0;

  /**
   * The stack without expired entries nor clears at its bottom (they hide nothing); deleted
   * when empty. The entries below live no longer than the top (Redis: the key's TTL).
   */
  const live = (k: string): Entry[] | undefined => {
    const stack = stacks.get(k);
    if (!stack) return undefined;
    const t = now();
    const top = stack.at(-1);
    const kept = top && top.expiresAt > t ? stack.filter((e) => e.expiresAt > t) : [];
    while (kept.length > 0 && kept[0]!.hash === null) kept.shift();
    if (kept.length === 0) {
      stacks.delete(k);
      return undefined;
    }
    stacks.set(k, kept);
    return kept;
  };

  const sweep = () => {
    for (const k of [...stacks.keys()]) live(k);
  };

  const pending = (stack: Entry[] | undefined): StoredCode | null => {
    const top = stack?.at(-1);
    if (!top || top.hash === null) return null;
    return { hash: top.hash, address: top.address, attempts: top.attempts, ttlMs: top.expiresAt - now() };
  };

  const push = (k: string, entry: Entry): Replaced => {
    const stack = live(k) ?? [];
    const previous = pending(stack);
    stack.push(entry);
    if (stack.length > MAX_BELOW + 1) stack.splice(0, stack.length - MAX_BELOW - 1);
    stacks.set(k, stack);
    return { previous, token: entry.token };
  };

  const token = () => randomBytes(12).toString('hex');
  /** A clear (or a match's consumption) over `stack`: kept as long as what it hides. */
  const clearMark = (name: string, stack: Entry[]): Entry => ({
    token: name,
    hash: null,
    address: '',
    attempts: 0,
    expiresAt: Math.max(...stack.map((e) => e.expiresAt)),
  });

  return {
    async put(userId, channel, code, ttlSeconds, name = token()) {
      if (++puts % SWEEP_EVERY === 0) sweep();
      return push(key(userId, channel), {
        token: name,
        hash: code.hash,
        address: code.address,
        attempts: 0,
        expiresAt: now() + ttlSeconds * 1000,
      });
    },

    async check(userId, channel, hash, maxAttempts, consumedBy = token()): Promise<CheckResult> {
      const k = key(userId, channel);
      const stack = live(k);
      const entry = stack?.at(-1);
      if (!stack || !entry || entry.hash === null || entry.attempts >= maxAttempts) return { status: 'missing' };
      if (entry.hash === hash) {
        push(k, clearMark(consumedBy, stack));
        return { status: 'ok', address: entry.address };
      }
      entry.attempts++;
      if (entry.attempts >= maxAttempts) stacks.delete(k);
      return { status: 'wrong', attemptsLeft: maxAttempts - entry.attempts };
    },

    async clear(userId, channel, name = token()) {
      const k = key(userId, channel);
      const stack = live(k);
      // A clear over nothing has nothing to hide: nothing to store.
      if (!stack) return { previous: null, token: name };
      return push(k, clearMark(name, stack));
    },

    async restore(userId, channel, undo) {
      const k = key(userId, channel);
      const stack = live(k);
      const at = stack?.findIndex((e) => e.token === undo) ?? -1;
      if (!stack || at < 0) return false;
      const wasPending = at === stack.length - 1;
      stack.splice(at, 1);
      live(k);
      return wasPending;
    },

    async ping() {},

    async close() {
      stacks.clear();
    },
  };
}
