// The round-trip budget (DESIGN.md section 10), counted at the wire, not timed:
// each operation goes through the real gateway over HTTP on MongoDB-wire and a
// Redis of the test's own, after a warm-up of the same operation, and the test
// counts the MongoDB commands (the driver's command monitoring), how many of them
// ran one after another (round trips: a command that starts after another's
// reply is one deeper; commands in flight together share one), and the Redis
// commands (MONITOR, between two markers). The targets are created by a second
// gateway on the same database, so nothing about them is warm in the measured one.
// The measured gateway reaches MongoDB through a proxy that holds every request
// ANSWER_DELAY_MS while a request is measured: commands sent together are all started
// long before any answer comes, whatever the load on the machine. (Without it, a loaded
// machine let two answers in before a third command of the same wave had started, and
// counted one round trip too many.)
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { MongoCommandEvent, MongoEventStore } from '../src/store/mongo.ts';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  MeDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanPhoneDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UserDocument,
} from './generated/graphql.ts';
import { startGateway, type Response, type TestGateway } from './support/gateway.ts';
import { faultyProxy } from './support/net.ts';
import { ownRedis } from './support/own-redis.ts';
import { describeRequiring, describeWith } from './support/servers.ts';

/** How long the proxy holds each MongoDB request of a measured operation (see the header). */
const ANSWER_DELAY_MS = 250;

/** The budget: MongoDB commands and sequential round trips at most (DESIGN.md section 10, issue 12). */
// A read is one round trip (the caller and its target in one find); a write adds two (the
// event, then its state). Redis: the rate limit's one command, plus the code kept and the mail
// queued where a code is sent, or the cleared phone code deleted.
const budget: Record<string, { commands: number; roundTrips: number; redis: number }> = {
  me: { commands: 1, roundTrips: 1, redis: 1 },
  user: { commands: 3, roundTrips: 1, redis: 1 },
  updateMyProfile: { commands: 3, roundTrips: 3, redis: 1 },
  updateHumanProfile: { commands: 5, roundTrips: 3, redis: 1 },
  'updateHumanProfile (x-service-orgid)': { commands: 5, roundTrips: 3, redis: 1 },
  'updateHumanProfile (org user manager)': { commands: 5, roundTrips: 3, redis: 1 },
  setEmail: { commands: 5, roundTrips: 3, redis: 3 },
  updateHumanPhone: { commands: 5, roundTrips: 3, redis: 2 },
  setHumanPassword: { commands: 5, roundTrips: 3, redis: 1 },
  addHumanUser: { commands: 8, roundTrips: 4, redis: 3 },
};

interface Measured {
  operation: string;
  commands: number;
  roundTrips: number;
  redis: number;
  /** Each wave of MongoDB commands, for the log: "find users, find instances | insert events | update users". */
  waves: string;
  redisCommands: string;
}

/** Depth of each command: 1 + the deepest command that had answered when it started. */
export function roundTripsOf(events: readonly MongoCommandEvent[]): { depth: number; waves: string[][] } {
  const depthOf = new Map<number, number>();
  const waves: string[][] = [];
  let deepestAnswered = 0;
  for (const e of events) {
    if (e.phase === 'started') {
      const depth = deepestAnswered + 1;
      depthOf.set(e.requestId, depth);
      (waves[depth - 1] ??= []).push(`${e.command} ${e.collection ?? ''}`.trim());
    } else {
      deepestAnswered = Math.max(deepestAnswered, depthOf.get(e.requestId) ?? 0);
    }
  }
  return { depth: waves.length, waves };
}

it('counts a wave of parallel commands as one round trip', () => {
  const ev = (phase: MongoCommandEvent['phase'], requestId: number): MongoCommandEvent => ({
    phase,
    requestId,
    command: 'find',
    collection: 'c',
  });
  // 1 and 2 together; 3 after 1 answered while 2 is still out; 4 after 3.
  const events = [
    ev('started', 1),
    ev('started', 2),
    ev('succeeded', 1),
    ev('started', 3),
    ev('succeeded', 2),
    ev('succeeded', 3),
    ev('started', 4),
    ev('failed', 4),
  ];
  expect(roundTripsOf(events)).toEqual({ depth: 3, waves: [['find c', 'find c'], ['find c'], ['find c']] });
  expect(roundTripsOf([])).toEqual({ depth: 0, waves: [] });
});

