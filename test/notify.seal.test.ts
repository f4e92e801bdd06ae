// The sealed code of a delivery job (src/notify/seal.ts): it opens only with
// the same key and the same job, and a job whose seal does not open is
// dead-lettered without its content and never sent, on both queues.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { startSmtp, until, type SmtpCatcher } from './support/smtp.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { createSmtpSender } from '../src/notify/email.ts';
import type { DeliveryJob, SealedDeliveryJob } from '../src/notify/port.ts';
import { createMemoryQueue } from '../src/notify/queue.ts';
import { createCodeSeal } from '../src/notify/seal.ts';
import { createDeliveryMetrics, startWorker } from '../src/notify/worker.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const job = (): DeliveryJob => ({
  kind: 'verify-email-on-create',
  userId: unique('u'),
  orgId: 'org-1',
  to: `${unique('s')}@example.com`,
  code: 'K7Q2ZX',
  urlTemplate: 'https://app.example/v?c={{.Code}}',
});
/** Changes one character of the ciphertext near the end. */
const flip = (sealed: string) => sealed.replace(/.(?=.{4}$)/, (c) => (c === 'A' ? 'B' : 'A'));

describe('the seal', () => {
  const seal = createCodeSeal('seal-key');

  it('opens to the same job with the same key; the sealed job holds no clear code', () => {
    const clear = job();
    const sealed = seal.seal(clear);
    expect(sealed).not.toHaveProperty('code');
    expect(JSON.stringify(sealed)).not.toContain(clear.code);
    expect(seal.seal(clear).sealedCode).not.toBe(sealed.sealedCode); // a fresh IV each time
    expect(seal.open(sealed)).toEqual(clear);
    expect(createCodeSeal(Buffer.from('seal-key')).open(sealed)).toEqual(clear); // a string key is its UTF-8 bytes
    const { urlTemplate: _, ...noTemplate } = clear;
    expect(seal.open(seal.seal(noTemplate))).toEqual(noTemplate);
  });

  it('does not open with another key, a changed seal, or moved to another job', () => {
    const sealed = seal.seal(job());
    expect(() => createCodeSeal('other-key').open(sealed)).toThrow(/does not open/);
    expect(() => seal.open({ ...sealed, sealedCode: flip(sealed.sealedCode) })).toThrow(/does not open/);
    for (const change of [
      { to: 'attacker@evil.example' },
      { userId: 'u-other' },
      { orgId: 'org-2' },
      { kind: 'verify-email-on-change' as const },
      { urlTemplate: 'https://evil.example/?c={{.Code}}' },
      { urlTemplate: undefined },
    ]) {
      expect(() => seal.open({ ...sealed, ...change }), JSON.stringify(change)).toThrow(/does not open/);
    }
    expect(() => seal.open({ ...sealed, sealedCode: 'v1.AAAA' })).toThrow(/truncated/);
    expect(() => seal.open({ ...sealed, sealedCode: undefined as unknown as string })).toThrow(/no sealed code/);
  });
});

describe('a job whose seal does not open, on the in-process queue', () => {
  let smtp: SmtpCatcher;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });
  afterAll(async () => smtp?.stop());

  it('is dead-lettered unsent, without its content; a good job next to it goes out', async () => {
    const logs: string[] = [];
    const seal = createCodeSeal('worker-key');
    const queue = createMemoryQueue({ claimIdleMs: 60_000 });
    cleanups.push(() => queue.close());
    const metrics = createDeliveryMetrics();
    const worker = startWorker({
      queue,
      seal,
      senders: { email: createSmtpSender(loadConfig({ SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port) })) },
      logger: createLogger('debug', (l) => logs.push(l)),
      metrics,
      maxTries: 3,
      backoffMs: 10,
      maxBackoffMs: 10,
      pollMs: 100,
    });
    cleanups.push(() => worker.stop());
    const good = job();
    const [moved, foreign, unsealed] = [job(), job(), job()];
    await queue.enqueue({ ...seal.seal(moved), to: 'attacker@evil.example' });
    await queue.enqueue(createCodeSeal('another-key').seal(foreign));
    await queue.enqueue(unsealed as unknown as SealedDeliveryJob); // a job queued in the old, clear format
    await queue.enqueue(seal.seal(good));

    await smtp.waitFor((m) => m.to.includes(good.to));
    await until(async () => metrics.sent === 1 && (await queue.depth()).deadLettered === 3, 5000, 'the send and three dead letters');
    expect(smtp.recipientsTried).not.toContain('attacker@evil.example');
    for (const j of [moved, foreign, unsealed]) expect(smtp.recipientsTried).not.toContain(j.to);
    expect(metrics).toMatchObject({ sent: 1, retried: 0, deadLettered: 3 });
    const letters = await queue.deadLetters();
    expect(letters.map((l) => l.error).sort()).toEqual([
      expect.stringMatching(/no sealed code/),
      expect.stringMatching(/does not open/),
      expect.stringMatching(/does not open/),
    ]);
    const text = JSON.stringify(letters) + logs.join('\n');
    expect(holdsCode(text, good.code)).toBe(false);
    expect(text).not.toMatch(/v1\.[\w-]{20}/);
  });
});

