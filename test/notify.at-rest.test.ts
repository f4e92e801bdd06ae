// Regression for a security finding: codes that are sent (not returned) sat in
// clear in the delivery jobs, so in Redis and in its append-only file, and a
// code read from there verified the user. DESIGN.md section 4: the clear code
// exists only in the response payload or in the message being sent.
//
// Every 6-character token found at rest (every Redis value, the AOF as written
// and after a rewrite, the in-process queue's entries) is tried with
// verifyEmail / verifyPhone: none may verify. The codes that reach the SMTP
// server and the SMS provider must verify, so the test cannot pass by sending nothing.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AddHumanUserDocument,
  SetEmailDocument,
  UpdateHumanPhoneDocument,
  VerifyEmailDocument,
  VerifyPhoneDocument,
} from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { startSmsProvider, type SmsProvider } from './support/sms-provider.ts';
import { codeIn, startSmtp, until, type SmtpCatcher } from './support/smtp.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'At', lastName: 'Rest' };
const CODE_HMAC_KEY = 'at-rest-key';
// Wrong guesses must not void the code (5 tries by default) before the right one is tried.
const LOOSE = { CODE_MAX_ATTEMPTS: '1000000', RATE_LIMIT_PER_CALLER_PER_MINUTE: '0', RUN_WORKER: 'false' };

/** Every standalone 6-character token, upper-cased (verification ignores case). */
const tokens = (text: string) =>
  new Set([...text.matchAll(/(?<![A-Za-z0-9])[A-Za-z0-9]{6}(?![A-Za-z0-9])/g)].map((m) => m[0].toUpperCase()));

interface Pending {
  userId: string;
  channel: 'email' | 'phone';
  to: string;
}

/** Tries `token` as the user's code: true when it verified. */
async function verifies(gw: TestGateway, p: Pending, token: string): Promise<boolean> {
  const input = { userId: p.userId, verificationCode: token };
  const res = p.channel === 'email' ? await gw.send(VerifyEmailDocument, { input }) : await gw.send(VerifyPhoneDocument, { input });
  if (!res.errors) return true;
  expect(res.errors[0]?.extensions?.code, res.text).toBe('INVALID_ARGUMENT'); // a real try against a pending code
  return false;
}

async function expectNoneVerifies(gw: TestGateway, pending: Pending[], candidates: Set<string>) {
  expect(candidates.size).toBeGreaterThan(0);
  for (const token of candidates) {
    for (const p of pending) expect(await verifies(gw, p, token), `${token}, found at rest, verified ${p.to}`).toBe(false);
  }
}

async function addUser(gw: TestGateway, email: Record<string, unknown>) {
  const address = `${unique('rest')}@example.com`;
  const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: address, ...email } } });
  expect(res.errors, res.text).toBeUndefined();
  return { userId: res.data!.addHumanUser.userId, email: address };
}

/** Every file under `dir` (Redis 7 keeps the AOF in appendonlydir/, as a base and incremental files), as bytes in latin1. */
function filesUnder(dir: string): string {
  return readdirSync(dir)
    .map((name) => path.join(dir, name))
    .map((file) => (statSync(file).isDirectory() ? filesUnder(file) : readFileSync(file, 'latin1')))
    .join('\n');
}

