// Stale state and racing writers, through the commands (issue 12, "Bad input and
// faults"; the protocol is in src/store/port.ts): a command reads each aggregate
// once and appends on what it read; when that was behind its events (a state
// document left behind by a crash between the event and its state write, or a
// snapshot another writer has since moved on from) the unique sequence refuses
// the append, the command catches up from the events and succeeds once, with
// nothing lost. On the embedded store and on MongoDB-wire.
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remember, type CommandContext } from '../src/commands/context.ts';
import { newCommandContext } from '../src/commands/request-context.ts';
import { registerU2F } from '../src/commands/u2f.ts';
import { updateHumanProfile } from '../src/commands/users.ts';
import { userEvents, type User } from '../src/model/users.ts';
import type { Snapshot } from '../src/store/port.ts';
import { AddHumanUserDocument, UpdateHumanPhoneDocument, UpdateHumanProfileDocument, UserDocument } from './generated/graphql.ts';
import { onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';

function suite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const ctxOf = (callerId = gw.adminId): CommandContext => newCommandContext(gw.gateway.deps, { callerId }, null);
    const stored = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;
    const addUser = async () => {
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          profile: { firstName: 'Cat', lastName: 'Chup' },
          email: { email: `${randomUUID().slice(0, 8)}@example.com`, returnCode: true },
        },
      });
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser.userId;
    };

    it('a command that read a snapshot another writer has moved on from catches up and succeeds once, losing nothing', async () => {
      const id = await addUser();
      const before = await stored(id);
      const phone = await gw.send(UpdateHumanPhoneDocument, { input: { userId: id, phone: '+41791112233', isPhoneVerified: true } });
      expect(phone.errors, phone.text).toBeUndefined();

      const ctx = ctxOf();
      remember(ctx, 'user', id, before); // the request read the user before the phone change
      const details = await updateHumanProfile(ctx, { userId: id, firstName: 'Late', lastName: 'Writer' });

      expect(details.sequence).toBe(before.sequence + 2);
      const events = await gw.gateway.deps.store.events('user', id);
      expect(events.map((e) => [e.sequence, e.type])).toEqual([
        [1, userEvents.added],
        [2, userEvents.phoneChanged],
        [3, userEvents.profileChanged],
      ]);
      const after = await stored(id);
      expect(after.sequence).toBe(3);
      expect(after.state.phone).toEqual({ phone: '+41791112233', isVerified: true });
      expect(after.state.profile).toMatchObject({ firstName: 'Late', lastName: 'Writer' });
    });

    it('50 concurrent writers on one user lose nothing: every command succeeds once, every change is kept', async () => {
      const id = await addUser();
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => registerU2F(ctxOf(), { userId: id })));
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(failed).toEqual([]);
      const ids = results.map((r) => (r as PromiseFulfilledResult<{ u2fId: string; details: { sequence: number } }>).value);
      expect(new Set(ids.map((r) => r.details.sequence)).size).toBe(50);

      const after = await stored(id);
      expect(after.sequence).toBe(51);
      // A user keeps 5 pending registrations (docs/graphql.md), the newest: those of the last 5 sequences, in order.
      const newest = [...ids].sort((a, b) => a.details.sequence - b.details.sequence).slice(-5);
      expect(after.state.u2fTokens.map((t) => t.id)).toEqual(newest.map((r) => r.u2fId));
      const events = await gw.gateway.deps.store.events('user', id);
      expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
      // The state document is the reduction of the events.
      expect(await gw.gateway.deps.store.catchUp('user', id, null)).toEqual(after);
    });

    it('50 concurrent profile changes over HTTP: 50 answers, 50 events, the last one is the state', async () => {
      const id = await addUser();
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: `Writer${i}`, lastName: 'Race' } }),
        ),
      );
      expect(answers.flatMap((a) => a.errors ?? [])).toEqual([]);
      const sequences = answers.map((a) => Number(a.data!.updateHumanProfile.details.sequence)).sort((a, b) => a - b);
      expect(sequences).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
      const events = await gw.gateway.deps.store.events('user', id);
      expect(events).toHaveLength(51);
      const last = events.at(-1)!;
      expect((await stored(id)).state.profile).toEqual((last.payload as { profile: unknown }).profile);
    });
  });
}

suite('catch-up and racing writers on the embedded store', () => ({}));

