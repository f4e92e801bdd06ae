// With Redis or MongoDB gone, a mutation answers UNAVAILABLE and leaves nothing half-written;
// when the server is back, the same mutation succeeds.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AddHumanUserDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanProfileDocument,
  VerifyEmailDocument,
} from './generated/graphql.ts';
import { expectRestStatus, onlyError, startGateway, startGatewayBehindProxy, type TestGateway } from './support/gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { describeWith } from './support/servers.ts';
import type { User } from '../src/model/users.ts';
import { UnavailableError } from '../src/errors.ts';

const profile = { firstName: 'Fault', lastName: 'Tolerant' };
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |node_modules|Mongo\w+Error|ECONNREFUSED/);
/** A MongoDB wire message of `command` (insert, find, …) on the events collection, for the test proxy. */
const onEvents = (command: string) => (m: Buffer) =>
  m.includes(Buffer.from(`\x02${command}\x00`, 'latin1')) && m.includes(Buffer.from('events\x00', 'latin1'));

/** Retries while the gateway still answers UNAVAILABLE (clients reconnect with a back-off). */
async function eventually<T extends { errors?: { extensions?: { code?: string } }[] }>(work: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    const res = await work();
    if (res.errors?.[0]?.extensions?.code !== 'UNAVAILABLE' || tries > 60) return res;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describeWith('redis', 'when Redis stops', () => {
  let redis: Awaited<ReturnType<typeof ownRedis>>;
  let gw: TestGateway;

  beforeAll(async () => {
    redis = await ownRedis(inject('redisServerBin'));
    gw = await startGateway({ env: { REDIS_URL: redis.url, CODE_HMAC_KEY: 'fault-key' } });
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.close();
  });

  it('addHumanUser and setEmail answer UNAVAILABLE, write nothing, and work once Redis is back', async () => {
    const existing = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: 'keep@example.com', returnCode: true } } });
    const existingId = existing.data!.addHumanUser.userId;
    const before = (await gw.gateway.deps.store.load<User>('user', existingId))!;

    await redis.down();
    const created = await gw.send(AddHumanUserDocument, {
      input: { userId: 'redis-down-user', username: 'redis-down', profile, email: { email: 'new@example.com' } },
    });
    expect(onlyError(created).extensions?.code).toBe('UNAVAILABLE');
    expectRestStatus(created, 503);
    noStack(created.text);
    expect(await gw.gateway.deps.store.load('user', 'redis-down-user')).toBeNull();
    expect(await gw.gateway.deps.store.lookup('username:redis-down')).toBeNull();

    const changed = await gw.send(SetEmailDocument, { input: { userId: existingId, email: 'changed@example.com', returnCode: true } });
    expect(onlyError(changed).extensions?.code).toBe('UNAVAILABLE');
    const after = (await gw.gateway.deps.store.load<User>('user', existingId))!;
    expect(after.sequence).toBe(before.sequence);
    expect(after.state.email).toEqual(before.state.email);

    // Operations that need no code keep working without Redis.
    const profileChange = await gw.send(UpdateHumanProfileDocument, {
      input: { userId: existingId, firstName: 'Still', lastName: 'Working' },
    });
    expect(profileChange.errors).toBeUndefined();

    await redis.up();
    const retried = await eventually(() =>
      gw.send(AddHumanUserDocument, {
        input: { userId: 'redis-down-user', username: 'redis-down', profile, email: { email: 'new@example.com', returnCode: true } },
      }),
    );
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.addHumanUser.emailCode).toMatch(/^[A-Z0-9]{6}$/);
  });
});

