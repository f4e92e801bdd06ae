// A mutation issues (or clears) its verification code before appending its event; when the
// append fails, the code store must be as before (src/codes/port.ts): an answered error means
// nothing changed, and the code an OK answer carried must verify.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodeService } from '../src/codes/codes.ts';
import { addHumanUser, setEmail, updateHumanPhone, verifyEmail, verifyPhone } from '../src/commands/users.ts';
import { AppError, UnavailableError } from '../src/errors.ts';
import type { User } from '../src/model/users.ts';
import { AddHumanUserDocument, SetEmailDocument, VerifyEmailDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { facts, given, ORG_A, U, world, type Harness } from './support/given.ts';
import { describeWith } from './support/servers.ts';

const NEW = 'new@example.com';
const PHONE = '+41797654321';

/**
 * Another request that wins the race: `win` runs (on the real code service) right before the
 * command's first issue or clear, i.e. after the command has read the user and before it
 * stores its code, so that the command's append loses (the reviewer's interleaving).
 */
function racedBy(h: Harness, win: (codes: CodeService) => Promise<void>) {
  const real = h.deps.codes;
  let done = false;
  h.deps.codes = new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || !/^(issue|clear)/.test(String(prop))) return value;
      return async (...args: unknown[]) => {
        if (!done) {
          done = true;
          await win(real);
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const codeOf = (err: unknown) => (err instanceof AppError ? err.code : String(err));

describe('a failed append takes the code back (command level)', () => {
  it("setEmail losing to an identical setEmail: the winner's code still verifies", async () => {
    const h = await given(world);
    let winnerCode = '';
    racedBy(h, async (codes) => {
      winnerCode = await codes.issue(U.alice, 'email', NEW);
      await h.seed([facts.emailChanged(U.alice, NEW)]);
    });
    const lost = await h.when((ctx) => setEmail(ctx, { userId: U.alice, email: NEW, returnCode: true }), { caller: U.managerA });
    expect(lost.ok).toBe(false);
    expect(codeOf(!lost.ok && lost.error)).toBe('FAILED_PRECONDITION');
    const verified = await h.when((ctx) => verifyEmail(ctx, { userId: U.alice, verificationCode: winnerCode }), { caller: U.alice });
    expect(verified.ok, 'the code of the answer that was OK verifies').toBe(true);
  });

  it("setEmail with isVerified losing the race: its clear is taken back, the winner's code verifies", async () => {
    const h = await given(world);
    let winnerCode = '';
    racedBy(h, async (codes) => {
      winnerCode = await codes.issue(U.alice, 'email', NEW);
      await h.seed([facts.emailChanged(U.alice, NEW)]);
    });
    const lost = await h.when((ctx) => setEmail(ctx, { userId: U.alice, email: NEW, isVerified: true }), { caller: U.managerA });
    expect(codeOf(!lost.ok && lost.error)).toBe('FAILED_PRECONDITION');
    expect(await h.deps.codes.verify(U.alice, 'email', winnerCode, NEW)).toBe('ok');
  });

  it('setEmail whose append fails (store unavailable): the code pending before still verifies', async () => {
    const h = await given([...world, facts.emailChanged(U.alice, 'pending@example.com')]);
    const earlier = await h.deps.codes.issue(U.alice, 'email', 'pending@example.com');
    const store = h.deps.store;
    h.deps.store = new Proxy(store, {
      get: (t, p, r) =>
        p === 'append' ? () => Promise.reject(new UnavailableError('event store unavailable')) : (Reflect.get(t, p, r) as unknown),
    });
    const failed = await h.when((ctx) => setEmail(ctx, { userId: U.alice, email: NEW, returnCode: true }), { caller: U.managerA });
    expect(!failed.ok && failed.error).toBeInstanceOf(UnavailableError);
    expect(failed.events).toEqual([]);
    h.deps.store = store;
    const verified = await h.when((ctx) => verifyEmail(ctx, { userId: U.alice, verificationCode: earlier }), { caller: U.alice });
    expect(verified.ok, 'the earlier code verifies').toBe(true);
  });

  it('verifyEmail whose append fails: its code verifies again, unless a code was resent meanwhile', async () => {
    const h = await given([...world, facts.emailChanged(U.alice, 'pending@example.com')]);
    const store = h.deps.store;
    const failAppend = (before: () => Promise<void> = async () => {}) => {
      h.deps.store = new Proxy(store, {
        get: (t, p, r) =>
          p === 'append'
            ? () => before().then(() => Promise.reject(new UnavailableError('event store unavailable')))
            : (Reflect.get(t, p, r) as unknown),
      });
    };
    const verify = (code: string) => h.when((ctx) => verifyEmail(ctx, { userId: U.alice, verificationCode: code }), { caller: U.alice });

    const first = await h.deps.codes.issue(U.alice, 'email', 'pending@example.com');
    failAppend();
    const failed = await verify(first);
    expect(!failed.ok && failed.error).toBeInstanceOf(UnavailableError);
    h.deps.store = store;

    // A resend lands between the verification's check and its failed append: the resent code stays.
    let resent = '';
    failAppend(async () => {
      resent = await h.deps.codes.issue(U.alice, 'email', 'pending@example.com');
    });
    const raced = await verify(first);
    expect(!raced.ok && raced.error, 'the first code verified: it was pending again').toBeInstanceOf(UnavailableError);
    h.deps.store = store;
    const stale = await verify(first);
    expect(codeOf(!stale.ok && stale.error), 'the first code was replaced by the resent one').toBe('INVALID_ARGUMENT');
    const verified = await verify(resent);
    expect(verified.ok, 'the resent code, the one mailed last, verifies').toBe(true);
  });

  // The other request lands between the code's check and the verification's append.
  const addressRaces = [
    {
      name: 'verifyEmail racing a setEmail to another address',
      channel: 'email',
      verify: verifyEmail,
      from: 'mine@example.com',
      to: 'ceo@victim.example',
    },
    {
      name: 'verifyPhone racing an updateHumanPhone to another number',
      channel: 'phone',
      verify: verifyPhone,
      from: PHONE,
      to: '+41790000001',
    },
  ] as const;
  for (const race of addressRaces) {
    it(`${race.name}: the new one is not verified by the old code`, async () => {
      const changed = race.channel === 'email' ? facts.emailChanged : facts.phoneChanged;
      const h = await given([...world, changed(U.alice, race.from)], { sms: true });
      const code = await h.deps.codes.issue(U.alice, race.channel, race.from);
      const real = h.deps.codes;
      h.deps.codes = {
        ...real,
        verifyUndoable: async (...args) => {
          const checked = await real.verifyUndoable(...args);
          await h.seed([changed(U.alice, race.to)]);
          return checked;
        },
      };
      const raced = await h.when((ctx) => race.verify(ctx, { userId: U.alice, verificationCode: code }), { caller: U.alice });
      expect(codeOf(!raced.ok && raced.error)).toBe('FAILED_PRECONDITION');
      // Only the other request's change: no verification.
      expect(raced.events.map((e) => e.type)).toEqual([changed(U.alice, '').type]);
      const alice = (await h.deps.store.load<User>('user', U.alice))!;
      const now = race.channel === 'email' ? alice.state.email : alice.state.phone;
      expect(now).toMatchObject({ [race.channel]: race.to, isVerified: false });
    });
  }

  it("updateHumanPhone losing to the same change: the winner's SMS code still verifies", async () => {
    const h = await given(world, { sms: true });
    let winnerCode = '';
    racedBy(h, async (codes) => {
      winnerCode = await codes.issue(U.alice, 'phone', PHONE);
      await h.seed([facts.phoneChanged(U.alice, PHONE)]);
    });
    const lost = await h.when((ctx) => updateHumanPhone(ctx, { userId: U.alice, phone: PHONE }), { caller: U.managerA });
    expect(codeOf(!lost.ok && lost.error)).toBe('FAILED_PRECONDITION');
    expect(lost.jobs).toEqual([]);
    const verified = await h.when((ctx) => verifyPhone(ctx, { userId: U.alice, verificationCode: winnerCode }), { caller: U.alice });
    expect(verified.ok, 'the code the winner sent verifies').toBe(true);
  });

  it("addHumanUser with a given userId losing to the same creation: the winner's codes still verify", async () => {
    const h = await given(world, { sms: true });
    const id = 'given-id';
    const winner: Record<string, string> = {};
    racedBy(h, async (codes) => {
      winner.email = await codes.issue(id, 'email', 'neo@example.com');
      winner.phone = await codes.issue(id, 'phone', PHONE);
      await h.seed([facts.human(id, ORG_A, { email: 'neo@example.com', emailVerified: false, phone: PHONE })]);
    });
    const input = {
      userId: id,
      profile: { firstName: 'Neo', lastName: 'Anderson' },
      email: { email: 'neo@example.com', returnCode: true },
      phone: { phone: PHONE, returnCode: true },
    };
    const lost = await h.when((ctx) => addHumanUser(ctx, input), { caller: U.managerA });
    expect(codeOf(!lost.ok && lost.error)).toBe('ALREADY_EXISTS');
    expect(await h.deps.codes.verify(id, 'email', winner.email!, 'neo@example.com')).toBe('ok');
    expect(await h.deps.codes.verify(id, 'phone', winner.phone!, PHONE)).toBe('ok');
  });
});

/** N identical setEmail(returnCode) at once: one OK, whose code verifies. */
function raceSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    it('identical concurrent setEmail: exactly one OK, and its code verifies', async () => {
      const N = 6;
      for (let round = 0; round < 4; round++) {
        const created = await gw.send(AddHumanUserDocument, {
          input: {
            profile: { firstName: 'Ada', lastName: 'Lovelace' },
            email: { email: `race-${Date.now()}-${round}@example.com`, returnCode: true },
          } as any,
        });
        const userId = created.data!.addHumanUser.userId;
        const email = `changed-${Date.now()}-${round}@example.com`;
        const answers = await Promise.all(
          Array.from({ length: N }, () => gw.send(SetEmailDocument, { input: { userId, email, returnCode: true } })),
        );
        const ok = answers.filter((a) => !a.errors);
        expect(ok.length, answers.map((a) => a.text).join('\n')).toBe(1);
        for (const a of answers.filter((x) => x.errors)) expect(a.errors![0]!.extensions?.code).toBe('FAILED_PRECONDITION');
        const code = ok[0]!.data!.setEmail.verificationCode!;
        const verified = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: code } });
        expect(verified.errors, `round ${round}: the OK answer's code`).toBeUndefined();
      }
    });
  });
}

raceSuite('end to end, memory code store', () => ({}));
describeWith('redis', 'end to end, Redis code store', (redisUrl) => {
  raceSuite('the same race', () => ({ REDIS_URL: redisUrl, CODE_HMAC_KEY: 'undo-test-key' }));
});
