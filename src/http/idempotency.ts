// Idempotent mutations: a client may send `Idempotency-Key: <1..255 visible ASCII>`
// with a mutation. The first answer for (caller, key) is kept for
// IDEMPOTENCY_TTL_SECONDS (24 h) and a retry with the same caller, key and body
// gets it again, with `Idempotency-Replayed: true`, without running the mutation.
//
// - The same key with another body (query, operation name, variables) is
//   FAILED_PRECONDITION (409).
// - A duplicate that arrives while the first is still running waits for its
//   answer (up to WAIT_MS, then FAILED_PRECONDITION "still in progress").
// - Answers that a retry could change are not kept: UNAVAILABLE, INTERNAL and
//   RESOURCE_EXHAUSTED (and any 5xx or 429); the key is released and a retry
//   runs the mutation.
// - Without a valid token there is no caller to scope the key to: the header is
//   ignored (every operation answers UNAUTHENTICATED anyway). Queries ignore it.
//
// What is stored: under an HMAC of caller and key (Redis key or map key), the
// HMAC of the body, and the answer encrypted with AES-256-GCM under a key
// derived (HKDF) from the server secret AND the caller and Idempotency-Key.
// Answers can hold verification codes (returnCode: true); encrypted this way,
// neither Redis alone nor the server secret alone reads them back, and the
// body HMAC does not give away the passwords in the variables.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { getOperationAST, parse, type GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { failedPrecondition, invalid, unavailable, UnavailableError } from '../errors.ts';
import { failFastRedis } from '../redis.ts';
import { graphqlError } from './graphql-error.ts';
import { stateOf } from './request-state.ts';

export interface IdempotencyRecord {
  /** HMAC of the request body. */
  fingerprint: string;
  /** Who holds the key while it is pending. */
  owner: string;
  /** The encrypted answer, once there is one. */
  answer?: string;
}

export interface IdempotencyStore {
  /** Claims `key` as pending for lockMs unless a record exists; returns that record then (null: claimed). */
  claim(key: string, record: IdempotencyRecord, lockMs: number): Promise<IdempotencyRecord | null>;
  /** Stores the answer, if `owner` still holds the key. */
  complete(key: string, owner: string, answer: string, ttlMs: number): Promise<void>;
  /** Drops the pending claim, if `owner` still holds it. */
  release(key: string, owner: string): Promise<void>;
  close(): Promise<void>;
}

