// The sliding-window rate limiter behind resendEmailCode / resendPhoneCode, on memory and on real Redis.
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter, createRedisRateLimiter } from '../src/notify/rate-limit.ts';
import type { RateLimiter } from '../src/notify/port.ts';
import { describeWith } from './support/servers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The window: the four hits below must fall in one, on a loaded machine too. */
const WINDOW_MS = 3000;

function limiterSuite(name: string, open: () => Promise<RateLimiter>) {
  describe(name, () => {
    it('allows `limit` hits per window and key, then refuses with the time to wait; the window slides', async () => {
      const limiter = await open();
      const key = `k${Date.now()}${Math.random()}`;
      try {
        const decisions = [];
        for (let i = 0; i < 3; i++) decisions.push(await limiter.hit(key, 3, WINDOW_MS));
        expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
        ]);
        const refused = await limiter.hit(key, 3, WINDOW_MS);
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
        expect((await limiter.hit(`${key}-other`, 3, WINDOW_MS)).allowed).toBe(true);
        await sleep(refused.retryAfterMs + 50);
        expect((await limiter.hit(key, 3, WINDOW_MS)).allowed).toBe(true);
      } finally {
        await limiter.close();
      }
    });
  });
}

limiterSuite('memory rate limiter', async () => createMemoryRateLimiter());
describeWith('redis', 'Redis rate limiter', (url) => {
  limiterSuite('the same suite', () => createRedisRateLimiter({ url, keyPrefix: 'rl-test:' }));
});
