// Redis commands cut off by a dropped connection are not sent again after the reconnect when
// their caller was already answered: a queued mail (src/notify/redis-queue.ts) and a rate-limit
// hit (src/notify/rate-limit.ts). Code checks and idempotency claims: test/codes.contract.test.ts,
// test/http.idempotency.test.ts; on a Cluster: test/redis.cluster.test.ts.
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { UnavailableError } from '../src/errors.ts';
import { createRedisRateLimiter } from '../src/notify/rate-limit.ts';
import type { SealedDeliveryJob } from '../src/notify/port.ts';
import { createRedisQueue } from '../src/notify/redis-queue.ts';
import { cutOffBehind, faultyProxy } from './support/net.ts';
import { describeWith } from './support/servers.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

describeWith('redis', 'Redis commands cut off by a dropped connection', (redisUrl) => {
  async function behindProxy(test: (proxy: Awaited<ReturnType<typeof faultyProxy>>, url: string) => Promise<void>) {
    const proxy = await faultyProxy(redisUrl);
    await proxy.up();
    try {
      await test(proxy, proxy.url);
    } finally {
      await proxy.down();
    }
  }

  it('a mail job whose enqueue failed is not queued after the reconnect (no mail the caller was told did not go)', () =>
    behindProxy(async (proxy, url) => {
      const keyPrefix = unique('resend-q:');
      const queue = await createRedisQueue({ url, keyPrefix, claimIdleMs: 60_000 });
      const direct = new Redis(redisUrl);
      try {
        const job = (to: string): SealedDeliveryJob => ({
          kind: 'verify-email-on-change',
          userId: 'u',
          orgId: 'o',
          to,
          sealedCode: 'sealed',
        });
        const error = await cutOffBehind(
          proxy,
          () => queue.enqueue(job('cut@example.com')),
          () => queue.enqueue(job('probe@example.com')),
        );
        expect(error).toBeInstanceOf(Error);
        const entries = await direct.xrange(`${keyPrefix}{delivery}:jobs`, '-', '+');
        expect(entries.map(([, fields]) => JSON.parse(fields[1]!).job.to)).toEqual(['probe@example.com']);
      } finally {
        await queue.close();
        direct.disconnect();
      }
    }));

  it('a rate-limit hit that failed is not counted after the reconnect', () =>
    behindProxy(async (proxy, url) => {
      const keyPrefix = unique('resend-r:');
      const limiter = await createRedisRateLimiter({ url, keyPrefix });
      const direct = await createRedisRateLimiter({ url: redisUrl, keyPrefix });
      try {
        const key = unique('caller-');
        const error = await cutOffBehind(
          proxy,
          () => limiter.hit(key, 5, 60_000),
          () => limiter.hit(unique('probe-'), 5, 60_000),
        );
        expect(error).toBeInstanceOf(UnavailableError);
        // The first hit that counts leaves 4 of 5.
        expect(await direct.hit(key, 5, 60_000)).toMatchObject({ allowed: true, remaining: 4 });
      } finally {
        await limiter.close();
        await direct.close();
      }
    }));
});