export function createMemoryIdempotencyStore(now: () => number = Date.now): IdempotencyStore {
  const records = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();
  let calls = 0;
  const live = (key: string) => {
    const entry = records.get(key);
    if (entry && entry.expiresAt <= now()) records.delete(key);
    return records.get(key);
  };
  return {
    async claim(key, record, lockMs) {
      if (++calls % 1000 === 0) for (const [k, e] of records) if (e.expiresAt <= now()) records.delete(k);
      const existing = live(key);
      if (existing) return { ...existing.record };
      records.set(key, { record: { ...record }, expiresAt: now() + lockMs });
      return null;
    },
    async complete(key, owner, answer, ttlMs) {
      const entry = live(key);
      if (entry && entry.record.owner === owner) records.set(key, { record: { ...entry.record, answer }, expiresAt: now() + ttlMs });
    },
    async release(key, owner) {
      if (live(key)?.record.owner === owner) records.delete(key);
    },
    async close() {
      records.clear();
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

export async function createRedisIdempotencyStore(options: { url: string; keyPrefix?: string }): Promise<IdempotencyStore> {
  const prefix = `${options.keyPrefix ?? ''}idem:`;
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
  await guard(() => client.connect());
  return {
    claim: (key, record, lockMs) =>
      guard(async () => {
        for (;;) {
          if ((await client.set(prefix + key, JSON.stringify(record), 'PX', lockMs, 'NX')) === 'OK') return null;
          const existing = await client.get(prefix + key);
          if (existing) return JSON.parse(existing) as IdempotencyRecord;
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
    async close() {
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

/** An answer as it went out. */
interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** Server secret (the code HMAC key: the same on every gateway sharing Redis). */
  secret: string | Buffer;
  ttlSeconds: number;
  /** How long a duplicate waits for the first request's answer. */
  waitMs?: number;
  /** How long a pending claim lives if its holder dies. */
  lockMs?: number;
  onOutcome?: (outcome: 'stored' | 'replayed' | 'conflict' | 'in_progress' | 'not_stored') => void;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const NOT_STORED_CODES = new Set(['UNAVAILABLE', 'INTERNAL', 'RESOURCE_EXHAUSTED']);

/** JSON with object keys sorted, so the same variables in another key order are the same body. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function isMutation(query: unknown, operationName: unknown): boolean {
  if (typeof query !== 'string') return false;
  try {
    const op = getOperationAST(parse(query), typeof operationName === 'string' ? operationName : undefined);
    return op?.operation === 'mutation';
  } catch {
    return false; // yoga answers the syntax error
  }
}

/** Whether an answer is the final word on this request (not an outage, a crash or a rate limit). */
function keepable(answer: StoredAnswer): boolean {
  if (answer.status >= 500 || answer.status === 429) return false;
  try {
    const body = JSON.parse(answer.body) as { errors?: { extensions?: { code?: string } }[] };
    return !(body.errors ?? []).some((e) => NOT_STORED_CODES.has(String(e.extensions?.code)));
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function useIdempotency(options: IdempotencyOptions): Plugin {
  const { store, secret, ttlSeconds, waitMs = 10_000, lockMs = 120_000 } = options;
  const mac = (what: string, data: string) => createHmac('sha256', secret).update(`${what}\n${data}`).digest('base64url');
  // Keyed by the scope too (caller and Idempotency-Key, never stored): the body holds passwords,
  // and a fingerprint under the server secret alone would let whoever has a Redis dump and that
  // secret test password guesses at HMAC speed instead of bcrypt's.
  const bodyMac = (scope: string, body: string) =>
    createHmac('sha256', Buffer.from(hkdfSync('sha256', secret, 'idempotency-body', scope, 32))).update(body).digest('base64url');
  const aeadKey = (scope: string) => Buffer.from(hkdfSync('sha256', secret, 'idempotency-answer', scope, 32));
  const seal = (scope: string, answer: StoredAnswer) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', aeadKey(scope), iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
  };
  const open = (scope: string, sealed: string): StoredAnswer => {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', aeadKey(scope), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
  };

  /** Requests that hold their key, and requests answered from the store. */
  const owners = new WeakMap<Request, { key: string; scope: string; owner: string }>();
  const replays = new WeakMap<Request, StoredAnswer>();
  const refuse = (setResult: (r: { errors: GraphQLError[] }) => void, error: Parameters<typeof graphqlError>[0]) =>
    setResult({ errors: [graphqlError(error)] });

  return {
    async onParams({ request, params, setResult }) {
      const header = request.headers.get('idempotency-key');
      if (header === null || request.method !== 'POST') return;
      const state = stateOf(request);
      if (!state.caller) return;
      if (!KEY.test(header)) return refuse(setResult, invalid('Idempotency-Key', 'must be 1 to 255 visible ASCII characters'));
      if (!isMutation(params.query, params.operationName)) return;

      const scope = `${state.caller}\n${header}`;
      const key = mac('key', scope);
      const fingerprint = bodyMac(scope, canonical({ query: params.query, operationName: params.operationName ?? null, variables: params.variables ?? null }));
      const owner = randomBytes(12).toString('base64url');
      const deadline = Date.now() + waitMs;
      try {
        for (;;) {
          const existing = await store.claim(key, { fingerprint, owner }, lockMs);
          if (!existing) {
            owners.set(request, { key, scope, owner });
            return;
          }
          if (existing.fingerprint !== fingerprint) {
            options.onOutcome?.('conflict');
            return refuse(setResult, failedPrecondition('This Idempotency-Key was already used with another request.'));
          }
          if (existing.answer) {
            replays.set(request, open(scope, existing.answer));
            options.onOutcome?.('replayed');
            return setResult({ data: null });
          }
          if (Date.now() > deadline) {
            options.onOutcome?.('in_progress');
            return refuse(setResult, failedPrecondition('A request with this Idempotency-Key is still in progress; retry later.'));
          }
          await sleep(25);
        }
      } catch (err) {
        if (err instanceof UnavailableError) return refuse(setResult, unavailable());
        throw err;
      }
    },

    onResultProcess({ request, setResultProcessor }) {
      const answer = replays.get(request);
      if (!answer) return;
      setResultProcessor(
        (_result, fetchAPI) =>
          new fetchAPI.Response(answer.body, { status: answer.status, headers: { 'content-type': answer.contentType, 'idempotency-replayed': 'true' } }),
        answer.contentType,
      );
    },

    async onResponse({ request, response }) {
      const held = owners.get(request);
      if (!held) return;
      owners.delete(request);
      const answer: StoredAnswer = {
        status: response.status,
        contentType: response.headers.get('content-type') ?? 'application/json',
        body: await response.clone().text(),
      };
      try {
        if (keepable(answer)) {
          await store.complete(held.key, held.owner, seal(held.scope, answer), ttlSeconds * 1000);
          options.onOutcome?.('stored');
        } else {
          await store.release(held.key, held.owner);
          options.onOutcome?.('not_stored');
        }
      } catch {
        // Redis went away after the work was done: the claim expires after lockMs.
        options.onOutcome?.('not_stored');
      }
    },
  };
}