describeWith('mongo', 'catch-up and racing writers on MongoDB-wire', (mongoUrl) => {
  const dbName = `catch_up_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  suite('the same suite', () => ({ MONGODB_URL: mongoUrl, MONGODB_DB: `${dbName}_suite` }));

  describe('a state document left behind its events, as a crash between the two writes leaves it', () => {
    let gw: TestGateway;
    const client = new MongoClient(mongoUrl);
    const db = client.db(dbName);
    beforeAll(async () => {
      // No repair loop: these tests are about the next command catching up (the loop has
      // test/store.repair.test.ts). With it, a machine slow enough to spend its 2 s grace
      // between the crash and the first read saw the document repaired already.
      gw = await startGateway({ env: { MONGODB_URL: mongoUrl, MONGODB_DB: dbName, STORE_REPAIR_INTERVAL_MS: '0' } });
    });
    afterAll(async () => {
      await gw?.close();
      await db.dropDatabase().catch(() => {});
      await client.close();
    });

    const addUser = async () => {
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          profile: { firstName: 'Cat', lastName: 'Chup' },
          email: { email: `${randomUUID().slice(0, 8)}@example.com`, returnCode: true },
        },
      });
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser.userId;
    };
    const stateDoc = (id: string) => db.collection<{ _id: string } & Omit<Snapshot<User>, 'id'>>('users').findOne({ _id: id });
    /** The event is committed, its state write never happened. */
    const crashAfterEvent = async (id: string, sequence: number, type: string, payload: Record<string, unknown>) => {
      const doc = (await stateDoc(id))!;
      await db.collection('events').insertOne({
        aggregateType: 'user',
        aggregateId: id,
        sequence,
        type,
        payload,
        creator: 'crashed-gateway',
        resourceOwner: doc.resourceOwner,
        createdAt: new Date(),
        claims: [],
      });
    };

    it('the next command is refused by the sequence, catches up, and succeeds once with nothing lost', async () => {
      const id = await addUser();
      await crashAfterEvent(id, 2, userEvents.phoneChanged, { phone: '+41795556677', isVerified: true });
      await crashAfterEvent(id, 3, userEvents.emailVerified, {});
      expect((await stateDoc(id))?.sequence).toBe(1);
      // A read serves the state document as it is (one command; see src/store/port.ts).
      const read = await gw.send(UserDocument, { id });
      expect(read.data?.user?.phone).toBeNull();

      const res = await gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'After', lastName: 'Crash' } });
      expect(res.errors, res.text).toBeUndefined();
      expect(res.data!.updateHumanProfile.details.sequence).toBe('4');

      const events = await gw.gateway.deps.store.events('user', id);
      expect(events.map((e) => e.type)).toEqual([
        userEvents.added,
        userEvents.phoneChanged,
        userEvents.emailVerified,
        userEvents.profileChanged,
      ]);
      expect(events.filter((e) => e.creator === gw.adminId && e.type === userEvents.profileChanged)).toHaveLength(1);
      const doc = (await stateDoc(id))!;
      expect(doc.sequence).toBe(4);
      expect(doc.state.phone).toEqual({ phone: '+41795556677', isVerified: true });
      expect(doc.state.email.isVerified).toBe(true);
      expect(doc.state.profile).toMatchObject({ firstName: 'After', lastName: 'Crash' });
      const reread = await gw.send(UserDocument, { id });
      expect(reread.data?.user?.phone?.phone).toBe('+41795556677');
    });

    it('a command the caught-up state makes pointless answers FAILED_PRECONDITION, writes nothing, and repairs the document', async () => {
      const id = await addUser();
      const profile = {
        firstName: 'Already',
        lastName: 'There',
        nickName: null,
        displayName: null,
        preferredLanguage: null,
        gender: 'GENDER_UNSPECIFIED',
      };
      await crashAfterEvent(id, 2, userEvents.profileChanged, { profile });
      const res = await gw.send(UpdateHumanProfileDocument, { input: { userId: id, firstName: 'Already', lastName: 'There' } });
      expect(onlyError(res).extensions?.code).toBe('FAILED_PRECONDITION');
      expect(await gw.gateway.deps.store.events('user', id)).toHaveLength(2);
      expect(await stateDoc(id)).toMatchObject({ sequence: 2, state: { profile } });
    });
  });
});
