// Idempotency-Key, whatever the transport (GraphQL: src/graphql/idempotency.ts; the wire API:
// src/wire/idempotency.ts). A client may send `Idempotency-Key: <1..255 visible ASCII>` with
// a mutation. The first answer for (caller, key) is kept for IDEMPOTENCY_TTL_SECONDS (24 h)
// and a retry with the same caller, key and request gets it again, without running the
// mutation (the transport marks it `Idempotency-Replayed: true`).
//
// - The same key with another request is FAILED_PRECONDITION. One key names one request,
//   whatever the transport: a GraphQL mutation and a wire call never share a key.
// - A duplicate that arrives while the first is still running waits for its answer (up to
//   waitMs, then FAILED_PRECONDITION "still in progress").
// - Answers that a retry could change are not kept: the transport says which (finish()
//   without an answer); the key is released and a retry runs the mutation.
// - Neither are answers over maxAnswerBytes (MAX_KEPT_ANSWER_BYTES, 64 KiB of JSON; a usual
//   answer is under 1 KB): the key is released the same way, so a retry runs again. This
//   bounds what one request can leave in the store (memory or Redis) for ttlSeconds.
// - The in-memory store (without Redis) holds at most maxBytes (MEMORY_STORE_MAX_BYTES,
//   64 MiB) and drops the least recently used records beyond: a retry whose record was
//   dropped runs again.
// - Without a caller there is nothing to scope the key to: the header is ignored (every
//   mutation answers UNAUTHENTICATED anyway). Neither do queries use it; a malformed key is
//   INVALID_ARGUMENT before that question is asked.
//
// What is stored: under an HMAC of caller and key (Redis key or map key), the HMAC of the
// request, and the answer encrypted with AES-256-GCM under a key derived (HKDF) from the server
// secret AND the caller and Idempotency-Key. Answers can hold verification codes (returnCode:
// true); encrypted this way, neither Redis alone nor the server secret alone reads them back,
// and the request HMAC does not give away the passwords in the request.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { failedPrecondition, invalid, unavailable, UnavailableError, type AppError } from '../errors.ts';
import { closeRedis, failFastRedis, type RedisTarget } from '../redis.ts';

export interface IdempotencyRecord {
  /** HMAC of the request. */
  fingerprint: string;
  /** Who holds the key while it is pending. */
  owner: string;
  /** The encrypted answer, once there is one. */
  answer?: string;
}

export interface IdempotencyStore {
  /**
   * Claims `key` as pending for lockMs unless a record exists; returns that record then (null:
   * claimed). A record of the claim's own owner counts as claimed: its write ran once already.
   */
  claim(key: string, record: IdempotencyRecord, lockMs: number): Promise<IdempotencyRecord | null>;
  /** Stores the answer, if `owner` still holds the key. */
  complete(key: string, owner: string, answer: string, ttlMs: number): Promise<void>;
  /** Drops the pending claim, if `owner` still holds it. */
  release(key: string, owner: string): Promise<void>;
  close(): Promise<void>;
}

/** What the in-memory store holds at most by default: 64 MiB (about a thousand answers at the size bound). */
export const MEMORY_STORE_MAX_BYTES = 64 * 1024 * 1024;
/** What a record costs beyond its strings (the map entry, the objects); a rough figure on purpose. */
const ENTRY_OVERHEAD_BYTES = 256;

export interface MemoryIdempotencyStoreOptions {
  now?: () => number;
  /** Bytes of records kept at most (their strings, all ASCII, plus a fixed overhead each). */
  maxBytes?: number;
}

/**
 * The store without Redis: a map in insertion order that is also its recency order (a record
 * read or written moves to the end), trimmed from the front, least recently used first,
 * whenever the records' bytes exceed maxBytes. A record too large for the whole bound is not
 * kept (complete() then drops the claim, as release() would).
 */
export function createMemoryIdempotencyStore(options: MemoryIdempotencyStoreOptions = {}): IdempotencyStore & { readonly bytes: number } {
  const { now = Date.now, maxBytes = MEMORY_STORE_MAX_BYTES } = options;
  const records = new Map<string, { record: IdempotencyRecord; expiresAt: number; bytes: number }>();
  let bytes = 0;
  let calls = 0;
  const drop = (key: string) => {
    const entry = records.get(key);
    if (!entry) return;
    records.delete(key);
    bytes -= entry.bytes;
  };
  /** Puts the record last (most recently used), then trims the oldest ones past maxBytes. */
  const put = (key: string, record: IdempotencyRecord, expiresAt: number) => {
    drop(key);
    const size = ENTRY_OVERHEAD_BYTES + key.length + record.fingerprint.length + record.owner.length + (record.answer?.length ?? 0);
    if (size > maxBytes) return;
    records.set(key, { record, expiresAt, bytes: size });
    bytes += size;
    for (const oldest of records.keys()) {
      if (bytes <= maxBytes) break;
      drop(oldest);
    }
  };
  const live = (key: string) => {
    const entry = records.get(key);
    if (entry && entry.expiresAt <= now()) drop(key);
    return records.get(key);
  };
  return {
    get bytes() {
      return bytes;
    },
    async claim(key, record, lockMs) {
      if (++calls % 1000 === 0) for (const [k, e] of records) if (e.expiresAt <= now()) drop(k);
      const existing = live(key);
      if (existing?.record.owner === record.owner) return null;
      if (existing) {
        records.delete(key); // used: to the end of the recency order
        records.set(key, existing);
        return { ...existing.record };
      }
      put(key, { ...record }, now() + lockMs);
      return null;
    },
    async complete(key, owner, answer, ttlMs) {
      const entry = live(key);
      if (entry && entry.record.owner === owner) put(key, { ...entry.record, answer }, now() + ttlMs);
    },
    async release(key, owner) {
      if (live(key)?.record.owner === owner) drop(key);
    },
    async close() {
      records.clear();
      bytes = 0;
    },
  };
}

