// The fleet (issue 14): three gateway processes on one MongoDB-wire server and a three-node
// Redis Cluster started here (test/support/fleet.ts; FLEET_REDIS=single runs it on one
// redis-server instead), with the requests spread round robin over the three:
// concurrent writers lose no update, a username is won once, codes and rate limits and
// Idempotency-Keys hold across processes, deliveries survive a gateway killed with SIGKILL
// (a duplicate only for the mail in flight, with the same Message-ID), ids never collide,
// and a Redis node killed and restarted loses no acknowledged write while the gateways
// answer UNAVAILABLE quickly and recover by themselves.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { AddHumanUserDocument, SetEmailDocument, UpdateHumanProfileDocument, VerifyEmailDocument } from './generated/graphql.ts';
import type { ChildGateway } from './support/child-gateway.ts';
import { codeOf, gql, nodeClient, ok, startFleet, uniq, type Fleet, type GqlResult } from './support/fleet.ts';
import { expectRestStatus } from './support/gateway.ts';
import { describeRequiring, describeWith } from './support/servers.ts';
import { until } from './support/smtp.ts';

/** Requests a minute per caller: each scenario works as callers of its own (fleet.manager). */
const PER_CALLER = 150;
const MAX_ATTEMPTS = 3;
/**
 * Users each gateway creates for the id check. Kept small: FerretDB (the CI's MongoDB-wire
 * server) serves no find from an index, so every user more slows every later request.
 */
const PER_GATEWAY_IDS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const HISTORY = `query History($id: ID!) {
  user(id: $id) {
    details { sequence }
    profile { firstName }
    history(first: 60) { totalCount edges { node { type sequence changes { field value } } } }
  }
}`;
const USER = `query U($id: ID!) { user(id: $id) { id username details { sequence } profile { firstName lastName } email { email isVerified } } }`;
const PING = `query Ping { __typename }`;

/** The node id a gateway says it leased ('node id leased' in its log), or undefined. */
function leasedNodeId(gw: ChildGateway): { nodeId: number; lease: string } | undefined {
  for (const l of gw.logs) {
    try {
      const line = JSON.parse(l);
      if (line.msg === 'node id leased' || line.msg === 'node id') return { nodeId: line.nodeId, lease: line.lease };
    } catch {
      // not JSON
    }
  }
  return undefined;
}

/** The node id bits of a generated id (41 bits time, 10 bits node, 12 bits sequence: src/model/ids.ts). */
const nodeIdOf = (id: string) => Number((BigInt(id) >> 12n) & 1023n);
const profile = (firstName: string) => ({ firstName, lastName: 'Fleet' });

/** Runs fn over items with at most `width` in flight. */
async function pool<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