describeWith('mongo', 'when MongoDB stops', (mongoUrl) => {
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof startGatewayBehindProxy>>['proxy'];
  beforeAll(async () => {
    ({ gw, proxy } = await startGatewayBehindProxy(mongoUrl, 'faults'));
  });
  afterAll(async () => gw?.close());

  it('mutations answer UNAVAILABLE, no user or username claim is left behind, and the same create succeeds later', async () => {
    const existing = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: 'stay@example.com', isVerified: true } } });
    const existingId = existing.data!.addHumanUser.userId;

    await proxy.down();
    const created = await gw.send(AddHumanUserDocument, {
      input: { userId: 'mongo-down-user', username: 'mongo-down', profile, email: { email: 'down@example.com', isVerified: true } },
    });
    expect(onlyError(created).extensions?.code).toBe('UNAVAILABLE');
    expectRestStatus(created, 503);
    noStack(created.text);
    const update = await gw.send(UpdateHumanProfileDocument, { input: { userId: existingId, firstName: 'Never', lastName: 'Written' } });
    expect(onlyError(update).extensions?.code).toBe('UNAVAILABLE');
    noStack(update.text);

    await proxy.up();
    const retried = await eventually(() =>
      gw.send(AddHumanUserDocument, {
        input: { userId: 'mongo-down-user', username: 'mongo-down', profile, email: { email: 'down@example.com', isVerified: true } },
      }),
    );
    expect(retried.errors).toBeUndefined();
    expect(retried.data!.addHumanUser.details.sequence).toBe('1');
    const untouched = (await gw.gateway.deps.store.load<User>('user', existingId))!;
    expect(untouched.sequence).toBe(1);
    expect(untouched.state.profile.firstName).toBe('Fault');
  });

  /**
   * `send` while the answer to the next insert into `events` never comes back (the server has the
   * event, the gateway a dropped connection); exactly one answer is lost. Delays set by the test end with it.
   */
  async function losingNextEventInsert<T>(send: () => Promise<T>): Promise<T> {
    let armed = true;
    proxy.loseAnswers((m) => armed && onEvents('insert')(m) && !(armed = false));
    const before = proxy.lost;
    try {
      return await send();
    } finally {
      proxy.loseAnswers(undefined);
      proxy.delayRequests(undefined);
      expect(proxy.lost - before).toBe(1);
    }
  }

  it('an event written whose answer is lost (the connection dropped after the insert): the mutation answers OK, and once', async () => {
    const existing = await gw.send(AddHumanUserDocument, {
      input: { profile, email: { email: `lost-${Date.now()}@example.com`, isVerified: true } },
    });
    const userId = existing.data!.addHumanUser.userId;
    const update = await losingNextEventInsert(() =>
      gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'Written', lastName: 'Once' } }),
    );
    expect(update.errors, update.text).toBeUndefined();
    expect(update.data!.updateHumanProfile.details.sequence).toBe('2');
    const events = await gw.gateway.deps.store.events('user', userId);
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
    expect((await gw.gateway.deps.store.load<User>('user', userId))!.state.profile.firstName).toBe('Written');
  });

  it('an event written whose answer is lost, and the lookup of it answered 6 s late: the mutation answers OK, and once', async () => {
    const existing = await gw.send(AddHumanUserDocument, {
      input: { profile, email: { email: `slow-${Date.now()}@example.com`, isVerified: true } },
    });
    const userId = existing.data!.addHumanUser.userId;
    // The lookup by the event's _id (a find on events): the only find on events of this request.
    proxy.delayRequests(onEvents('find'), 6000);
    const update = await losingNextEventInsert(() =>
      gw.send(SetHumanPasswordDocument, { input: { userId, password: 'Slow-Lookup-Pass-1', noChangeRequired: true } }),
    );
    expect(update.errors, update.text).toBeUndefined();
    expect(update.data!.setHumanPassword.details.sequence).toBe('2');
    const events = await gw.gateway.deps.store.events('user', userId);
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
  });
});

const READ_BOUND_MS = 3000;

