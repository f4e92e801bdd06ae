// The delivery queue and its worker under faults, with a real SMTP server,
// on the in-process queue and on a Redis stream (real Redis):
// SMTP down then up, a job that always fails, a worker that dies mid-job,
// Redis killed and restarted with AOF, and no clear code left in Redis.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AddHumanUserDocument, VerifyEmailDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { codeIn, startSmtp, until, type SmtpCatcher } from './support/smtp.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { createSmtpSender } from '../src/notify/email.ts';
import type { DeliveryJob } from '../src/notify/port.ts';
import { createMemoryQueue, type DeliveryQueue } from '../src/notify/queue.ts';
import { createRedisQueue } from '../src/notify/redis-queue.ts';
import { createCodeSeal } from '../src/notify/seal.ts';
import { backoffDelay, createDeliveryMetrics, startWorker, type DeliveryWorker } from '../src/notify/worker.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Queue', lastName: 'Tester' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Clear codes of the jobs these tests make themselves: letters and digits, never part of an id. */
const testCode = () => `Q${Math.random().toString(36).slice(2, 7).toUpperCase().padEnd(5, 'Z')}`;
const seal = createCodeSeal('queue-test-key');

function job(to: string, code = testCode()): DeliveryJob {
  return {
    kind: 'verify-email-on-create',
    userId: unique('u'),
    orgId: 'org-1',
    to,
    code,
    urlTemplate: 'https://app.example/v?c={{.Code}}',
  };
}

it('backoff doubles from DELIVERY_BACKOFF_MS and stops at the cap', () => {
  expect([1, 2, 3, 4, 5, 6].map((t) => backoffDelay(t, 100, 1000))).toEqual([100, 200, 400, 800, 1000, 1000]);
});

