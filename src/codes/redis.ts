// Redis CodeStore: one hash per user and channel (hash, address, attempts) with a TTL.
import { randomBytes } from 'node:crypto';
import { closeRedis, failFastRedis, isReplyError, isTransientReply, type RedisTarget } from '../redis.ts';
import { UnavailableError } from '../errors.ts';
import { MAX_BELOW, type CheckResult, type CodeChannel, type CodeStore, type StoredCode } from './port.ts';

export interface RedisCodeStoreOptions {
  /** A redis:// URL or a connection description (one Redis, a Cluster, Sentinel: src/redis.ts). */
  url: RedisTarget;
  /** Prepended to every key; keep braces out of it so the user's hash tag stays the slot key. */
  keyPrefix?: string;
}

// One hash per user and channel: the pending code (hash, address, attempts; hash '' for a
// clear) with the key's TTL, its token, and `below`: the entries it replaced, as JSON
// ([{t: token, h: hash, a: address, n: attempts, x: expiry in ms}], bottom first), for
// restore (the stack of port.ts). Times are Redis's own (TIME), so gateways' clocks do not matter.
const STACK = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The stack, bottom first, the pending entry last; nil when there is none.
local function load(key, now)
  local v = redis.call('HMGET', key, 'hash', 'address', 'attempts', 'token', 'below')
  if not v[1] then return nil end
  local stack = {}
  if v[5] then
    for _, e in ipairs(cjson.decode(v[5])) do
      if e.x > now then table.insert(stack, e) end
    end
  end
  local pttl = redis.call('PTTL', key)
  if pttl < 0 then pttl = 0 end
  table.insert(stack, { t = v[4] or '', h = v[1], a = v[2] or '', n = tonumber(v[3]) or 0, x = now + pttl })
  return stack