// KEYS[1]; ARGV owner, new value, ttl ms. Replaces the value only while `owner` holds it.
const COMPLETE = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if cjson.decode(v).owner ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;
const RELEASE = `
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).owner == ARGV[1] and not cjson.decode(v).answer then redis.call('DEL', KEYS[1]) end
return 1`;

interface Scripts {
  idemComplete(key: string, owner: string, value: string, ttlMs: number): Promise<number>;
  idemRelease(key: string, owner: string): Promise<number>;
}

export async function createRedisIdempotencyStore(options: { url: RedisTarget; keyPrefix?: string }): Promise<IdempotencyStore> {
  const prefix = `${options.keyPrefix ?? ''}idem:`;
  // Two connections. Claims: a claim the caller was told failed (UNAVAILABLE) must not run after a
  // reconnect, where it would hold the key for lockMs against the client's retry. The rest
  // (complete, release, which check the owner) is sent again after a reconnect, so that a
  // dropped connection does not leave the key pending that long either.
  const claims = failFastRedis(options.url, { autoResendUnfulfilledCommands: false });
  const client = failFastRedis<Scripts>(options.url);
  client.defineCommand('idemComplete', { numberOfKeys: 1, lua: COMPLETE });
  client.defineCommand('idemRelease', { numberOfKeys: 1, lua: RELEASE });
  const guard = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      throw new UnavailableError(`idempotency store unavailable: ${(err as Error).message}`, { cause: err });
    }
  };
  await guard(() => Promise.all([claims.connect(), client.connect()])).catch((e: unknown) => {
    for (const c of [claims, client]) c.disconnect();
    throw e;
  });
  return {
    claim: (key, record, lockMs) =>
      guard(async () => {
        for (;;) {
          if ((await claims.set(prefix + key, JSON.stringify(record), 'PX', lockMs, 'NX')) === 'OK') return null;
          const existing = await claims.get(prefix + key);
          if (existing) {
            const found = JSON.parse(existing) as IdempotencyRecord;
            return found.owner === record.owner ? null : found;
          }
          // expired between SET and GET: claim again
        }
      }),
    complete: (key, owner, answer, ttlMs) =>
      guard(async () => {
        const existing = await client.get(prefix + key);
        if (!existing) return;
        const record = JSON.parse(existing) as IdempotencyRecord;
        await client.idemComplete(prefix + key, owner, JSON.stringify({ ...record, answer }), ttlMs);
      }),
    release: (key, owner) => guard(async () => void (await client.idemRelease(prefix + key, owner))),
    close: () => closeRedis(claims, client),
  };
}

export type IdempotencyOutcome = 'stored' | 'replayed' | 'conflict' | 'in_progress' | 'not_stored';

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** Server secret (the code HMAC key: the same on every gateway sharing Redis). */
  secret: string | Buffer;
  ttlSeconds: number;
  /** How long a duplicate waits for the first request's answer. */
  waitMs?: number;
  /** How long a pending claim lives if its holder dies. */
  lockMs?: number;
  /** Answers whose JSON is larger are not kept (finish() releases the key); MAX_KEPT_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  /** Counted once per keyed mutation (gateway_idempotency_total), whatever the transport. */
  onOutcome?: (outcome: IdempotencyOutcome) => void;
}

/** Answers kept at most: 64 KiB of JSON (a usual answer, Details and ids, is under 1 KB). */
export const MAX_KEPT_ANSWER_BYTES = 64 * 1024;

/** The Idempotency-Key header's rule: 1 to 255 visible ASCII characters. */
export const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted, so the same variables in another key order are the same body. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * What to do with one request's Idempotency-Key. `A` is the transport's answer as it keeps it
 * (JSON-serializable); a transport only ever reads back its own answers, since its requests'
 * fingerprints never equal another transport's (another request is a conflict).
 */