describeWith('redis', 'a job whose seal does not open, on the Redis stream queue', (redisUrl) => {
  const KEY = 'seal-redis-key';
  const prefix = `${unique('seal')}:`;
  const stream = `${prefix}{delivery}:jobs`;
  let smtp: SmtpCatcher;
  let gw: TestGateway;
  let admin: Redis;
  beforeAll(async () => {
    smtp = await startSmtp();
    admin = new Redis(redisUrl);
    gw = await startGateway({
      env: {
        REDIS_URL: redisUrl,
        CODE_HMAC_KEY: KEY,
        DELIVERY_KEY_PREFIX: prefix,
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        RUN_WORKER: 'false',
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await smtp?.stop();
    admin?.disconnect();
  });

  it('changed in Redis (moved to another address, or its seal altered): dead-lettered unsent, without its code', async () => {
    const victims: string[] = [];
    for (let i = 0; i < 2; i++) {
      const email = `${unique('victim')}@example.com`;
      const res = await gw.send(AddHumanUserDocument, {
        input: { profile: { firstName: 'Seal', lastName: 'Test' }, email: { email, sendCode: {} } },
      });
      expect(res.errors, res.text).toBeUndefined();
      victims.push(email);
    }
    const attacker = `${unique('attacker')}@evil.example`;
    const entries = (await admin.xrange(stream, '-', '+')) as [string, string[]][];
    expect(entries).toHaveLength(2);
    const jobs: SealedDeliveryJob[] = [];
    for (const [i, [id, fields]] of entries.entries()) {
      const payload = JSON.parse(fields[1]!);
      jobs.push({ ...payload.job });
      if (i === 0) payload.job.to = attacker;
      else payload.job.sealedCode = flip(payload.job.sealedCode);
      await admin.multi().xdel(stream, id).xadd(stream, '*', 'payload', JSON.stringify(payload)).exec();
    }
    const codes = jobs.map((j) => createCodeSeal(KEY).open(j).code); // the test knows the key

    const delivery = gw.gateway.delivery!;
    const worker = delivery.startWorker({ pollMs: 100 });
    await until(async () => (await delivery.queue.depth()).deadLettered === 2, 10_000, 'two dead letters');
    await worker.stop();
    expect(delivery.metrics).toMatchObject({ sent: 0, deadLettered: 2 });
    expect(smtp.recipientsTried).toEqual([]);
    const letters = await delivery.queue.deadLetters();
    expect(letters.map((l) => l.error)).toEqual([expect.stringMatching(/does not open/), expect.stringMatching(/does not open/)]);
    expect(letters.map((l) => l.to).sort()).toEqual([attacker, victims[1]!].map((a) => `${a[0]}***${a.slice(a.indexOf('@'))}`).sort());
    const everywhere = [JSON.stringify(letters), gw.logs.join('\n'), await everythingInRedis(redisUrl)].join('\n');
    for (const [i, code] of codes.entries()) {
      expect(holdsCode(everywhere, code)).toBe(false);
      expect(everywhere).not.toContain(jobs[i]!.sealedCode.slice(3, 23));
    }
    expect(await delivery.queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 2 });
  });
});