end
-- Writes the stack back: clears at its bottom hide nothing, the key lives as long as its top.
-- The key is updated in place, never deleted and made again: while its Cluster slot migrates,
-- a script may change a key the node holds but not create one.
local function save(key, stack, now)
  while #stack > 0 and stack[1].h == '' do table.remove(stack, 1) end
  local top = stack[#stack]
  if not top or top.x <= now then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, 'hash', top.h, 'address', top.a, 'attempts', top.n, 'token', top.t)
  local below = {}
  for i = math.max(1, #stack - ${MAX_BELOW}), #stack - 1 do table.insert(below, stack[i]) end
  if #below > 0 then redis.call('HSET', key, 'below', cjson.encode(below)) else redis.call('HDEL', key, 'below') end
  redis.call('PEXPIRE', key, top.x - now)
end
-- A clear named token over the stack (its mark lives as long as what it hides), saved.
local function push_clear(key, stack, token, now)
  local x = 0
  for _, e in ipairs(stack) do if e.x > x then x = e.x end end
  table.insert(stack, { t = token, h = '', a = '', n = 0, x = x })
  save(key, stack, now)
end
-- The pending code as put and clear return it: hash, address, attempts, ms left; {} for none.
local function pending(stack, now)
  local top = stack and stack[#stack]
  if not top or top.h == '' then return {} end
  return { top.h, top.a, top.n, top.x - now }
end
`;

// KEYS[1] code key; ARGV hash, address, ttl in ms, token.
const PUT = `${STACK}
local now = now_ms()
local stack = load(KEYS[1], now) or {}
local previous = pending(stack, now)
table.insert(stack, { t = ARGV[4], h = ARGV[1], a = ARGV[2], n = 0, x = now + tonumber(ARGV[3]) })
save(KEYS[1], stack, now)
return previous`;

// KEYS[1] code key; ARGV token. A clear over nothing stores nothing; else its mark lives as long as what it hides.
const CLEAR = `${STACK}
local now = now_ms()
local stack = load(KEYS[1], now)
if not stack then return {} end
local previous = pending(stack, now)
push_clear(KEYS[1], stack, ARGV[1], now)
return previous`;

// KEYS[1] code key; ARGV token. 1: the entry was pending (the one below it is now); 0: not (or gone).
const RESTORE = `${STACK}
local now = now_ms()
local stack = load(KEYS[1], now)
if not stack then return 0 end
for i = #stack, 1, -1 do
  if stack[i].t == ARGV[1] then
    local wasPending = i == #stack
    table.remove(stack, i)
    save(KEYS[1], stack, now)
    if wasPending then return 1 end
    return 0
  end
end
return 0`;

// KEYS[1] code key; ARGV hash, maxAttempts, token. Comparing HMACs, so a plain == leaks nothing useful.
// Only the pending entry counts; a match pushes a clear named token over it (restore takes the
// match back); the last attempt deletes the key, entries below with it.
const CHECK = `${STACK}
local v = redis.call('HMGET', KEYS[1], 'hash', 'address', 'attempts')
local max = tonumber(ARGV[2])
if not v[1] or v[1] == '' or (tonumber(v[3]) or 0) >= max then return {'missing'} end
if v[1] == ARGV[1] then
  local now = now_ms()
  local stack = load(KEYS[1], now)
  if not stack then return {'missing'} end
  push_clear(KEYS[1], stack, ARGV[3], now)
  return {'ok', v[2]}
end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts >= max then redis.call('DEL', KEYS[1]) end
return {'wrong', max - attempts}`;

type Previous = [] | [string, string, number, number];

interface Scripts {
  codePut(key: string, hash: string, address: string, ttlMs: number, token: string): Promise<Previous>;
  codeClear(key: string, token: string): Promise<Previous>;
  codeRestore(key: string, token: string): Promise<number>;
  codeCheck(key: string, hash: string, maxAttempts: number, token: string): Promise<[string, (string | number)?]>;
}

// Redis's own error replies are bugs or misconfiguration, but those that say "not now"
// (CLUSTERDOWN, LOADING, …); anything else (refused, timed out, dropped, offline) means
// the store is unavailable.
function unavailable(err: unknown): unknown {
  if (isReplyError(err) && !isTransientReply(err)) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new UnavailableError(`code store unavailable: ${detail}`, { cause: err });
}

async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw unavailable(err);
  }
}

const token = () => randomBytes(12).toString('hex');

const stored = (reply: Previous): StoredCode | null =>
  reply.length === 0 ? null : { hash: String(reply[0]), address: String(reply[1]), attempts: Number(reply[2]), ttlMs: Number(reply[3]) };

export async function createRedisCodeStore(options: RedisCodeStoreOptions): Promise<CodeStore> {
  const prefix = options.keyPrefix ?? '';
  // A command whose connection dropped is failed, never sent again after the reconnect: its caller
  // has been answered (and may have sent the undo of it, which must not be overtaken by it).
  const client = failFastRedis<Scripts>(options.url, { autoResendUnfulfilledCommands: false });
  client.defineCommand('codePut', { numberOfKeys: 1, lua: PUT });
  client.defineCommand('codeCheck', { numberOfKeys: 1, lua: CHECK });
  client.defineCommand('codeClear', { numberOfKeys: 1, lua: CLEAR });
  client.defineCommand('codeRestore', { numberOfKeys: 1, lua: RESTORE });

  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw unavailable(err);
  }

  // The braces make the user id the hash tag, so a user's keys share a Cluster slot.
  const key = (userId: string, channel: CodeChannel) => `${prefix}code:{${userId}}:${channel}`;

  return {
    async put(userId, channel, code, ttlSeconds, t = token()) {
      const previous = await guard(() => client.codePut(key(userId, channel), code.hash, code.address, Math.ceil(ttlSeconds * 1000), t));
      return { previous: stored(previous), token: t };
    },

    async check(userId, channel, hash, maxAttempts, consumedBy = token()): Promise<CheckResult> {
      const [status, value] = await guard(() => client.codeCheck(key(userId, channel), hash, maxAttempts, consumedBy));
      if (status === 'ok') return { status, address: String(value) };
      if (status === 'wrong') return { status, attemptsLeft: Number(value) };
      return { status: 'missing' };
    },

    async clear(userId, channel, t = token()) {
      const previous = await guard(() => client.codeClear(key(userId, channel), t));
      return { previous: stored(previous), token: t };
    },

    async restore(userId, channel, undo) {
      return (await guard(() => client.codeRestore(key(userId, channel), undo))) === 1;
    },

    async ping() {
      await guard(() => client.ping());
    },

    close: () => closeRedis(client),
  };
}