describeWith('mongo', 'when MongoDB stalls (connections up, no answer)', (mongoUrl) => {
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof startGatewayBehindProxy>>['proxy'];
  beforeAll(async () => {
    // A bound well above what a loaded machine needs for an unhindered read (every read of
    // this gateway has it), well below the driver's own ~40 s and the stalls below.
    ({ gw, proxy } = await startGatewayBehindProxy(mongoUrl, 'stall', { MONGODB_READ_TIMEOUT_MS: String(READ_BOUND_MS) }));
  });
  afterAll(async () => {
    proxy?.release();
    await gw?.close();
  });

  it('a mutation answers UNAVAILABLE while it is still stalled (MONGODB_READ_TIMEOUT_MS), writes nothing, and works once it answers', async () => {
    const existing = await gw.send(AddHumanUserDocument, {
      input: { profile, email: { email: `stall-${Date.now()}@example.com`, isVerified: true } },
    });
    const userId = existing.data!.addHumanUser.userId;

    proxy.hold();
    try {
      // Held until the finally below: without the bound these take the driver's ~40 s to give the
      // server up, and the test times out first.
      const update = await gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'Stalled', lastName: 'Never' } });
      expect(onlyError(update).extensions?.code).toBe('UNAVAILABLE');
      expectRestStatus(update, 503);
      noStack(update.text);
      const created = await gw.send(AddHumanUserDocument, {
        input: { userId: 'stalled-user', username: 'stalled', profile, email: { email: 'stalled@example.com', isVerified: true } },
      });
      expect(onlyError(created).extensions?.code).toBe('UNAVAILABLE');
      // The reads given up are given up by the driver too: none still waits on a connection.
      const reads = (m: Buffer) => m.includes(Buffer.from('\x02find\x00', 'latin1'));
      for (const until = Date.now() + 10_000; proxy.heldMessages(reads).open > 0 && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 50));
      expect(proxy.heldMessages(reads)).toMatchObject({ held: expect.any(Number), open: 0 });
      expect(proxy.heldMessages(reads).held).toBeGreaterThan(0);
    } finally {
      proxy.release();
    }

    const retried = await eventually(() =>
      gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'After', lastName: 'Stall' } }),
    );
    expect(retried.errors, retried.text).toBeUndefined();
    expect(retried.data!.updateHumanProfile.details.sequence).toBe('2');
    const events = await gw.gateway.deps.store.events('user', userId);
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
    expect(await gw.gateway.deps.store.load('user', 'stalled-user')).toBeNull();
    expect(await gw.gateway.deps.store.lookup('username:stalled')).toBeNull();
  });
  it('one read slower than the bound is given up alone: the requests beside it and after it are answered', async () => {
    const created = await Promise.all(
      ['slow', 'fast'].map((name) =>
        gw.send(AddHumanUserDocument, { input: { profile, email: { email: `${name}-${Date.now()}@example.com`, isVerified: true } } }),
      ),
    );
    const [slowId, fastId] = created.map((c) => c.data!.addHumanUser.userId) as [string, string];
    // The slow user's reads (finds naming its id) reach MongoDB 8 s late, past the bound.
    proxy.delayRequests(
      (m) => m.includes(Buffer.from('\x02find\x00', 'latin1')) && m.includes(Buffer.from(slowId, 'latin1')),
      READ_BOUND_MS + 5000,
    );
    try {
      const slow = gw.send(UpdateHumanProfileDocument, { input: { userId: slowId, firstName: 'Slow', lastName: 'Read' } });
      await new Promise((r) => setTimeout(r, 200));
      const beside = await gw.send(UpdateHumanProfileDocument, { input: { userId: fastId, firstName: 'Beside', lastName: 'It' } });
      expect(beside.errors, beside.text).toBeUndefined();
      expect(onlyError(await slow).extensions?.code).toBe('UNAVAILABLE');
      // Given up by the driver too (its connection closed): nothing else of the pool is disturbed.
      const after = await gw.send(UpdateHumanProfileDocument, { input: { userId: fastId, firstName: 'After', lastName: 'It' } });
      expect(after.errors, after.text).toBeUndefined();
      expect(after.data!.updateHumanProfile.details.sequence).toBe('3');
    } finally {
      proxy.delayRequests(undefined);
    }
    const retried = await gw.send(UpdateHumanProfileDocument, { input: { userId: slowId, firstName: 'Slow', lastName: 'Read' } });
    expect(retried.errors, retried.text).toBeUndefined();
    expect(retried.data!.updateHumanProfile.details.sequence).toBe('2');
  });
});

describe('when the store fails after a code was checked', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('verifyEmail answers UNAVAILABLE, keeps the code, and the same code verifies once the store is back', async () => {
    const created = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: 'lost-not@example.com', returnCode: true } } });
    const { userId, emailCode } = created.data!.addHumanUser;
    const deps = gw.gateway.deps;
    const real = deps.store;
    // The append of the verification event fails the way a MongoDB outage makes it fail.
    deps.store = {
      ...real,
      load: real.load.bind(real),
      append: async () => {
        throw new UnavailableError('store unavailable', { cause: new Error('cut') });
      },
    };
    let failed;
    try {
      failed = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: emailCode! } });
    } finally {
      deps.store = real;
    }
    expect(onlyError(failed).extensions?.code).toBe('UNAVAILABLE');
    expect((await real.load<User>('user', userId))!.state.email.isVerified).toBe(false);

    const retried = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: emailCode! } });
    expect(retried.errors, retried.text).toBeUndefined();
    expect((await real.load<User>('user', userId))!.state.email.isVerified).toBe(true);
  });
});