describeWith('redis', 'no clear code at rest in Redis or its append-only file', () => {
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let admin: Redis;
  let smtp: SmtpCatcher;
  let sms: SmsProvider;
  let gw: TestGateway;
  let dataDir: string;

  beforeAll(async () => {
    redis = await ownRedis(inject('redisServerBin'), { persistence: 'aof' });
    admin = new Redis(redis.url);
    dataDir = String(((await admin.config('GET', 'dir')) as string[])[1]);
    smtp = await startSmtp();
    sms = await startSmsProvider();
    gw = await startGateway({
      env: {
        ...LOOSE,
        REDIS_URL: redis.url,
        CODE_HMAC_KEY,
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMS_WEBHOOK_URL: sms.url,
        DELIVERY_BACKOFF_MS: '50',
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.stop();
    await sms?.close();
    admin?.disconnect();
    await redis?.close();
  });

  async function rewriteAof() {
    // A plain-command rewrite: an RDB preamble would compress the values and hide them from the scan.
    await admin.config('SET', 'aof-use-rdb-preamble', 'no');
    await admin.bgrewriteaof();
    await until(
      async () => /aof_rewrite_in_progress:0[\s\S]*aof_rewrite_scheduled:0/.test(await admin.info('persistence')),
      10_000,
      'the AOF rewrite',
    );
    expect(await admin.info('persistence')).toMatch(/aof_last_bgrewrite_status:ok/);
  }

  it('queued, retried and rewritten: no token found verifies; the codes delivered do', async () => {
    const created = await addUser(gw, { sendCode: { urlTemplate: 'https://app.example/v?u={{.UserID}}&c={{.Code}}' } });
    const changed = await addUser(gw, { isVerified: true });
    const newEmail = `${unique('changed')}@example.com`;
    const set = await gw.send(SetEmailDocument, { input: { userId: changed.userId, email: newEmail, sendCode: {} } });
    expect(set.errors, set.text).toBeUndefined();
    const phoned = await addUser(gw, { isVerified: true });
    const phone = '+41795552001';
    const upd = await gw.send(UpdateHumanPhoneDocument, { input: { userId: phoned.userId, phone } });
    expect(upd.errors, upd.text).toBeUndefined();
    const pending: Pending[] = [
      { userId: created.userId, channel: 'email', to: created.email },
      { userId: changed.userId, channel: 'email', to: newEmail },
      { userId: phoned.userId, channel: 'phone', to: phone },
    ];

    // One job has failed once and waits in the retry set.
    const queue = gw.gateway.delivery!.queue;
    const held = queue.consumer('held');
    await held.retry((await held.take(1000))!, 100, 'simulated failure');
    await held.close();
    expect(await queue.depth()).toEqual({ queued: 2, pending: 0, delayed: 1, deadLettered: 0 });

    const inRedis = await everythingInRedis(redis.url);
    const asWritten = filesUnder(dataDir);
    await rewriteAof();
    const rewritten = filesUnder(dataDir);
    // The scans do see the jobs: their addresses are there.
    for (const text of [inRedis, asWritten, rewritten]) for (const p of pending) expect(text).toContain(p.to);
    await expectNoneVerifies(gw, pending, tokens([inRedis, asWritten, rewritten].join('\n')));

    const worker = gw.gateway.delivery!.startWorker({ pollMs: 100 });
    const delivered = [
      codeIn(await smtp.waitFor((m) => m.to.includes(created.email))),
      codeIn(await smtp.waitFor((m) => m.to.includes(newEmail))),
      /code is ([A-Z0-9]{6})\b/.exec((await sms.waitFor((r) => r.body.to === phone)).body.text ?? '')![1]!,
    ];
    await worker.stop();
    for (const [i, p] of pending.entries()) expect(await verifies(gw, p, delivered[i]!), `the code sent to ${p.to}`).toBe(true);
    const logs = gw.logs.join('\n');
    for (const code of delivered) expect(holdsCode(logs, code), 'a code in the logs').toBe(false);
  });
});

describe('no clear code in the in-process queue (embedded stores)', () => {
  let smtp: SmtpCatcher;
  let gw: TestGateway;
  beforeAll(async () => {
    smtp = await startSmtp();
    gw = await startGateway({ env: { ...LOOSE, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port) } });
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.stop();
  });

  it('a queued job holds no token that verifies; the mail sent from it does', async () => {
    const user = await addUser(gw, { sendCode: {} });
    const queue = gw.gateway.delivery!.queue;
    const consumer = queue.consumer('look');
    const entry = (await consumer.take(1000))!;
    const atRest = JSON.stringify(entry);
    expect(atRest).toContain(user.email);
    await consumer.retry(entry, 0, 'looked at');
    await consumer.close();
    const pending: Pending = { userId: user.userId, channel: 'email', to: user.email };
    await expectNoneVerifies(gw, [pending], tokens(atRest));

    const worker = gw.gateway.delivery!.startWorker({ pollMs: 100 });
    const code = codeIn(await smtp.waitFor((m) => m.to.includes(user.email)));
    await worker.stop();
    expect(holdsCode(atRest, code)).toBe(false);
    expect(await verifies(gw, pending, code)).toBe(true);
  });
});
