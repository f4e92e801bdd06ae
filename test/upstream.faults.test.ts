// Upstream mode (src/upstream) when its upstream fails, with real processes: the upstream is a
// child gateway (embedded store), the front a gateway with ZITADEL_URL in this process. An
// upstream killed and restarted under load, one that is down, one that stalls, one whose
// connection drops: the front answers UNAVAILABLE, never hangs, retries reads once and writes
// never, and every write it acknowledged is there, applied once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { h2Proxy } from './support/h2-proxy.ts';
import { describeWith } from './support/servers.ts';
import { freePort } from './support/net.ts';
import { until } from './support/slow-peers.ts';
import { startFront, upstreamServed, type Front } from './support/upstream-front.ts';

const ADD_USER = `mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId details { sequence } } }`;
const UPDATE_PROFILE = `mutation($input: UpdateHumanProfileInput!) { updateHumanProfile(input: $input) { details { sequence } } }`;
const ME = `query { me { id username } }`;
const USER_HISTORY = `query($id: ID!) { user(id: $id) { id profile { nickName } history(first: 20) { totalCount edges { node { type sequence changes { field value } } } } } }`;
const HISTORY_PAGE = `query($id: ID!, $after: String) { user(id: $id) { history(first: 20, after: $after) { pageInfo { hasNextPage endCursor } edges { node { changes { field value } } } } } }`;
const USERS = `query($prefix: String!) { users(first: 100, filter: { username: { op: PREFIX, value: $prefix } }) { totalCount edges { node { id username } } } }`;

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const newUser = (username: string) => ({
  username,
  profile: { firstName: 'Ada', lastName: 'Lovelace' },
  email: { email: `${username}@example.com`, isVerified: true },
});

/** Every change in a user's history, read from the upstream page by page. */
async function historyChanges(upstream: ChildGateway, id: string): Promise<{ field: string; value: string }[]> {
  const changes: { field: string; value: string }[] = [];
  for (let after: string | null = null; ;) {
    const answer = await upstream.post({ query: HISTORY_PAGE, variables: { id, after } });
    expect(answer.json.errors, answer.text).toBeUndefined();
    const page = answer.json.data.user.history;
    for (const edge of page.edges) changes.push(...edge.node.changes);
    if (!page.pageInfo.hasNextPage) return changes;
    after = page.pageInfo.endCursor;
  }
}

const errorOf = (answer: { json: any }) => {
  const errors = answer.json?.errors;
  if (!errors || errors.length !== 1) throw new Error(`expected one error, got ${JSON.stringify(answer.json)}`);
  return errors[0] as { message: string; extensions: { code: string; grpcCode: number } };
};