/** Runs the same suite on both queues; `redis` gives the URL when it is the Redis one. */
function queueSuite(name: string, kind: 'memory' | 'redis', redisUrl: () => string) {
  describe(name, () => {
    const logs: string[] = [];
    const logger = createLogger('debug', (l) => logs.push(l));
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
    });

    const env = (extra: Record<string, string> = {}) => ({
      ...(kind === 'redis' ? { REDIS_URL: redisUrl(), CODE_HMAC_KEY: 'queue-key', DELIVERY_KEY_PREFIX: `${unique('qt')}:` } : {}),
      ...extra,
    });
    const newQueue = async (prefix: string, claimIdleMs = 60_000): Promise<DeliveryQueue> => {
      const q =
        kind === 'redis'
          ? await createRedisQueue({ url: redisUrl(), keyPrefix: prefix, claimIdleMs, maxBlockMs: 200 })
          : createMemoryQueue({ claimIdleMs });
      cleanups.push(() => q.close());
      return q;
    };
    const smtpSender = (smtp: SmtpCatcher) =>
      createSmtpSender(loadConfig({ SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'q@auth.example' }));
    const worker = (queue: DeliveryQueue, smtp: SmtpCatcher, extra: { maxTries?: number; name?: string } = {}) => {
      const metrics = createDeliveryMetrics();
      const w: DeliveryWorker = startWorker({
        queue,
        seal,
        senders: { email: smtpSender(smtp) },
        logger,
        metrics,
        maxTries: extra.maxTries ?? 5,
        backoffMs: 20,
        maxBackoffMs: 200,
        pollMs: 200,
        name: extra.name,
      });
      cleanups.push(() => w.stop());
      return { worker: w, metrics };
    };
    const noCodeInRedis = async (codes: string[]) => {
      if (kind !== 'redis') return;
      const all = await everythingInRedis(redisUrl());
      for (const code of codes) expect(holdsCode(all, code), `code ${code} still in Redis`).toBe(false);
    };

    it('SMTP down at first and up later: the mail arrives after retries and its code verifies', async () => {
      const smtp = await startSmtp({ listen: false }); // nothing listens on its port yet
      cleanups.push(() => smtp.stop());
      const gw: TestGateway = await startGateway({
        env: env({
          SMTP_HOST: '127.0.0.1',
          SMTP_PORT: String(smtp.port),
          DELIVERY_BACKOFF_MS: '100',
          DELIVERY_MAX_BACKOFF_MS: '400',
          DELIVERY_MAX_TRIES: '30',
        }),
      });
      cleanups.push(() => gw.close());
      const email = `${unique('late')}@example.com`;
      const started = Date.now();
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email } } });
      expect(res.errors, res.text).toBeUndefined();
      // The mutation did not wait for the send: it answered while nothing listened, and long
      // before the tries below (up to 30, every 100 to 400 ms) ran out.
      expect(Date.now() - started).toBeLessThan(15_000);
      const metrics = gw.gateway.delivery!.metrics;
      await until(() => metrics.retried >= 3, 15_000, 'three failed tries');
      expect(metrics.sent).toBe(0);
      expect(smtp.mails).toEqual([]);

      await smtp.listen();
      const mail = await smtp.waitFor((m) => m.to.includes(email));
      const code = codeIn(mail);
      await until(() => metrics.sent === 1, 5000, 'the send to be counted'); // the server has the mail before the client hears 250
      expect(metrics).toMatchObject({ queued: 1, sent: 1, deadLettered: 0 });
      const warnings = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'notification failed, will retry');
      expect(warnings.length).toBeGreaterThanOrEqual(3);
      expect(warnings[0]).toMatchObject({
        kind: 'verify-email-on-create',
        to: expect.stringMatching(/^l\*\*\*@example\.com$/),
        attempt: 1,
        retryInMs: 100,
      });
      expect(warnings[1]).toMatchObject({ attempt: 2, retryInMs: 200 });

      const userId = res.data!.addHumanUser.userId;
      const verify = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: code } });
      expect(verify.errors, verify.text).toBeUndefined();
      expect(holdsCode(gw.logs.join('\n'), code)).toBe(false);
      await until(async () => (await gw.gateway.delivery!.queue.depth()).queued === 0, 5000, 'the queue to empty');
      expect(await gw.gateway.delivery!.queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 0 });
      await noCodeInRedis([code]);
    });

    it('a job that always fails ends in the dead letters after the configured tries, without its clear code', async () => {
      const smtp = await startSmtp();
      cleanups.push(() => smtp.stop());
      smtp.refuseAll = true; // 451 for every recipient
      const queue = await newQueue(`${unique('dead')}:`);
      const { metrics } = worker(queue, smtp, { maxTries: 3 });
      const doomed = job(`${unique('never')}@example.com`);
      await queue.enqueue(seal.seal(doomed));

      await until(async () => (await queue.deadLetters()).length === 1, 15_000, 'the dead letter');
      const [letter] = await queue.deadLetters();
      expect(letter).toMatchObject({ kind: 'verify-email-on-create', userId: doomed.userId, orgId: 'org-1', attempts: 3 });
      expect(letter!.to).toBe(`n***@example.com`);
      expect(letter!.error).toMatch(/451/);
      expect(JSON.stringify(letter)).not.toContain(doomed.code);
      expect(Object.keys(letter!).sort()).toEqual([
        'attempts',
        'enqueuedAt',
        'error',
        'failedAt',
        'jobId',
        'kind',
        'orgId',
        'to',
        'userId',
      ]);
      expect(smtp.recipientsTried.filter((r) => r === doomed.to)).toHaveLength(3);
      expect(smtp.mails).toEqual([]);
      expect(metrics).toMatchObject({ sent: 0, retried: 2, deadLettered: 1 });
      expect(await queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 1 });
      expect(holdsCode(logs.join('\n'), doomed.code)).toBe(false);
      await noCodeInRedis([doomed.code]);
    });

    it('a worker that dies between taking a job and acknowledging it: another claims it after the idle time and delivers it once', async () => {
      const smtp = await startSmtp();
      cleanups.push(() => smtp.stop());
      const prefix = `${unique('crash')}:`;
      const queue = await newQueue(prefix, 400);
      const jobs = [0, 1, 2].map((i) => job(`${unique(`c${i}-`)}@example.com`));
      for (const j of jobs) await queue.enqueue(seal.seal(j));

      let takenTo: string;
      if (kind === 'redis') {
        // A real process reads the first job with XREADGROUP and is killed with SIGKILL before acknowledging.
        const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/queue-taker.ts', redisUrl(), prefix], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        cleanups.push(async () => child.exitCode === null && child.kill('SIGKILL'));
        const line = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout! }).once('line', resolve);
          child.once('exit', (code) => reject(new Error(`queue-taker exited with ${code}`)));
        });
        takenTo = JSON.parse(line).to;
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        });
        expect((await queue.depth()).pending).toBe(1);
      } else {
        // In-process: a consumer takes the job and is dropped without acknowledging.
        const doomed = queue.consumer('doomed');
        const entry = await doomed.take(1000);
        takenTo = entry!.job.to;
        await doomed.close();
      }
      expect(takenTo).toBe(jobs[0]!.to);

      const { metrics } = worker(queue, smtp);
      for (const j of jobs) await smtp.waitFor((m) => m.to.includes(j.to));
      await sleep(1200); // three claim periods: a second delivery would have happened by now
      for (const j of jobs) {
        const mails = smtp.to(j.to);
        expect(mails, j.to).toHaveLength(1);
        expect(codeIn(mails[0]!)).toBe(j.code);
      }
      expect(metrics).toMatchObject({ sent: 3, retried: 0, deadLettered: 0 });
      expect(await queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 0 });
      await noCodeInRedis(jobs.map((j) => j.code));
    });

    it('a consumer closed while its take claims a job another left: the job is not lost, a later consumer gets it', async () => {
      const claimIdleMs = 300;
      const queue = await newQueue(`${unique('close')}:`, claimIdleMs);
      const j = job(`${unique('close-')}@example.com`);
      await queue.enqueue(seal.seal(j));
      const left = await queue.consumer('left').take(1000); // never acknowledged
      expect(left!.job.to).toBe(j.to);
      await sleep(claimIdleMs + 100);
      // The take's claim and the close's look at what the consumer holds interleave on one connection.
      const closing = queue.consumer('closing');
      await Promise.all([closing.take(100), closing.close()]);
      await sleep(claimIdleMs + 100);
      const later = await queue.consumer('later').take(1000);
      expect(later?.job.to).toBe(j.to);
    });

    it('several workers share the queue: every job goes out exactly once', async () => {
      const smtp = await startSmtp();
      cleanups.push(() => smtp.stop());
      const queue = await newQueue(`${unique('many')}:`);
      const workers = [worker(queue, smtp), worker(queue, smtp), worker(queue, smtp)];
      const jobs = Array.from({ length: 12 }, (_, i) => job(`${unique(`m${i}-`)}@example.com`));
      await Promise.all(jobs.map((j) => queue.enqueue(seal.seal(j))));
      await until(() => smtp.mails.length >= jobs.length, 15_000, 'all mails');
      await until(() => workers.reduce((n, w) => n + w.metrics.sent, 0) >= jobs.length, 5000, 'the sends to be counted');
      await sleep(300);
      expect(smtp.mails.map((m) => m.to[0]).sort()).toEqual(jobs.map((j) => j.to).sort());
      expect(workers.reduce((n, w) => n + w.metrics.sent, 0)).toBe(jobs.length);
      if (kind === 'redis') expect(workers.filter((w) => w.metrics.sent > 0).length).toBeGreaterThan(1);
      await noCodeInRedis(jobs.map((j) => j.code));
    });
  });
}

