// The round-trip table's tools (bench/run.ts): a one-request-at-a-time HTTP client, and the
// check of bench/delay-proxy.ts's counting against sequences whose commands and round trips
// are known, with the MongoDB driver's own command monitoring beside the proxy's count.
import { Agent, request } from 'node:http';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import type { DelayProxy, RoundTrips, Window } from './delay-proxy.ts';
import type { HttpRequest } from './scenarios.ts';

/** One keep-alive connection; send() answers the status, the body and the time to the last byte. */
export function sequentialClient(origin: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(origin);
  return {
    send(req: HttpRequest & { headers: Record<string, string> }): Promise<{ status: number; body: string; ms: number }> {
      return new Promise((resolve, reject) => {
        const t0 = performance.now();
        const r = request(
          {
            agent,
            host: base.hostname,
            port: base.port,
            method: req.method,
            path: req.path,
            headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }),
            );
            res.on('error', reject);
          },
        );
        r.on('error', reject);
        r.end(req.body);
      });
    },
    close: () => agent.destroy(),
  };
}

export const isFailure = (r: { status: number; body: string }) => r.status < 200 || r.status > 299 || r.body.includes('"errors"');

export interface SelfCheck {
  ok: boolean;
  /** Each case: what was expected and what the proxy counted (and the driver, for MongoDB). */
  cases: { name: string; expected: Expectation; counted: Expectation; driver?: Record<string, number>; ok: boolean }[];
  /** The two-round-trip case with the check's delay on: added latency / mean hold, should be ~2. */
  delayed?: { addedMs: number; heldMs: number; roundTrips: number };
}

interface Expectation {
  mongodb?: Record<string, number>;
  redis?: Record<string, number>;
  roundTrips: number;
}

const same = (a: Record<string, number> = {}, b: Record<string, number> = {}) =>
  Object.keys({ ...a, ...b }).every((k) => (a[k] ?? 0) === (b[k] ?? 0));

/**
 * Known sequences through the proxies: a command, two in parallel on two pooled connections,
 * a Redis pipeline, and MongoDB beside Redis. Each must count as expected (and, for MongoDB,
 * as the driver's command monitoring saw it), or the round-trip table is not to be trusted.
 */
export async function selfCheck(
  tracker: RoundTrips,
  mongoUrl: string,
  dbName: string,
  redisUrl: string,
  proxies: DelayProxy[],
  delays: { delayMs: number; checkDelayMs: number },
): Promise<SelfCheck> {
  const driver: Record<string, number> = {};
  const mongo = new MongoClient(mongoUrl, { monitorCommands: true, serverSelectionTimeoutMS: 5000 });
  mongo.on('commandStarted', (e) => {
    if (!['hello', 'ismaster', 'isMaster', 'endSessions'].includes(e.commandName))
      driver[e.commandName.toLowerCase()] = (driver[e.commandName.toLowerCase()] ?? 0) + 1;
  });
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const result: SelfCheck = { ok: true, cases: [] };
  const coll = mongo.db(dbName).collection<{ _id: number; n: number }>('selfcheck');
  const key = `bench:selfcheck:${process.pid}`;
  try {
    await mongo.connect();
    await redis.connect();
    await coll.deleteMany({});
    await coll.insertMany([
      { _id: 1, n: 0 },
      { _id: 2, n: 0 },
    ]);
    await redis.set(key, '0');
    // Two pooled connections, so the parallel case needs no new one.
    for (let i = 0; i < 3; i++) await Promise.all([coll.findOne({ _id: 1 }), coll.findOne({ _id: 2 })]);

    // Counted with the delay on, as the table counts round trips (see bench/delay-proxy.ts).
    const run = async (name: string, expected: Expectation, work: () => Promise<unknown>) => {
      for (const p of proxies) p.setDelay(delays.delayMs);
      for (const k of Object.keys(driver)) delete driver[k];
      tracker.begin();
      await work();
      await tracker.idle();
      const w: Window = tracker.end();
      const counted: Expectation = { mongodb: w.commands.mongodb, redis: w.commands.redis, roundTrips: w.roundTrips };
      const driverSaw = { ...driver };
      const ok =
        same(expected.mongodb, counted.mongodb) &&
        same(expected.redis, counted.redis) &&
        expected.roundTrips === counted.roundTrips &&
        same(driverSaw, counted.mongodb);
      result.cases.push({ name, expected, counted, driver: driverSaw, ok });
      if (!ok) result.ok = false;
    };
    await run('one find', { mongodb: { find: 1 }, roundTrips: 1 }, () => coll.findOne({ _id: 1 }));
    await run('find, then two finds in parallel', { mongodb: { find: 3 }, roundTrips: 2 }, async () => {
      await coll.findOne({ _id: 1 });
      await Promise.all([coll.findOne({ _id: 1 }), coll.findOne({ _id: 2 })]);
    });
    await run('update, then insert, then aggregate', { mongodb: { update: 1, insert: 1, aggregate: 1 }, roundTrips: 3 }, async () => {
      await coll.updateOne({ _id: 1 }, { $inc: { n: 1 } });
      await coll.insertOne({ _id: 3, n: 0 });
      await coll.aggregate([{ $match: { n: { $gte: 0 } } }]).toArray();
    });
    await run('Redis pipeline of three, then one', { redis: { get: 2, incr: 1, set: 1 }, roundTrips: 2 }, async () => {
      await redis.pipeline().get(key).incr(key).get(key).exec();
      await redis.set(key, '0');
    });
    const mixed = async () => {
      await Promise.all([coll.findOne({ _id: 1 }), redis.get(key)]);
      await redis.get(key);
    };
    await run('find beside a Redis get, then a get', { mongodb: { find: 1 }, redis: { get: 2 }, roundTrips: 2 }, mixed);

    // The delay: the same two round trips, timed with and without it.
    const time = async (delayMs: number) => {
      for (const p of proxies) p.setDelay(delayMs);
      for (const p of proxies) p.takeHeldMs();
      const ms: number[] = [];
      let held = { sum: 0, n: 0 };
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        await mixed();
        ms.push(performance.now() - t0);
        for (const p of proxies) {
          const h = p.takeHeldMs();
          held = { sum: held.sum + h.meanMs * h.chunks, n: held.n + h.chunks };
        }
      }
      ms.sort((a, b) => a - b);
      return { p50: ms[Math.floor(ms.length / 2)]!, held: held.n ? held.sum / held.n : 0 };
    };
    const plain = await time(0);
    const delayed = await time(delays.checkDelayMs);
    for (const p of proxies) p.setDelay(0);
    const addedMs = delayed.p50 - plain.p50;
    result.delayed = { addedMs: round(addedMs, 2), heldMs: round(delayed.held, 2), roundTrips: round(addedMs / delayed.held, 1) };
    await coll.drop().catch(() => {});
    await redis.del(key);
  } finally {
    for (const p of proxies) p.setDelay(0);
    redis.disconnect();
    await mongo.close();
  }
  return result;
}

export const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