export type IdempotencyClaim<A> =
  /** No header, no caller, or not a mutation: run the request as if there were no key. */
  | { kind: 'ignore' }
  /**
   * The key is this request's: run it, then finish(answer) to keep the answer, or finish()
   * to release the key when the answer is not the final word (an outage, a crash, a rate
   * limit). An answer over maxAnswerBytes is not kept either. Never throws; counts 'stored'
   * or 'not_stored'.
   */
  | { kind: 'proceed'; finish(answer?: A): Promise<void> }
  /** The first answer, to send again marked as replayed (counted 'replayed'). */
  | { kind: 'replay'; answer: A }
  /** Answer `error` instead of running the request. */
  | { kind: 'invalid-key' | 'conflict' | 'in-progress' | 'unavailable'; error: AppError };

export interface Idempotency {
  /** Answers larger than this (bytes of their JSON) are not kept: a transport may skip them early. */
  readonly maxAnswerBytes: number;
  /**
   * Claims (caller, key) for a request. `request` is called only for a valid key with a
   * caller: the request's fingerprint input (every part that makes it this request, in a
   * canonical form), or null when it is not a mutation. Throws only what opening a stored
   * answer throws (a record sealed under another secret).
   */
  begin<A>(caller: string | null | undefined, key: string | null | undefined, request: () => string | null): Promise<IdempotencyClaim<A>>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createIdempotency(options: IdempotencyOptions): Idempotency {
  const { store, secret, ttlSeconds, waitMs = 10_000, lockMs = 120_000, maxAnswerBytes = MAX_KEPT_ANSWER_BYTES } = options;
  const count = (outcome: IdempotencyOutcome) => options.onOutcome?.(outcome);
  const mac = (what: string, data: string) => createHmac('sha256', secret).update(`${what}\n${data}`).digest('base64url');
  // Keyed by the scope too (caller and Idempotency-Key, never stored): the request holds passwords,
  // and a fingerprint under the server secret alone would let whoever has a Redis dump and that
  // secret test password guesses at HMAC speed instead of bcrypt's.
  const bodyMac = (scope: string, body: string) =>
    createHmac('sha256', Buffer.from(hkdfSync('sha256', secret, 'idempotency-body', scope, 32)))
      .update(body)
      .digest('base64url');
  const aeadKey = (scope: string) => Buffer.from(hkdfSync('sha256', secret, 'idempotency-answer', scope, 32));
  /** The answer's JSON, sealed; null when it is over maxAnswerBytes (not kept). */
  const seal = (scope: string, answer: unknown): string | null => {
    const json = JSON.stringify(answer);
    if (json.length > maxAnswerBytes || Buffer.byteLength(json, 'utf8') > maxAnswerBytes) return null;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', aeadKey(scope), iv);
    const data = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
  };
  const open = <A>(scope: string, sealed: string): A => {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', aeadKey(scope), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as A;
  };

  return {
    maxAnswerBytes,
    async begin<A>(
      caller: string | null | undefined,
      header: string | null | undefined,
      request: () => string | null,
    ): Promise<IdempotencyClaim<A>> {
      if (header === null || header === undefined || !caller) return { kind: 'ignore' };
      if (!KEY.test(header)) return { kind: 'invalid-key', error: invalid('Idempotency-Key', 'must be 1 to 255 visible ASCII characters') };
      const body = request();
      if (body === null) return { kind: 'ignore' };

      const scope = `${caller}\n${header}`;
      const key = mac('key', scope);
      const fingerprint = bodyMac(scope, body);
      const owner = randomBytes(12).toString('base64url');
      const deadline = Date.now() + waitMs;
      try {
        for (;;) {
          const existing = await store.claim(key, { fingerprint, owner }, lockMs);
          if (!existing) {
            let finished = false;
            return {
              kind: 'proceed',
              async finish(answer?: A) {
                if (finished) return;
                finished = true;
                try {
                  // Too large to keep: released like an answer that is not the final word,
                  // so a duplicate waiting for it (and any retry) claims the key and runs.
                  const sealed = answer === undefined ? null : seal(scope, answer);
                  if (sealed !== null) {
                    await store.complete(key, owner, sealed, ttlSeconds * 1000);
                    count('stored');
                  } else {
                    await store.release(key, owner);
                    count('not_stored');
                  }
                } catch {
                  // The store went away after the work was done: the claim expires after lockMs.
                  count('not_stored');
                }
              },
            };
          }
          if (existing.fingerprint !== fingerprint) {
            count('conflict');
            return { kind: 'conflict', error: failedPrecondition('This Idempotency-Key was already used with another request.') };
          }
          if (existing.answer) {
            const answer = open<A>(scope, existing.answer);
            count('replayed');
            return { kind: 'replay', answer };
          }
          if (Date.now() > deadline) {
            count('in_progress');
            return {
              kind: 'in-progress',
              error: failedPrecondition('A request with this Idempotency-Key is still in progress; retry later.'),
            };
          }
          await sleep(25);
        }
      } catch (err) {
        if (err instanceof UnavailableError) return { kind: 'unavailable', error: unavailable() };
        throw err;
      }
    },
  };
}
