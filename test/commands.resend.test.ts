// Command tests of resendEmailCode / resendPhoneCode (issue 12 step 1): a fresh
// code for the current, unverified address, sent again; no event is written.
import { describe, expect } from 'vitest';
import { resendEmailCode, resendPhoneCode } from '../src/commands/resend.ts';
import type { User } from '../src/model/users.ts';
import {
  ADMIN,
  BOSS,
  bossWorld,
  chars,
  commandTable,
  facts,
  ORG_A,
  ORG_B,
  U,
  unauthenticatedRows,
  world,
  type Fact,
  type Harness,
  type Row,
  type Then,
} from './support/given.ts';

const CODE = /^[A-Z0-9]{6}$/;
const denied = { error: { code: 'PERMISSION_DENIED' as const } };
const escalation = { error: { code: 'PERMISSION_DENIED' as const, message: /roles you do not hold/ } };

/** resend for `channel`: what every row shares. */
function resendRows(channel: 'email' | 'phone'): Row<any>[] {
  const address = channel === 'email' ? 'new@example.com' : '+41797654321';
  const kind = channel === 'email' ? 'verify-email-on-change' : 'verify-phone';
  const command = channel === 'email' ? resendEmailCode : resendPhoneCode;
  const unverified = (userId: string): Fact =>
    channel === 'email' ? facts.emailChanged(userId, address) : facts.phoneChanged(userId, address);
  const g = (...ids: string[]) => [...world, ...ids.map(unverified)];
  const options = { sms: true };
  /** Nothing written; the job with a fresh code; details of the user as it is; the earlier code void. */
  const sent = (userId: string, owner: string, over: Record<string, unknown> = {}): Then<any> => ({
    events: [],
    jobs: [{ kind, userId, orgId: owner, to: address, code: expect.stringMatching(CODE), ...over }],
    result: async (details, h, outcome) => {
      const user = (await h.store.load<User>('user', userId))!;
      expect(details).toEqual({ sequence: user.sequence, creationDate: null, changeDate: user.changeDate, resourceOwner: owner });
      if (h.vars.old) expect(await h.deps.codes.verify(userId, channel, h.vars.old, address)).not.toBe('ok');
      expect(await h.deps.codes.verify(userId, channel, outcome.jobs[0]!.code, address)).toBe('ok');
    },
  });
  const issueOld = (userId: string) => async (h: Harness) => void (h.vars.old = await h.deps.codes.issue(userId, channel, address));
  /** `n` resends of the user itself before the row. */
  const resent = (userId: string, n: number) => async (h: Harness) => {
    for (let i = 0; i < n; i++) expect((await h.when((ctx) => command(ctx, { userId }), { caller: userId })).ok).toBe(true);
  };
  return [
    {
      name: 'the user itself: a new code sent, the earlier one void, no event',
      given: g(U.alice),
      options,
      arrange: issueOld(U.alice),
      caller: U.alice,
      input: { userId: U.alice },
      then: sent(U.alice, ORG_A),
    },
    {
      name: "ORG_USER_MANAGER of the user's org",
      given: g(U.alice),
      options,
      caller: U.managerA,
      input: { userId: U.alice },
      then: sent(U.alice, ORG_A),
    },
    { name: 'IAM_OWNER, any org', given: g(U.bob), options, caller: ADMIN, input: { userId: U.bob }, then: sent(U.bob, ORG_B) },
    {
      name: "user.write in the user's org, not the caller's own",
      given: g(U.bob),
      options,
      caller: U.helperB,
      input: { userId: U.bob },
      then: sent(U.bob, ORG_B),
    },
    {
      name: 'x-service-orgid plays no part',
      given: g(U.alice),
      options,
      caller: U.managerA,
      orgHeader: ORG_B,
      input: { userId: U.alice },
      then: sent(U.alice, ORG_A),
    },
    {
      name: 'a role in another org only: PERMISSION_DENIED',
      given: g(U.alice),
      options,
      caller: U.ownerB,
      input: { userId: U.alice },
      then: denied,
    },
    {
      name: 'another user without role: PERMISSION_DENIED',
      given: g(U.alice),
      options,
      caller: U.settingsA,
      input: { userId: U.alice },
      then: denied,
    },
    {
      name: 'no escalation: ORG_USER_MANAGER on an ORG_OWNER',
      given: g(U.ownerA),
      options,
      caller: U.managerA,
      input: { userId: U.ownerA },
      then: escalation,
    },
    {
      name: 'no escalation: ORG_OWNER on an IAM_OWNER',
      given: [...bossWorld, unverified(BOSS)],
      options,
      caller: U.ownerA,
      input: { userId: BOSS },
      then: escalation,
    },
    {
      name: 'an unknown user: NOT_FOUND',
      options,
      caller: U.alice,
      input: { userId: 'ghost' },
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    {
      name: `the ${channel} already verified: FAILED_PRECONDITION`,
      options,
      caller: U.alice,
      input: { userId: U.alice },
      then: { error: { code: 'FAILED_PRECONDITION', message: /already verified/ } },
    },
    {
      name: 'the limit per user and hour (5): the 6th is RESOURCE_EXHAUSTED with a retry delay',
      given: g(U.alice),
      options,
      arrange: resent(U.alice, 5),
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        error: { code: 'RESOURCE_EXHAUSTED', message: /Too many codes sent to this user; try again in \d+ s/ },
        after: async (h, err) => {
          expect(err.details).toEqual([
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: expect.stringMatching(/^\d+s$/) },
          ]);
          // Refused before a code is issued: the last code sent still verifies.
          expect(await h.deps.codes.verify(U.alice, channel, h.notifier.jobs.at(-1)!.code, address)).toBe('ok');
        },
      },
    },
    {
      name: 'the limit counts for the user, whoever asks',
      given: g(U.alice),
      options,
      arrange: resent(U.alice, 5),
      caller: U.managerA,
      input: { userId: U.alice },
      then: { error: { code: 'RESOURCE_EXHAUSTED' } },
    },
    {
      name: 'an hour later sending works again',
      given: g(U.alice),
      options,
      arrange: async (h) => {
        await resent(U.alice, 5)(h);
        h.clock.advance(3_600_001);
      },
      caller: U.alice,
      input: { userId: U.alice },
      then: sent(U.alice, ORG_A),
    },
    {
      name: 'RESEND_LIMIT_PER_HOUR is the limit',
      given: g(U.alice),
      options: { ...options, env: { RESEND_LIMIT_PER_HOUR: '1' } },
      arrange: resent(U.alice, 1),
      caller: U.alice,
      input: { userId: U.alice },
      then: { error: { code: 'RESOURCE_EXHAUSTED' } },
    },
    {
      // Pinned as it is: the failed send still counts against the limit, and the
      // code issued for it has replaced the pending one, which no longer verifies.
      name: 'the queue unreachable: UNAVAILABLE, nothing sent; the send counted and the pending code replaced all the same',
      given: g(U.alice),
      options: { ...options, env: { RESEND_LIMIT_PER_HOUR: '1' } },
      caller: U.alice,
      input: { userId: U.alice },
      arrange: async (h) => {
        await issueOld(U.alice)(h);
        h.notifier.failNext = true;
      },
      then: {
        error: { code: 'UNAVAILABLE', message: /could not be queued/ },
        after: async (h) => {
          expect(await h.deps.codes.verify(U.alice, channel, h.vars.old, address)).toBe('wrong');
          const again = await h.when((ctx) => command(ctx, { userId: U.alice }), { caller: U.alice });
          expect(again.ok ? null : (again.error as { code?: string }).code).toBe('RESOURCE_EXHAUSTED');
        },
      },
    },
    {
      name: 'a blank userId: INVALID_ARGUMENT',
      options,
      caller: U.alice,
      input: { userId: ' ' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    {
      name: 'a userId of 200 that does not exist: NOT_FOUND',
      options,
      caller: U.alice,
      input: { userId: chars(200) },
      then: { error: { code: 'NOT_FOUND' } },
    },
    {
      name: 'a userId of 201: INVALID_ARGUMENT',
      options,
      caller: U.alice,
      input: { userId: chars(201) },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    ...unauthenticatedRows<any>({ userId: U.alice }, g(U.alice)),
  ];
}

describe('resendEmailCode', () => {
  const g = [...world, facts.emailChanged(U.alice, 'new@example.com')];
  const job = {
    kind: 'verify-email-on-change' as const,
    userId: U.alice,
    orgId: ORG_A,
    to: 'new@example.com',
    code: expect.stringMatching(CODE),
  };
  commandTable<any>(resendEmailCode, [
    ...resendRows('email'),
    {
      name: 'a urlTemplate goes with the mail',
      given: g,
      caller: U.alice,
      input: { userId: U.alice, urlTemplate: 'https://x.example/v/{{.Code}}' },
      then: { events: [], jobs: [{ ...job, urlTemplate: 'https://x.example/v/{{.Code}}' }] },
    },
    {
      name: 'no SMS provider plays no part for email',
      given: g,
      caller: U.alice,
      input: { userId: U.alice },
      then: { events: [], jobs: [job] },
    },
    {
      name: 'a urlTemplate with an unknown placeholder: INVALID_ARGUMENT',
      given: g,
      caller: U.alice,
      input: { userId: U.alice, urlTemplate: 'https://x.example/{{.Nope}}' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.urlTemplate'], message: /unknown placeholder/ } },
    },
    {
      name: 'a blank urlTemplate: INVALID_ARGUMENT',
      given: g,
      caller: U.alice,
      input: { userId: U.alice, urlTemplate: ' ' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.urlTemplate', 'input.urlTemplate'] } },
    },
    {
      name: 'a urlTemplate of 201: INVALID_ARGUMENT',
      given: g,
      caller: U.alice,
      input: { userId: U.alice, urlTemplate: `https://x.example/${chars(183)}` },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.urlTemplate'], message: /at most 200/ } },
    },
    {
      name: 'phone sends do not count against email',
      given: [...g, facts.phoneChanged(U.alice, '+41797654321')],
      options: { sms: true },
      arrange: async (h) => {
        for (let i = 0; i < 5; i++)
          expect((await h.when((ctx) => resendPhoneCode(ctx, { userId: U.alice }), { caller: U.alice })).ok).toBe(true);
      },
      caller: U.alice,
      input: { userId: U.alice },
      then: { events: [], jobs: [job] },
    },
  ]);
});

describe('resendPhoneCode', () => {
  commandTable<any>(resendPhoneCode, [
    ...resendRows('phone'),
    {
      name: 'no SMS provider: FAILED_PRECONDITION',
      given: [...world, facts.phoneChanged(U.alice, '+41797654321')],
      caller: U.alice,
      input: { userId: U.alice },
      then: { error: { code: 'FAILED_PRECONDITION', message: /No SMS provider/ } },
    },
    {
      name: 'a user without a phone: FAILED_PRECONDITION',
      options: { sms: true },
      caller: U.peerA,
      input: { userId: U.peerA },
      then: { error: { code: 'FAILED_PRECONDITION', message: /has no phone/ } },
    },
  ]);
});