describeWith('mongo', 'a fleet of three gateways', (mongoUrl) => {
  describeRequiring(
    inject('redisServerBin'),
    'redis-server not found (the fleet starts its own Redis Cluster)',
    'on one MongoDB and a Redis Cluster',
    (redisServerBin) => {
      let fleet: Fleet;
      const t0 = Date.now();

      beforeAll(async () => {
        fleet = await startFleet({
          mongoUrl,
          redisServerBin,
          env: { RATE_LIMIT_PER_CALLER_PER_MINUTE: String(PER_CALLER), CODE_MAX_ATTEMPTS: String(MAX_ATTEMPTS) },
        });
        console.log(
          `[fleet] ${fleet.all.length} gateways on ${fleet.redis.mode} Redis (${fleet.redis.ports.join(', ')}), db ${fleet.dbName}, up in ${Date.now() - t0} ms`,
        );
      });
      afterAll(async () => {
        await fleet?.stop();
        console.log(`[fleet] done in ${Date.now() - t0} ms`);
      });

      it('50 concurrent profile updates of one user over three gateways: none is lost', async () => {
        const m = await fleet.manager('writers');
        const username = uniq('target-');
        const userId = ok(
          await gql(
            fleet.pick(0),
            AddHumanUserDocument,
            { input: { username, profile: profile('Start'), email: { email: `${username}@w.example`, isVerified: true } } },
            { token: m.token },
          ),
        ).addHumanUser.userId;

        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            gql(
              fleet.pick(i),
              UpdateHumanProfileDocument,
              { input: { userId, firstName: `Writer${i}`, lastName: 'Fleet' } },
              { token: m.token, timeoutMs: 60_000 },
            ),
          ),
        );
        console.log(`[fleet] 50 writers: answered within ${Math.max(...answers.map((a) => a.ms))} ms`);
        for (const [i, a] of answers.entries()) expect(a.errors, `writer ${i}: ${a.text}`).toBeUndefined();
        // Each write got its own sequence: 2..51, no two writers on one base.
        const sequences = answers.map((a) => Number(a.data!.updateHumanProfile.details.sequence)).sort((x, y) => x - y);
        expect(sequences).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));

        // Every gateway reads the same end state: 51 events, one per writer, each writer's name among them.
        for (const gw of fleet.live()) {
          const res = await gql(gw, HISTORY, { id: userId }, { token: m.token });
          const user = ok(res, 'history').user;
          expect(user.details.sequence).toBe('51');
          expect(user.history.totalCount).toBe(51);
          const names = user.history.edges.flatMap((e: any) =>
            e.node.changes.filter((c: any) => c.field === 'profile.firstName').map((c: any) => c.value),
          );
          for (let i = 0; i < 50; i++) expect(names).toContain(`Writer${i}`);
          const last = user.history.edges[0].node;
          expect(last.sequence).toBe('51');
          expect(user.profile.firstName).toBe(last.changes.find((c: any) => c.field === 'profile.firstName').value);
        }
      });

      it('one username claimed from three gateways at once: exactly one wins, the others get ALREADY_EXISTS', async () => {
        const m = await fleet.manager('claims');
        for (let round = 0; round < 5; round++) {
          const username = uniq(`claim${round}-`);
          const answers = await Promise.all(
            fleet.live().map((gw, g) =>
              gql(
                gw,
                AddHumanUserDocument,
                {
                  input: {
                    username,
                    profile: profile(`Claim${g}`),
                    email: { email: `${username}.${g}@claims.example`, isVerified: true },
                  },
                },
                { token: m.token },
              ),
            ),
          );
          const won = answers.filter((a) => !a.errors);
          expect(won, answers.map((a) => a.text).join('\n')).toHaveLength(1);
          for (const lost of answers.filter((a) => a.errors)) {
            expect(codeOf(lost), lost.text).toBe('ALREADY_EXISTS');
            expectRestStatus(lost, 409);
          }
          const winner = won[0]!.data!.addHumanUser.userId;
          const read = ok(await gql(fleet.pick(round + 1), USER, { id: winner }, { token: m.token })).user;
          expect(read.username).toBe(username);
          expect(read.profile.firstName).toBe(`Claim${answers.indexOf(won[0]!)}`);
        }
      });

      it('a code issued through one gateway verifies through another; wrong codes count across gateways', async () => {
        const m = await fleet.manager('codes');
        const [g0, g1, g2] = fleet.live();
        const username = uniq('coded-');
        const userId = ok(
          await gql(
            g0!,
            AddHumanUserDocument,
            { input: { username, profile: profile('Coded'), email: { email: `${username}@old.example`, isVerified: true } } },
            { token: m.token },
          ),
        ).addHumanUser.userId;

        // Sent by mail (whichever gateway's worker takes the job), verified through another gateway.
        const address = `${username}@new.example`;
        ok(await gql(g0!, SetEmailDocument, { input: { userId, email: address, sendCode: {} } }, { token: m.token }), 'setEmail');
        const mail = await fleet.smtp.waitFor((x) => x.to.includes(address));
        expect(mail.code).toMatch(/^[A-Z0-9]{6}$/);
        const verified = await gql(g1!, VerifyEmailDocument, { input: { userId, verificationCode: mail.code! } }, { token: m.token });
        expect(verified.errors, verified.text).toBeUndefined();
        expect(ok(await gql(g2!, USER, { id: userId }, { token: m.token })).user.email).toEqual({ email: address, isVerified: true });

        // Returned code: MAX_ATTEMPTS wrong tries, one per gateway, use the code up for all of them.
        const second = `${username}@second.example`;
        const code = ok(await gql(g2!, SetEmailDocument, { input: { userId, email: second, returnCode: true } }, { token: m.token }))
          .setEmail.verificationCode!;
        expect(code).toMatch(/^[A-Z0-9]{6}$/);
        const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
        for (let i = 0; i < MAX_ATTEMPTS; i++) {
          const res = await gql(fleet.pick(i + 1), VerifyEmailDocument, { input: { userId, verificationCode: wrong } }, { token: m.token });
          expect(codeOf(res), res.text).toBe('INVALID_ARGUMENT');
        }
        const late = await gql(g0!, VerifyEmailDocument, { input: { userId, verificationCode: code } }, { token: m.token });
        expect(codeOf(late), late.text).toBe('FAILED_PRECONDITION');
        expect(ok(await gql(g1!, USER, { id: userId }, { token: m.token })).user.email).toEqual({ email: second, isVerified: false });
      });

      it('the per-caller rate limit is one window for the whole fleet, not one per process', async () => {
        const m = await fleet.manager('limited');
        const other = await fleet.manager('unlimited');
        const answers = await pool(
          Array.from({ length: PER_CALLER }, (_, i) => i),
          15,
          (i) => gql(fleet.pick(i), PING, {}, { token: m.token }),
        );
        for (const [i, a] of answers.entries()) expect(a.status, `request ${i + 1}: ${a.text}`).toBe(200);
        // Every gateway now refuses this caller: PER_CALLER in all, not PER_CALLER each.
        for (const gw of fleet.live()) {
          const res = await gql(gw, PING, {}, { token: m.token });
          expect(res.status, res.text).toBe(429);
          expect(codeOf(res)).toBe('RESOURCE_EXHAUSTED');
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        }
        // Another caller has a window of its own.
        for (const gw of fleet.live()) expect((await gql(gw, PING, {}, { token: other.token })).status).toBe(200);
      });

      it('an Idempotency-Key replays the first answer from every gateway, and the mutation runs once', async () => {
        const m = await fleet.manager('idem');
        const username = uniq('idem-');
        const userId = ok(
          await gql(
            fleet.pick(0),
            AddHumanUserDocument,
            { input: { username, profile: profile('Idem'), email: { email: `${username}@idem.example`, isVerified: true } } },
            { token: m.token },
          ),
        ).addHumanUser.userId;
        const [g0, g1, g2] = fleet.live();
        const update = (firstName: string) => ({ input: { userId, firstName, lastName: 'Once' } });

        // One after the other: gateway 1 runs it, 2 and 3 replay.
        const key = uniq('key-');
        const first = await gql(g0!, UpdateHumanProfileDocument, update('Once'), { token: m.token, headers: { 'idempotency-key': key } });
        expect(first.errors, first.text).toBeUndefined();
        expect(first.headers.get('idempotency-replayed')).toBeNull();
        for (const gw of [g1!, g2!]) {
          const again = await gql(gw, UpdateHumanProfileDocument, update('Once'), { token: m.token, headers: { 'idempotency-key': key } });
          expect(again.headers.get('idempotency-replayed')).toBe('true');
          expect(again.status).toBe(first.status);
          expect(again.text).toBe(first.text);
        }
        // The same key with another request is refused, wherever it arrives.
        const changed = await gql(g2!, UpdateHumanProfileDocument, update('Other'), {
          token: m.token,
          headers: { 'idempotency-key': key },
        });
        expect(codeOf(changed), changed.text).toBe('FAILED_PRECONDITION');

        // All at once: one runs, the two others wait for its answer and replay it.
        const key2 = uniq('key-');
        const together = await Promise.all(
          [g0!, g1!, g2!].map((gw) =>
            gql(gw, UpdateHumanProfileDocument, update('Twice'), { token: m.token, headers: { 'idempotency-key': key2 } }),
          ),
        );
        for (const a of together) expect(a.errors, a.text).toBeUndefined();
        expect(together.filter((a) => a.headers.get('idempotency-replayed') !== 'true')).toHaveLength(1);
        expect(new Set(together.map((a) => a.text)).size).toBe(1);

        const user = ok(await gql(g1!, HISTORY, { id: userId }, { token: m.token })).user;
        expect(user.history.totalCount).toBe(3); // added, 'Once', 'Twice': one write per key
        expect(user.details.sequence).toBe('3');
        expect(user.profile.firstName).toBe('Twice');
      });

      it('each gateway has a node id of its own: 3 × 20 users created at once get distinct ids', async () => {
        const gws = fleet.live();
        const managers = await Promise.all(gws.map((_, i) => fleet.manager(`ids${i}`)));
        const created = await pool(
          Array.from({ length: PER_GATEWAY_IDS * 3 }, (_, i) => i),
          12,
          async (i) => {
            const g = i % 3;
            const username = uniq(`id${i}-`);
            const res = await gql(
              gws[g]!,
              AddHumanUserDocument,
              { input: { username, profile: profile(`Id${i}`), email: { email: `${username}@ids.example`, isVerified: true } } },
              { token: managers[g]!.token },
            );
            return { gateway: g, id: ok(res, `create ${i}`).addHumanUser.userId };
          },
        );
        const ids = created.map((c) => c.id);
        expect(new Set(ids).size).toBe(PER_GATEWAY_IDS * 3);
        // Every id a gateway made carries that gateway's node id, and the three differ.
        const nodeIds = gws.map((_, g) => new Set(created.filter((c) => c.gateway === g).map((c) => nodeIdOf(c.id))));
        for (const s of nodeIds) expect(s.size).toBe(1);
        const perGateway = nodeIds.map((s) => [...s][0]!);
        expect(new Set(perGateway).size).toBe(3);
        // The one each gateway leased in Redis and logged at start.
        for (const [g, gw] of gws.entries()) {
          expect(leasedNodeId(gw), `gateway ${g}:\n${gw.logs.filter((l) => /node/i.test(l)).join('\n')}`).toEqual({
            nodeId: perGateway[g],
            lease: 'redis',
          });
        }
      });

      it('deliveries survive a gateway killed with SIGKILL: every mail arrives, one in flight at most twice with one Message-ID', async () => {
        const m = await fleet.manager('mailer');
        const smtp = fleet.smtp;
        const N = 30;
        const victim = fleet.all.indexOf(fleet.live()[2]!);
        const addresses = Array.from({ length: N }, (_, i) => `${uniq(`mail${i}-`)}@deliver.example`);
        const before = smtp.mails.length;

        // Hold every answer from the start: each worker's first mail is received and not
        // acknowledged, the rest wait in the queue. (Held only once the first mails had arrived,
        // a slow machine let the workers empty the queue while the users were still being
        // created, and no worker was left holding one.)
        smtp.hold();
        const created = await pool(addresses, 10, (email, i) =>
          gql(fleet.pick(i), AddHumanUserDocument, { input: { profile: profile(`Mail${i}`), email: { email } } }, { token: m.token }),
        );
        for (const c of created) expect(c.errors, c.text).toBeUndefined();
        await until(() => smtp.held() >= fleet.live().length, 20_000, 'a mail in flight from every gateway');
        // What the test is about: the victim's own worker holds a job when it dies (consumers are named host-pid-…).
        const jobsKey = `${fleet.dbName}:{delivery}:jobs`;
        const port = fleet.redis.ports[await fleet.redis.nodeOf(jobsKey)]!;
        const victimPid = fleet.all[victim]!.child.pid!;
        const probe = nodeClient(port);
        await probe.connect();
        try {
          const holders = async () =>
            ((await probe.call('XPENDING', jobsKey, 'workers', '-', '+', '100')) as [string, string, number, number][]).map(
              ([, consumer]) => consumer,
            );
          await until(
            async () => (await holders()).some((consumer) => consumer.includes(`-${victimPid}-`)),
            10_000,
            'a job held by the victim',
          );
        } finally {
          probe.disconnect();
        }
        const heldBeforeKill = smtp.held();
        await fleet.kill(victim);
        smtp.release();

        // A replacement joins while the others finish (and claim the dead worker's job). The dead
        // gateway's lease has not expired: the replacement takes a node id none of the three holds.
        const replacement = fleet.spawn();
        await until(() => addresses.every((a) => smtp.to(a).length > 0), 30_000, 'every mail');
        const newcomer = await replacement;
        const taken = fleet.all.slice(0, 3).map((g) => leasedNodeId(g)?.nodeId);
        expect(taken.every((n) => typeof n === 'number')).toBe(true);
        expect(taken).not.toContain(leasedNodeId(newcomer)?.nodeId);

        // Give a second delivery of anything the time to show up (several claim periods).
        await sleep(2500);
        const mails = smtp.mails.slice(before).filter((x) => addresses.some((a) => x.to.includes(a)));
        const duplicates = addresses.filter((a) => smtp.to(a).length > 1);
        console.log(
          `[fleet] SIGKILL: ${heldBeforeKill} mails held at the kill, ${mails.length} mails for ${N} jobs, duplicates: ${
            duplicates
              .map((a) =>
                smtp
                  .to(a)
                  .map((x) => x.messageId)
                  .join(' and '),
              )
              .join('; ') || 'none'
          }`,
        );
        for (const a of addresses) {
          const got = smtp.to(a);
          expect(got.length, `${a}: ${got.length} mails`).toBeGreaterThanOrEqual(1);
          expect(got.length, `${a}: more than a duplicate`).toBeLessThanOrEqual(2);
          // A duplicate is the same message: same code, and the same Message-ID so that a receiver can drop it.
          // (Soft: the checks below still run when a duplicate carries a Message-ID of its own.)
          expect(new Set(got.map((x) => x.code)).size, `${a}: codes ${got.map((x) => x.code)}`).toBe(1);
          expect
            .soft(
              new Set(got.map((x) => x.messageId)).size,
              `${a}: a duplicate with another Message-ID: ${got.map((x) => x.messageId).join(', ')}`,
            )
            .toBe(1);
        }
        expect.soft(new Set(mails.map((x) => x.messageId)).size, 'distinct Message-IDs').toBe(N);
        // Only mails held at the kill may come twice: the killed worker's (claimed after its
        // idle time), or, while the others were held past that idle time too, one a live worker
        // had sent and not yet acknowledged when another claimed it. Each such duplicate is the
        // same message (checked above).
        expect(duplicates.length).toBeLessThanOrEqual(heldBeforeKill);

        // Nothing left in the queue: no job pending on the dead consumer, none waiting.
        const client = nodeClient(port);
        await client.connect();
        try {
          await until(
            async () => Number(((await client.call('XPENDING', jobsKey, 'workers')) as unknown[])[0]) === 0,
            10_000,
            'no pending job',
          );
          expect(await client.xlen(jobsKey)).toBe(0);
          expect(await client.zcard(`${fleet.dbName}:{delivery}:delayed`)).toBe(0);
        } finally {
          client.disconnect();
        }
      });

      it('a Redis node killed and restarted: acknowledged writes survive, requests fail fast meanwhile, the gateways recover by themselves', async () => {
        while (fleet.live().length < 3) await fleet.spawn(); // when the SIGKILL test stopped before its replacement
        const m = await fleet.manager('outage');
        const gws = fleet.live();

        // Before: codes pending for several users (keys spread over the nodes) and answers kept under Idempotency-Keys.
        const users = await pool(
          Array.from({ length: 9 }, (_, i) => i),
          9,
          async (i) => {
            const username = uniq(`out${i}-`);
            const userId = ok(
              await gql(
                fleet.pick(i),
                AddHumanUserDocument,
                { input: { username, profile: profile(`Out${i}`), email: { email: `${username}@out.example`, returnCode: true } } },
                { token: m.token },
              ),
            ).addHumanUser;
            return { userId: userId.userId, code: userId.emailCode! };
          },
        );
        const keyed = await pool(users, 9, async (u, i) => {
          const key = uniq('outage-key-');
          const res = await gql(
            fleet.pick(i),
            UpdateHumanProfileDocument,
            { input: { userId: u.userId, firstName: `Kept${i}`, lastName: 'Fleet' } },
            { token: m.token, headers: { 'idempotency-key': key } },
          );
          expect(res.errors, res.text).toBeUndefined();
          return { key, userId: u.userId, firstName: `Kept${i}`, text: res.text };
        });

        // The victim: the node holding the first user's code.
        const victim = await fleet.redis.nodeOf(`code:{${users[0]!.userId}}:email`);
        await fleet.redis.kill(victim);
        const killedAt = Date.now();

        // Meanwhile: requests needing that node answer UNAVAILABLE, quickly, from every gateway.
        const during: GqlResult[] = [];
        for (let i = 0; i < 3; i++) {
          const res = await gql(
            gws[i]!,
            VerifyEmailDocument,
            { input: { userId: users[0]!.userId, verificationCode: users[0]!.code } },
            { token: m.token, timeoutMs: 15_000 },
          );
          during.push(res);
          expect(res.timedOut, 'the gateway answered').toBeFalsy();
          expect(codeOf(res), res.text).toBe('UNAVAILABLE');
          expectRestStatus(res, 503);
          // Fast: bounded by the gateway's own Redis timeouts (1.5 s a call: the rate limiter,
          // the code check and its undo at most), never by the client's 15 s.
          expect(res.ms).toBeLessThan(12_000);
        }
        // A request that needs no Redis still works.
        const noRedis = await gql(gws[1]!, USER, { id: users[1]!.userId }, { token: m.token });
        expect(noRedis.errors, noRedis.text).toBeUndefined();

        await fleet.redis.restart(victim);
        const restartedAt = Date.now();

        // No gateway is restarted: each serves again within a bounded time.
        const recovered: number[] = [];
        for (const [g, gw] of gws.entries()) {
          const probeUser = users[3 + g]!;
          let last: GqlResult | undefined;
          await until(
            async () => {
              last = await gql(
                gw,
                SetEmailDocument,
                { input: { userId: probeUser.userId, email: `${uniq('back-')}@out.example`, returnCode: true } },
                { token: m.token, timeoutMs: 10_000 },
              );
              return !last.errors;
            },
            30_000,
            `gateway ${g} to serve again (last answer: ${last?.text})`,
          );
          recovered.push(Date.now() - restartedAt);
        }

        // Every code pending before the kill still verifies (users 3..5 got new codes above: their old ones are gone).
        for (const [i, u] of users.entries()) {
          if (i >= 3 && i < 6) continue;
          const res = await gql(
            fleet.pick(i),
            VerifyEmailDocument,
            { input: { userId: u.userId, verificationCode: u.code } },
            { token: m.token },
          );
          expect(
            res.errors,
            `user ${i} (code on node ${await fleet.redis.nodeOf(`code:{${u.userId}}:email`)}): ${res.text}`,
          ).toBeUndefined();
        }
        // Every kept answer is still replayed, by any gateway, and nothing ran twice.
        for (const [i, k] of keyed.entries()) {
          const again = await gql(
            fleet.pick(i + 1),
            UpdateHumanProfileDocument,
            { input: { userId: k.userId, firstName: k.firstName, lastName: 'Fleet' } },
            { token: m.token, headers: { 'idempotency-key': k.key } },
          );
          expect(again.headers.get('idempotency-replayed'), again.text).toBe('true');
          expect(again.text).toBe(k.text);
        }
        // Mail goes out again too (the delivery workers reconnected).
        const address = `${uniq('after-')}@out.example`;
        ok(
          await gql(
            fleet.pick(0),
            SetEmailDocument,
            { input: { userId: users[8]!.userId, email: address, sendCode: {} } },
            { token: m.token },
          ),
        );
        await fleet.smtp.waitFor((x) => x.to.includes(address), 20_000);
        console.log(
          `[fleet] Redis node ${victim} down ${restartedAt - killedAt} ms; answers meanwhile in ${during.map((d) => d.ms).join('/')} ms; gateways serving again after ${recovered.join('/')} ms`,
        );
      });
    },
  );
});