describe('upstream mode: an upstream that fails', () => {
  let upstream: ChildGateway;
  const fronts: Front[] = [];
  const proxies: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    upstream = await spawnGateway();
  });
  afterEach(async () => {
    for (const f of fronts.splice(0)) await f.close();
    for (const p of proxies.splice(0)) await p.close();
  });
  afterAll(async () => {
    await upstream?.stop();
  });

  const addUser = async (front: Front, prefix = 'f') => {
    const answer = await front.post(ADD_USER, { input: newUser(unique(prefix)) });
    expect(answer.json?.errors, JSON.stringify(answer.json)).toBeUndefined();
    return answer.json.data.addHumanUser.userId as string;
  };

  it('down: a mutation answers UNAVAILABLE before the deadline, /ready names the upstream; back up: /ready 200 and mutations work', async () => {
    const port = await freePort();
    const front = await startFront(upstream, `http://127.0.0.1:${port}`, { ZITADEL_TIMEOUT_MS: '20000' });
    fronts.push(front);
    const started = Date.now();
    const failed = await front.post(ADD_USER, { input: newUser(unique('down')) });
    const took = Date.now() - started;
    expect(errorOf(failed).extensions).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });
    expect(errorOf(failed).message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    // Nothing listens: refused at once, not after the 20 s deadline (room left for a loaded machine).
    expect(took).toBeLessThan(15_000);
    const ready = await fetch(`${front.base}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/upstream/);

    // The upstream comes back where the front looks for it (a proxy on that port to the upstream).
    const proxy = await h2ProxyOn(port, upstream);
    proxies.push(proxy);
    await until(
      '/ready 200',
      async () => (await fetch(`${front.base}/ready`)).status,
      (s) => s === 200,
    );
    for (let i = 0; i < 3; i++) expect(await addUser(front, 'back')).toMatch(/^\d+$/);
    expect(await front.calls('AddHumanUser', 'OK')).toBe(3);
    // One HTTP/2 session again, for /ready's pings and every call.
    expect(proxy.connections).toBe(1);
  });

  it('stalled: a mutation and a read answer UNAVAILABLE after the deadline, nothing hangs, the write reached the upstream once', async () => {
    const proxy = await h2Proxy(Number(new URL(upstream.base).port));
    proxies.push(proxy);
    const front = await startFront(upstream, proxy.url, { ZITADEL_TIMEOUT_MS: '1500' });
    fronts.push(front);
    const userId = await addUser(front, 'stall');
    const servedBefore = await upstreamServed(upstream, 'UpdateHumanProfile');
    const requestsBefore = proxy.requests;
    const callsBefore = await front.calls('');

    proxy.stall(true);
    const write = await front.post(UPDATE_PROFILE, { input: { userId, firstName: 'Stalled', lastName: 'Write', nickName: 'held' } });
    expect(errorOf(write).extensions).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });
    expect(errorOf(write).message).toBe('The upstream did not answer in time (ZITADEL_TIMEOUT_MS); a change may or may not have been made');
    const read = await front.post(ME, {});
    expect(errorOf(read).extensions).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });
    expect(await front.calls('UpdateHumanProfile')).toBe(1);
    expect(await front.calls('UpdateHumanProfile', 'DeadlineExceeded')).toBe(1);

    // The write went out once: one call, and each call one request stream through the proxy; the upstream served it once (its answer held).
    expect(proxy.requests - requestsBefore).toBe((await front.calls('')) - callsBefore);
    await until(
      'the upstream served the held write',
      () => upstreamServed(upstream, 'UpdateHumanProfile'),
      (n) => n === servedBefore + 1,
    );
    proxy.stall(false);
    const after = await front.post(ME, {});
    expect(after.json?.errors, JSON.stringify(after.json)).toBeUndefined();
    expect(await upstreamServed(upstream, 'UpdateHumanProfile')).toBe(servedBefore + 1);
  });

  it('a dropped connection: a read is sent again once and succeeds, a write answers UNAVAILABLE and reached the upstream once', async () => {
    const proxy = await h2Proxy(Number(new URL(upstream.base).port));
    proxies.push(proxy);
    const front = await startFront(upstream, proxy.url);
    fronts.push(front);
    const userId = await addUser(front, 'drop');

    proxy.loseNextAnswer();
    let requests = proxy.requests;
    let calls = await front.calls('');
    const me = await front.post(ME, {});
    expect(me.json?.errors, JSON.stringify(me.json)).toBeUndefined();
    expect(me.json.data.me.id).toBe(upstream.adminId);
    expect(proxy.lost).toBe(1);
    // GetMyUser lost its answer (the connection dropped: CANCELED) and was sent once more; every call went through the proxy.
    expect(await front.calls('GetMyUser')).toBe(2);
    expect(await front.calls('GetMyUser', 'OK')).toBe(1);
    expect(await front.calls('GetMyUser', 'Unavailable')).toBe(1);
    expect(proxy.requests - requests).toBe((await front.calls('')) - calls);

    const served = await upstreamServed(upstream, 'UpdateHumanProfile');
    proxy.loseNextAnswer();
    requests = proxy.requests;
    calls = await front.calls('');
    const write = await front.post(UPDATE_PROFILE, { input: { userId, firstName: 'Dropped', lastName: 'Answer', nickName: 'once' } });
    expect(errorOf(write).extensions).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });
    expect(proxy.lost).toBe(2);
    expect(proxy.requests - requests).toBe(1);
    expect((await front.calls('')) - calls).toBe(1);
    expect(await front.calls('UpdateHumanProfile')).toBe(1);
    // The answer was lost as the upstream started it: the upstream ran the write, once.
    await until(
      'the upstream served the write',
      () => upstreamServed(upstream, 'UpdateHumanProfile'),
      (n) => n >= served + 1,
    );
    expect(await upstreamServed(upstream, 'UpdateHumanProfile')).toBe(served + 1);
    // What the upstream holds: the write applied once (its answer lost), read back through the front.
    const history = await upstream.post({ query: USER_HISTORY, variables: { id: userId } });
    expect(history.json.errors, history.text).toBeUndefined();
    const nickChanges = history.json.data.user.history.edges.filter((e: any) => e.node.changes.some((c: any) => c.value === 'once'));
    expect(nickChanges).toHaveLength(1);
    expect(history.json.data.user.profile.nickName).toBe('once');
  });
});

describe('upstream mode: the upstream killed and restarted under load', () => {
  let dataDir: string;
  let port: number;
  let upstream: ChildGateway;
  let front: Front | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-upstream-'));
    port = await freePort();
    upstream = await spawnGateway({ dataDir, port });
  });
  afterAll(async () => {
    await front?.close();
    await upstream?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every acknowledged write is there after the restart, none applied twice, the failed ones answered UNAVAILABLE', async () => {
    front = await startFront(upstream, `http://127.0.0.1:${port}`, { ZITADEL_TIMEOUT_MS: '5000' });
    const run = unique('kill');
    const targets: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await front.post(ADD_USER, { input: newUser(`${run}-target-${i}`) });
      expect(answer.json?.errors, JSON.stringify(answer.json)).toBeUndefined();
      targets.push(answer.json.data.addHumanUser.userId);
    }
    type Outcome = { kind: 'add' | 'update'; value: string; target?: string; ok: boolean; error?: any };
    const outcomes: Outcome[] = [];
    let stop = false;
    const adder = async (c: number) => {
      for (let i = 0; !stop; i++) {
        const value = `${run}-add-${c}-${i}`;
        const answer = await front!.post(ADD_USER, { input: newUser(value) });
        const error = answer.json?.errors?.[0];
        outcomes.push({ kind: 'add', value, ok: !error && !!answer.json?.data?.addHumanUser?.userId, error: error ?? answer.text });
      }
    };
    const updater = async (c: number) => {
      const target = targets[c]!;
      for (let i = 0; !stop; i++) {
        const value = `n${c}-${i}`;
        const answer = await front!.post(UPDATE_PROFILE, {
          input: { userId: target, firstName: 'Ada', lastName: 'Lovelace', nickName: value },
        });
        const error = answer.json?.errors?.[0];
        outcomes.push({
          kind: 'update',
          value,
          target,
          ok: !error && !!answer.json?.data?.updateHumanProfile,
          error: error ?? answer.text,
        });
      }
    };
    const clients = [0, 1, 2].flatMap((c) => [adder(c), updater(c)]);
    const acknowledged = () => outcomes.filter((o) => o.ok).length;
    await until('writes acknowledged before the kill', acknowledged, (n) => n >= 10);
    upstream.child.kill('SIGKILL');
    await upstream.exited;
    const atKill = outcomes.length;
    await until(
      'writes failing while the upstream is down',
      () => outcomes.length,
      (n) => n >= atKill + 6,
    );
    upstream = await spawnGateway({ dataDir, port });
    const atRestart = acknowledged();
    await until('writes acknowledged after the restart', acknowledged, (n) => n >= atRestart + 10);
    stop = true;
    await Promise.all(clients);

    const failed = outcomes.filter((o) => !o.ok);
    expect(failed.length).toBeGreaterThan(0);
    for (const o of failed) expect(o.error?.extensions, JSON.stringify(o.error)).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });

    // Users: every acknowledged one is there, read back through the restarted upstream; none twice (usernames are unique,
    // and no attempt was refused as ALREADY_EXISTS, which a write sent again would be).
    const users = await upstream.post({ query: USERS, variables: { prefix: `${run}-add-` } });
    expect(users.json.errors, users.text).toBeUndefined();
    const names: string[] = users.json.data.users.edges.map((e: any) => e.node.username);
    expect(new Set(names).size).toBe(names.length);
    const adds = outcomes.filter((o) => o.kind === 'add');
    expect(names.length).toBeLessThanOrEqual(adds.length);
    for (const o of adds.filter((o) => o.ok)) expect(names).toContain(o.value);

    let applied = 0;
    // Profiles: each acknowledged nickname is in its user's history once, no nickname more than once.
    for (const [c, target] of targets.entries()) {
      const nicknames = (await historyChanges(upstream, target)).filter((ch) => /nickName$/.test(ch.field)).map((ch) => ch.value);
      expect(nicknames.length).toBeGreaterThan(0);
      applied += nicknames.length;
      expect(new Set(nicknames).size, JSON.stringify(nicknames)).toBe(nicknames.length);
      for (const o of outcomes.filter((o) => o.kind === 'update' && o.target === target && o.ok)) expect(nicknames).toContain(o.value);
      expect(nicknames.every((n) => n.startsWith(`n${c}-`))).toBe(true);
    }
    console.log(
      `[kill under load] ${outcomes.length} writes: ${acknowledged()} acknowledged, ${failed.length} UNAVAILABLE; ` +
        `users: ${adds.filter((o) => o.ok).length} acknowledged, ${names.length} there of ${adds.length} sent; ` +
        `profiles: ${outcomes.filter((o) => o.kind === 'update' && o.ok).length} acknowledged, ${applied} applied`,
    );
  });
});