queueSuite('in-process queue', 'memory', () => '');
describeWith('redis', 'Redis stream queue', (url) => {
  queueSuite('the same suite', 'redis', () => url);
});

describeWith('redis', 'Redis killed and restarted with AOF while jobs are queued', () => {
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let smtp: SmtpCatcher;
  let gw: TestGateway;

  beforeAll(async () => {
    redis = await ownRedis(inject('redisServerBin'), { persistence: 'aof' });
    smtp = await startSmtp();
    // No worker in the gateway: the jobs stay queued until the test starts one.
    gw = await startGateway({
      env: { REDIS_URL: redis.url, CODE_HMAC_KEY: 'aof-key', SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), RUN_WORKER: 'false' },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.stop();
    await redis?.close();
  });

  it('loses no job: all are delivered after the restart and their codes verify; nothing of them stays in Redis', async () => {
    const users: { userId: string; email: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const email = `${unique(`aof${i}-`)}@example.com`;
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email } } });
      expect(res.errors, res.text).toBeUndefined();
      users.push({ userId: res.data!.addHumanUser.userId, email });
    }
    const queue = gw.gateway.delivery!.queue;
    // One job has failed once already and waits in the retry set.
    const failing = queue.consumer('before-crash');
    const entry = (await failing.take(1000))!;
    await failing.retry(entry, 300, 'simulated failure');
    await failing.close();
    expect(await queue.depth()).toEqual({ queued: 4, pending: 0, delayed: 1, deadLettered: 0 });

    await redis.down();
    await redis.up();

    const worker = gw.gateway.delivery!.startWorker({ pollMs: 200 });
    for (const u of users) await smtp.waitFor((m) => m.to.includes(u.email), 20_000);
    await worker.stop();
    expect(smtp.mails).toHaveLength(5);
    const codes: string[] = [];
    for (const u of users) {
      const code = codeIn(smtp.to(u.email)[0]!);
      codes.push(code);
      // The gateway's Redis clients reconnect by themselves; retry while they still answer UNAVAILABLE.
      let verify = await gw.send(VerifyEmailDocument, { input: { userId: u.userId, verificationCode: code } });
      for (let i = 0; i < 40 && verify.errors?.[0]?.extensions?.code === 'UNAVAILABLE'; i++) {
        await sleep(250);
        verify = await gw.send(VerifyEmailDocument, { input: { userId: u.userId, verificationCode: code } });
      }
      expect(verify.errors, verify.text).toBeUndefined();
    }
    expect(await queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 0 });
    const all = await everythingInRedis(redis.url);
    for (const code of codes) expect(holdsCode(all, code)).toBe(false);
  });
});