describeWith('mongo', 'round trips per operation on MongoDB-wire and Redis', (mongoUrl) => {
  describeRequiring(
    inject('redisServerBin'),
    'redis-server not found (this suite watches a Redis of its own)',
    'through the gateway over HTTP',
    () => {
      let redis: Awaited<ReturnType<typeof ownRedis>>;
      let gw: TestGateway;
      let creator: TestGateway;
      let probe: Redis;
      let monitor: Redis;
      let proxy: Awaited<ReturnType<typeof faultyProxy>>;
      const mongoEvents: MongoCommandEvent[] = [];
      let recording = false;
      let redisLog: { source: string; args: string[] }[] = [];
      const table: Measured[] = [];
      let seq = 0;
      const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

      beforeAll(async () => {
        redis = await ownRedis(inject('redisServerBin'));
        const env = {
          MONGODB_URL: mongoUrl,
          MONGODB_DB: `round_trips_${Date.now()}`,
          REDIS_URL: redis.url,
          CODE_HMAC_KEY: 'round-trips',
          RUN_WORKER: 'false', // no worker polling Redis in the background
          // Nor a node-id lease renewal (every third of the TTL, 10 s by default) landing inside
          // a measured request and counted as one of its commands: the slower the requests,
          // the likelier that was.
          NODE_ID_LEASE_TTL_MS: String(24 * 3600_000),
        };
        proxy = await faultyProxy(mongoUrl);
        await proxy.up();
        gw = await startGateway({ env: { ...env, MONGODB_URL: proxy.url } });
        creator = await startGateway({ env });
        (gw.gateway.stores.store as MongoEventStore).onCommand((e) => {
          if (recording) mongoEvents.push(e);
        });
        probe = new Redis(redis.url);
        monitor = await new Redis(redis.url).monitor();
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          if (source !== 'lua') redisLog.push({ source, args });
        });
      });

      afterAll(async () => {
        monitor?.disconnect();
        probe?.disconnect();
        await gw?.close();
        await proxy?.down();
        await creator?.close();
        await redis?.close();
        if (table.length > 0) {
          const rows = table.map((r) => `| ${r.operation} | ${r.commands} | ${r.roundTrips} | ${r.redis} |`);
          console.log(
            [
              '',
              'Round trips per operation (MongoDB-wire + Redis, through the gateway over HTTP, after a warm-up):',
              '',
              '| operation | MongoDB commands | round trips | Redis commands |',
              '|---|---|---|---|',
              ...rows,
              '',
              ...table.map((r) => `${r.operation}: mongo ${r.waves || '-'}; redis ${r.redisCommands || '-'}`),
              '',
            ].join('\n'),
          );
        }
      });

      /** Redis commands between two markers, the probe's own left out. */
      async function redisBetween<T>(work: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
        const marker = unique('mark');
        const seen = (m: string) => redisLog.some((l) => l.args[0]?.toLowerCase() === 'echo' && l.args[1] === m);
        const waitFor = async (m: string) => {
          for (const until = Date.now() + 15_000; !seen(m) && Date.now() < until;) await new Promise((r) => setTimeout(r, 5));
          if (!seen(m)) throw new Error(`the Redis monitor never saw ${m}`);
        };
        redisLog = [];
        await probe.echo(`${marker}-start`);
        await waitFor(`${marker}-start`);
        const result = await work();
        await probe.echo(`${marker}-end`);
        await waitFor(`${marker}-end`);
        const from = redisLog.findIndex((l) => l.args[1] === `${marker}-start`);
        const to = redisLog.findIndex((l) => l.args[1] === `${marker}-end`);
        const commands = redisLog.slice(from + 1, to).map((l) => l.args[0]!.toLowerCase());
        return { result, commands };
      }

      async function measure<T>(operation: string, send: () => Promise<Response<T>>): Promise<Measured> {
        mongoEvents.length = 0;
        const { result, commands } = await redisBetween(async () => {
          recording = true;
          proxy.delayRequests(() => true, ANSWER_DELAY_MS);
          try {
            return await send();
          } finally {
            proxy.delayRequests(undefined);
            recording = false;
          }
        });
        expect(result.errors, result.text).toBeUndefined();
        const { depth, waves } = roundTripsOf(mongoEvents);
        const row: Measured = {
          operation,
          commands: mongoEvents.filter((e) => e.phase === 'started').length,
          roundTrips: depth,
          redis: commands.length,
          waves: waves.map((w) => w.join(', ')).join(' | '),
          redisCommands: commands.join(', '),
        };
        table.push(row);
        return row;
      }

      /** A user made by the other gateway (cold here), with an unverified email and no phone. */
      async function target(opts: { orgId?: string } = {}) {
        const res = await creator.send(
          AddHumanUserDocument,
          {
            input: { profile: { firstName: 'Rita', lastName: 'Trip' }, email: { email: `${unique('rt')}@example.com`, returnCode: true } },
          },
          opts,
        );
        if (!res.data) throw new Error(res.text);
        return res.data.addHumanUser.userId;
      }

      const within = (row: Measured) => {
        const limit = budget[row.operation]!;
        expect(row.commands, row.waves).toBeLessThanOrEqual(limit.commands);
        expect(row.roundTrips, row.waves).toBeLessThanOrEqual(limit.roundTrips);
        expect(row.redis, row.redisCommands).toBeLessThanOrEqual(limit.redis);
      };

      it('me: one command', async () => {
        await gw.send(MeDocument, {}); // warm-up: connections, token key
        const row = await measure('me', () => gw.send(MeDocument, {}));
        within(row);
        expect(row.commands).toBe(1);
      });

      it('exposes the same count for production: gateway_mongodb_commands_total{command}', async () => {
        const finds = async () => {
          const text = await (await fetch(`${gw.baseUrl}/metrics`)).text();
          const line = text.split('\n').find((l) => l.startsWith('gateway_mongodb_commands_total{command="find"}'));
          return Number(line?.split(' ').at(-1) ?? 0);
        };
        await gw.send(MeDocument, {});
        const before = await finds();
        const row = await measure('me (again, beside the metric)', () => gw.send(MeDocument, {}));
        table.pop();
        expect(row.commands).toBe(1);
        expect((await finds()) - before).toBe(1);
      });

      it('user (read another user of the organization)', async () => {
        const [warm, id] = [await target(), await target()];
        await gw.send(UserDocument, { id: warm });
        within(await measure('user', () => gw.send(UserDocument, { id })));
      });

      it('updateMyProfile', async () => {
        await gw.send(UpdateMyProfileDocument, { input: { firstName: 'Warm', lastName: 'Up', displayName: 'W' } });
        within(
          await measure('updateMyProfile', () =>
            gw.send(UpdateMyProfileDocument, { input: { firstName: 'Ada', lastName: 'Admin', displayName: 'A' } }),
          ),
        );
      });

      it('updateHumanProfile: at most 5 commands in 3 round trips', async () => {
        const [warm, id] = [await target(), await target()];
        await gw.send(UpdateHumanProfileDocument, { input: { userId: warm, firstName: 'Warm', lastName: 'Up' } });
        within(
          await measure('updateHumanProfile', () =>
            gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'New', lastName: 'Name' } }),
          ),
        );
      });

      it('updateHumanProfile with x-service-orgid', async () => {
        const [warm, id] = [await target(), await target()];
        const orgId = gw.defaultOrgId;
        await gw.send(UpdateHumanProfileDocument, { input: { userId: warm, firstName: 'Warm', lastName: 'Up' } }, { orgId });
        within(
          await measure('updateHumanProfile (x-service-orgid)', () =>
            gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'New', lastName: 'Name' } }, { orgId }),
          ),
        );
      });

      it('updateHumanProfile by an organization user manager (roles in the organization, none in the instance)', async () => {
        const manager = await target();
        const granted = await creator.send(AddOrgMemberDocument, { input: { userId: manager, roles: ['ORG_USER_MANAGER'] } });
        expect(granted.errors, granted.text).toBeUndefined();
        const token = await gw.tokenFor(manager);
        const [warm, id] = [await target(), await target()];
        await gw.send(UpdateHumanProfileDocument, { input: { userId: warm, firstName: 'Warm', lastName: 'Up' } }, { token });
        within(
          await measure('updateHumanProfile (org user manager)', () =>
            gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'New', lastName: 'Name' } }, { token }),
          ),
        );
      });

      it('updateHumanProfile, the first request of a caller this gateway has not seen (its organization not known yet)', async () => {
        const manager = await target();
        const granted = await creator.send(AddOrgMemberDocument, { input: { userId: manager, roles: ['ORG_USER_MANAGER'] } });
        expect(granted.errors, granted.text).toBeUndefined();
        const token = await gw.tokenFor(manager);
        const id = await target();
        const row = await measure('updateHumanProfile (caller not seen before)', () =>
          gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'New', lastName: 'Name' } }, { token }),
        );
        expect(row.commands).toBeLessThanOrEqual(5);
        expect(row.roundTrips).toBeLessThanOrEqual(4); // one more: the caller's organization after the caller
      });

      it('setEmail (a code sent by mail): at most 5 commands in 3 round trips', async () => {
        const [warm, id] = [await target(), await target()];
        await gw.send(SetEmailDocument, { input: { userId: warm, email: `${unique('w')}@example.com` } });
        within(await measure('setEmail', () => gw.send(SetEmailDocument, { input: { userId: id, email: `${unique('n')}@example.com` } })));
      });

      it('updateHumanPhone: at most 5 commands in 3 round trips', async () => {
        const [warm, id] = [await target(), await target()];
        await gw.send(UpdateHumanPhoneDocument, { input: { userId: warm, phone: '+41791234567' } });
        within(
          await measure('updateHumanPhone', () => gw.send(UpdateHumanPhoneDocument, { input: { userId: id, phone: '+41791234568' } })),
        );
      });

      it('setHumanPassword', async () => {
        const [warm, id] = [await target(), await target()];
        await gw.send(SetHumanPasswordDocument, { input: { userId: warm, password: 'Warm-up-1!' } });
        within(
          await measure('setHumanPassword', () => gw.send(SetHumanPasswordDocument, { input: { userId: id, password: 'Secr3t!pass' } })),
        );
      });

      it('addHumanUser (a verification mail queued, username claimed): at most 8 commands in 4 round trips', async () => {
        const add = () =>
          gw.send(AddHumanUserDocument, {
            input: { profile: { firstName: 'New', lastName: 'User' }, email: { email: `${unique('a')}@example.com` } },
          });
        await add();
        within(await measure('addHumanUser', add));
      });
    },
  );
});