describeWith('redis', 'upstream mode: two fronts sharing one Redis', (redisUrl) => {
  let upstream: ChildGateway;
  const fronts: Front[] = [];

  beforeAll(async () => {
    upstream = await spawnGateway();
  });
  afterAll(async () => {
    for (const f of fronts) await f.close();
    await upstream?.stop();
  });

  it('an Idempotency-Key used on front A is replayed by front B, and the upstream applied the write once', async () => {
    const env = { REDIS_URL: redisUrl, CODE_HMAC_KEY: 'upstream-faults-key' };
    const [a, b] = [await startFront(upstream, upstream.base, env), await startFront(upstream, upstream.base, env)];
    fronts.push(a!, b!);
    const username = unique('idem');
    const key = unique('key-');
    const served = await upstreamServed(upstream, 'AddHumanUser');

    const first = await a!.post(ADD_USER, { input: newUser(username) }, { 'idempotency-key': key });
    expect(first.json?.errors, first.text).toBeUndefined();
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const again = await b!.post(ADD_USER, { input: newUser(username) }, { 'idempotency-key': key });
    expect(again.status).toBe(first.status);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);

    expect(await a!.calls('AddHumanUser')).toBe(1);
    expect(await b!.calls('AddHumanUser')).toBe(0);
    expect(await upstreamServed(upstream, 'AddHumanUser')).toBe(served + 1);
    const users = await upstream.post({ query: USERS, variables: { prefix: username } });
    expect(users.json.data.users.edges.map((e: any) => e.node.id)).toEqual([first.json.data.addHumanUser.userId]);
  });
});

/** An h2 proxy to `upstream` listening on `port` (the port a front already points at). */
async function h2ProxyOn(port: number, upstream: ChildGateway) {
  return h2Proxy(Number(new URL(upstream.base).port), port);
}
