// The edge's rate limit (src/http/rate-limit.ts) when its Redis stalls (connections up, no
// answer): the first request waits out the command timeout and is let through; then the
// limiter is left alone for BREAK_MS, and asked again by one request at a time, so the stall
// does not cost every request its timeout. Once Redis answers, limits hold again.
import { expect, it } from 'vitest';
import { BREAK_MS, createRateLimit } from '../src/http/rate-limit.ts';
import { newRequestState } from '../src/http/request-state.ts';
import { createLogger } from '../src/log.ts';
import { createRedisRateLimiter } from '../src/notify/rate-limit.ts';
import { faultyProxy } from './support/net.ts';
import { describeWith } from './support/servers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeWith('redis', 'the rate limit while its Redis stalls', (redisUrl) => {
  it('one request waits for the stalled limiter, the next ones are let through without asking it; limits hold once it answers', async () => {
    const proxy = await faultyProxy(redisUrl);
    await proxy.up();
    const limiter = await createRedisRateLimiter({ url: proxy.url, keyPrefix: `stall-${Date.now().toString(36)}:` });
    let unavailable = 0;
    const check = createRateLimit({
      limiter,
      limits: { rateLimitPerCaller: 2, rateLimitPerIp: 2 },
      logger: createLogger('error', () => {}),
      onLimiterUnavailable: () => unavailable++,
    });
    const state = () => newRequestState(null, '192.0.2.7');
    const asked = () => proxy.heldMessages((m) => m.includes(Buffer.from('rate:http:ip:192.0.2.7'))).held;
    try {
      proxy.hold();
      expect(await check(state())).toBeNull(); // let through after the limiter's timeout
      expect(asked()).toBe(1);
      const during = await Promise.all([check(state()), check(state()), check(state())]);
      expect(during).toEqual([null, null, null]);
      expect(asked()).toBe(1); // not asked again within BREAK_MS
      expect(unavailable).toBe(4);
      proxy.release();

      await sleep(BREAK_MS + 100);
      // The held hit ran when released: the window holds 1 of 2. The next one is asked, and answers.
      expect(await check(state())).toBeNull();
      expect(await check(state())).toMatchObject({ error: { code: 'RESOURCE_EXHAUSTED' } });
      expect(unavailable).toBe(4);
    } finally {
      proxy.release();
      await limiter.close();
      await proxy.down();
    }
  });
});
