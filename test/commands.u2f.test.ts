// Command tests of U2F registration (issue 12 step 1): registerU2F and
// verifyU2FRegistration (SPEC.md operation 3), with a software authenticator.
import { describe, expect } from 'vitest';
import { registerU2F, verifyU2FRegistration } from '../src/commands/u2f.ts';
import { userEvents, type User } from '../src/model/users.ts';
import {
  ADMIN,
  BOSS,
  bossWorld,
  chars,
  commandTable,
  event,
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
import { createSoftAuthenticator, type CreateOptions } from './support/soft-authenticator.ts';

const authenticator = createSoftAuthenticator();
const denied = { error: { code: 'PERMISSION_DENIED' as const } };
const escalation = { error: { code: 'PERMISSION_DENIED' as const, message: /roles you do not hold/ } };
const tokensOf = async (h: Harness, id: string) => (await h.store.load<User>('user', id))!.state.u2fTokens;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** `count` verified tokens of `userId` (ids ready-0…), each after its pending registration. */
const readyTokens = (userId: string, count: number): Fact[] =>
  Array.from({ length: count }, (_, i) => [
    facts.u2fPending(userId, { id: `ready-${i}`, challenge: 'cmVhZHk' }),
    facts.u2fReady(userId, { id: `ready-${i}`, name: `Key ${i}`, credentialId: Buffer.from(`${userId}-key-${i}`).toString('base64url') }),
  ]).flat();
/** `count` live pending registrations of `userId` (ids pending-0…, oldest first). */
const pendingTokens = (userId: string, count: number): Fact[] =>
  Array.from({ length: count }, (_, i) => facts.u2fPending(userId, { id: `pending-${i}`, challenge: `cGVuZGluZy0${i}` }));
// The bounds docs/graphql.md states (SPEC.md sets none): 20 verified tokens, 5 pending registrations.
const MAX_READY = 20;
const MAX_PENDING = 5;
const full = { error: { code: 'FAILED_PRECONDITION' as const, message: /already has 20 U2F tokens/ } };

describe('registerU2F', () => {
  const pending = (userId: string, owner: string, rpId = 'localhost', origins = ['http://localhost:4000']): Then<any> => ({
    events: [
      event(
        'user',
        userId,
        userEvents.u2fAdded,
        { id: 'id-1', challenge: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/), rpId, origins, expiresAt: expect.stringMatching(ISO) },
        owner,
      ),
    ],
    details: false,
    result: async (r, h, outcome) => {
      const payload = outcome.events[0]!.payload as { challenge: string; expiresAt: string };
      expect(r.u2fId).toBe('id-1');
      expect(r.publicKeyCredentialCreationOptions.challenge).toBe(payload.challenge);
      expect(r.publicKeyCredentialCreationOptions.rp.id).toBe(rpId);
      expect(r.publicKeyCredentialCreationOptions.user.name).toBe(userId);
      expect(r.publicKeyCredentialCreationOptions.attestation).toBe('none');
      // The challenge is valid for the configured 5 minutes.
      expect(Math.abs(Date.parse(payload.expiresAt) - (Date.now() + 300_000))).toBeLessThan(10_000);
      expect((await tokensOf(h, userId)).at(-1)).toMatchObject({ id: 'id-1', name: null, state: 'U2F_STATE_NOT_READY' });
    },
  });
  const exampleCom = { env: { WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'https://example.com,https://login.example.com' } };
  commandTable<any>(registerU2F, [
    {
      name: 'the user itself: a pending token with its challenge',
      caller: U.alice,
      input: { userId: U.alice },
      then: pending(U.alice, ORG_A),
    },
    {
      name: "ORG_OWNER (user.credential.write) of the user's org",
      caller: U.ownerA,
      input: { userId: U.alice },
      then: pending(U.alice, ORG_A),
    },
    {
      name: 'x-service-orgid plays no part: the user is found anywhere',
      caller: U.ownerA,
      orgHeader: ORG_B,
      input: { userId: U.alice },
      then: pending(U.alice, ORG_A),
    },
    { name: 'IAM_OWNER on a user of any org', caller: ADMIN, input: { userId: U.bob }, then: pending(U.bob, ORG_B) },
    {
      name: 'the domain, normalized: the configured rp id',
      caller: U.alice,
      input: { userId: U.alice, domain: ' LocalHost. ' },
      then: pending(U.alice, ORG_A),
    },
    {
      name: 'a blank domain: the configured rp id',
      caller: U.alice,
      input: { userId: U.alice, domain: ' ' },
      then: pending(U.alice, ORG_A),
    },
    {
      name: 'without domain: the configured rp id and all its origins',
      options: exampleCom,
      caller: U.alice,
      input: { userId: U.alice },
      then: pending(U.alice, ORG_A, 'example.com', ['https://example.com', 'https://login.example.com']),
    },
    {
      name: 'a subdomain of the rp id: only the origins that fit it',
      options: exampleCom,
      caller: U.alice,
      input: { userId: U.alice, domain: 'login.example.com' },
      then: pending(U.alice, ORG_A, 'login.example.com', ['https://login.example.com']),
    },
    {
      name: 'a domain that is not the rp id or under it: INVALID_ARGUMENT',
      options: exampleCom,
      caller: U.alice,
      input: { userId: U.alice, domain: 'example.org' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.domain'], message: /relying-party id example.com or a subdomain/ } },
    },
    {
      name: 'a domain that is no host name: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, domain: 'local host' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.domain'], message: /host name/ } },
    },
    {
      name: 'a subdomain no configured origin can use: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, domain: 'sub.localhost' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.domain'], message: /no configured origin/ } },
    },
    {
      name: 'a domain of 254: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, domain: `${chars(244)}.localhost` },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.domain', 'input.domain'] } },
    },
    {
      name: 'no configured origin fits the configured rp id: FAILED_PRECONDITION',
      options: { env: { WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGINS: 'http://localhost:4000' } },
      caller: U.alice,
      input: { userId: U.alice },
      then: { error: { code: 'FAILED_PRECONDITION', message: /No configured WebAuthn origin/ } },
    },
    {
      name: 'ready tokens are excluded from the options',
      given: [
        ...world,
        facts.u2fPending(U.alice, { id: 'u2f-r', challenge: 'cmVhZHk' }),
        facts.u2fReady(U.alice, { id: 'u2f-r', name: 'Key', credentialId: 'Y3JlZC0x', transports: ['usb'] }),
      ],
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        events: [
          event(
            'user',
            U.alice,
            userEvents.u2fAdded,
            {
              id: 'id-1',
              challenge: expect.any(String),
              rpId: 'localhost',
              origins: ['http://localhost:4000'],
              expiresAt: expect.any(String),
            },
            ORG_A,
          ),
        ],
        result: (r) =>
          expect(r.publicKeyCredentialCreationOptions.excludeCredentials).toEqual([
            { id: 'Y3JlZC0x', type: 'public-key', transports: ['usb'] },
          ]),
      },
    },
    {
      name: 'a new registration drops pending tokens whose challenge had expired',
      given: [
        ...world,
        facts.u2fPending(U.alice, { id: 'u2f-old', challenge: 'b2xk', expiresAt: new Date(Date.now() - 1000).toISOString() }),
        facts.u2fPending(U.alice, { id: 'u2f-live', challenge: 'bGl2ZQ' }),
      ],
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        events: [
          event(
            'user',
            U.alice,
            userEvents.u2fAdded,
            {
              id: 'id-1',
              challenge: expect.any(String),
              rpId: 'localhost',
              origins: ['http://localhost:4000'],
              expiresAt: expect.any(String),
            },
            ORG_A,
          ),
        ],
        result: async (_r, h) => expect((await tokensOf(h, U.alice)).map((t) => t.id)).toEqual(['u2f-live', 'id-1']),
      },
    },
    {
      name: `${MAX_PENDING} live registrations pending: the oldest is dropped`,
      given: [...world, ...pendingTokens(U.alice, MAX_PENDING)],
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        events: [
          event(
            'user',
            U.alice,
            userEvents.u2fAdded,
            {
              id: 'id-1',
              challenge: expect.any(String),
              rpId: 'localhost',
              origins: ['http://localhost:4000'],
              expiresAt: expect.any(String),
            },
            ORG_A,
          ),
        ],
        result: async (_r, h) =>
          expect((await tokensOf(h, U.alice)).map((t) => t.id)).toEqual([
            ...pendingTokens(U.alice, MAX_PENDING)
              .slice(1)
              .map((f) => (f.payload as { id: string }).id),
            'id-1',
          ]),
      },
    },
    {
      name: 'ready tokens never count as pending, and are never dropped',
      given: [...world, ...readyTokens(U.alice, 3), ...pendingTokens(U.alice, 2)],
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        events: [
          event(
            'user',
            U.alice,
            userEvents.u2fAdded,
            {
              id: 'id-1',
              challenge: expect.any(String),
              rpId: 'localhost',
              origins: ['http://localhost:4000'],
              expiresAt: expect.any(String),
            },
            ORG_A,
          ),
        ],
        result: async (_r, h) =>
          expect((await tokensOf(h, U.alice)).map((t) => t.id)).toEqual([
            'ready-0',
            'ready-1',
            'ready-2',
            'pending-0',
            'pending-1',
            'id-1',
          ]),
      },
    },
    {
      name: `${MAX_READY} ready tokens: FAILED_PRECONDITION`,
      given: [...world, ...readyTokens(U.alice, MAX_READY)],
      caller: U.alice,
      input: { userId: U.alice },
      then: full,
    },
    {
      name: `${MAX_READY} ready tokens: an administrator is refused too`,
      given: [...world, ...readyTokens(U.alice, MAX_READY)],
      caller: ADMIN,
      input: { userId: U.alice },
      then: full,
    },
    {
      name: `${MAX_READY - 1} ready tokens: one more may be registered`,
      given: [...world, ...readyTokens(U.alice, MAX_READY - 1)],
      caller: U.alice,
      input: { userId: U.alice },
      then: {
        events: [
          event(
            'user',
            U.alice,
            userEvents.u2fAdded,
            {
              id: 'id-1',
              challenge: expect.any(String),
              rpId: 'localhost',
              origins: ['http://localhost:4000'],
              expiresAt: expect.any(String),
            },
            ORG_A,
          ),
        ],
      },
    },
    {
      name: 'ORG_USER_MANAGER lacks user.credential.write: PERMISSION_DENIED',
      caller: U.managerA,
      input: { userId: U.alice },
      then: denied,
    },
    {
      name: "ORG_USER_MANAGER of the user's org (org-b), not its own: still PERMISSION_DENIED",
      caller: U.helperB,
      input: { userId: U.bob },
      then: denied,
    },
    { name: 'a role in another org only: PERMISSION_DENIED', caller: U.ownerB, input: { userId: U.alice }, then: denied },
    { name: 'another user without role: PERMISSION_DENIED', caller: U.alice, input: { userId: U.bob }, then: denied },
    {
      name: 'an unknown user: NOT_FOUND',
      caller: U.ownerA,
      input: { userId: 'ghost' },
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    },
    { name: 'no escalation: ORG_OWNER of org-a on a manager of org-b', caller: U.ownerA, input: { userId: U.helperB }, then: escalation },
    { name: 'no escalation: ORG_OWNER on an IAM_OWNER', given: bossWorld, caller: U.ownerA, input: { userId: BOSS }, then: escalation },
    {
      name: 'a blank userId: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: ' ' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    {
      name: 'a userId of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: chars(201) },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.userId'] } },
    },
    ...unauthenticatedRows<any>({ userId: U.alice }),
  ]);
});

describe('verifyU2FRegistration', () => {
  const CH = 'Y2hhbGxlbmdlLWFsaWNl';
  const CH_B = 'Y2hhbGxlbmdlLWJvYg';
  const TAKEN = Buffer.from('credential-of-bob');
  const seeded: Fact[] = [
    ...world,
    facts.u2fPending(U.alice, { id: 'u2f-1', challenge: CH }),
    facts.u2fPending(U.bob, { id: 'u2f-b', challenge: CH_B }),
    facts.u2fPending(U.ownerA, { id: 'u2f-o', challenge: CH }),
    facts.u2fPending(U.helperB, { id: 'u2f-h', challenge: CH }),
  ];
  const withReady: Fact[] = [
    ...seeded,
    facts.u2fPending(U.bob, { id: 'u2f-bready', challenge: 'eA' }),
    facts.u2fReady(U.bob, { id: 'u2f-bready', name: 'Bob key', credentialId: TAKEN.toString('base64url') }),
    facts.u2fPending(U.alice, { id: 'u2f-aready', challenge: 'eQ' }),
    facts.u2fReady(U.alice, { id: 'u2f-aready', name: 'Alice key', credentialId: Buffer.from('alice-first').toString('base64url') }),
  ];
  const good: CreateOptions = { challenge: CH, origin: 'http://localhost:4000', rpId: 'localhost' };
  /** A credential made for the row (kept in h.vars.cred), answered for userId / u2fId. */
  const answer =
    (userId: string, u2fId: string, options: Partial<CreateOptions> = {}, tokenName: unknown = 'YubiKey') =>
    (h: Harness) => {
      h.vars.cred = authenticator.create({ ...good, ...options });
      return { userId, u2fId, publicKeyCredential: h.vars.cred.response, tokenName };
    };
  const ready = (userId: string, u2fId: string, owner: string, over: Record<string, unknown> = {}): Then<any> => ({
    events: (h) => [
      event(
        'user',
        userId,
        userEvents.u2fVerified,
        {
          id: u2fId,
          name: 'YubiKey',
          credentialId: h.vars.cred.credentialId,
          publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
          counter: 0,
          transports: ['usb'],
          ...over,
        },
        owner,
      ),
    ],
    details: false,
    result: async (_r, h) => {
      const token = (await tokensOf(h, userId)).find((t) => t.id === u2fId)!;
      expect(token).toMatchObject({ state: 'U2F_STATE_READY', name: over.name ?? 'YubiKey', credentialId: h.vars.cred.credentialId });
      expect(token.challenge).toBeUndefined();
      expect(await h.store.lookup(`u2fCredential:${h.vars.cred.credentialId}`)).toEqual({ aggregateType: 'user', aggregateId: userId });
    },
  });
  const invalidCredential = (message: RegExp) => ({
    error: { code: 'INVALID_ARGUMENT' as const, fields: ['input.publicKeyCredential'], message },
  });
  /** An object `levels` deep (the credential itself is level 1), long enough to pass the size rule. */
  const nested = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { pad: chars(60) };
    for (let i = 1; i < levels; i++) v = { n: v };
    return v;
  };
  /** An object holding `n` members: an array of n - 1 elements and its own key. */
  const members = (n: number): Record<string, unknown> => ({ list: Array.from({ length: n - 1 }, () => 0) });
  const row = (r: Omit<Row<any>, 'given'> & { given?: Fact[] }): Row<any> => ({ given: seeded, ...r });
  commandTable<any>(verifyU2FRegistration, [
    row({
      name: 'the user itself: the token ready, the credential stored and claimed',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1'),
      then: ready(U.alice, 'u2f-1', ORG_A),
    }),
    row({
      name: 'the token name trimmed',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', {}, '  My key '),
      then: ready(U.alice, 'u2f-1', ORG_A, { name: 'My key' }),
    }),
    row({
      name: 'packed self attestation, its counter kept; unknown transports dropped',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { fmt: 'packed', counter: 7, transports: ['nfc', 'warp', 'nfc', 'usb'] }),
      then: ready(U.alice, 'u2f-1', ORG_A, { counter: 7, transports: ['nfc', 'usb'] }),
    }),
    row({ name: "ORG_OWNER of the user's org", caller: U.ownerA, input: answer(U.alice, 'u2f-1'), then: ready(U.alice, 'u2f-1', ORG_A) }),
    row({
      name: 'IAM_OWNER, any org',
      caller: ADMIN,
      input: answer(U.bob, 'u2f-b', { challenge: CH_B }),
      then: ready(U.bob, 'u2f-b', ORG_B),
    }),
    row({
      name: 'a token name of 200',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', {}, chars(200)),
      then: ready(U.alice, 'u2f-1', ORG_A, { name: chars(200) }),
    }),
    row({
      name: 'ORG_USER_MANAGER lacks user.credential.write: PERMISSION_DENIED',
      caller: U.managerA,
      input: answer(U.alice, 'u2f-1'),
      then: denied,
    }),
    row({ name: 'a role in another org only: PERMISSION_DENIED', caller: U.ownerB, input: answer(U.alice, 'u2f-1'), then: denied }),
    row({ name: 'another user without role: PERMISSION_DENIED', caller: U.bob, input: answer(U.alice, 'u2f-1'), then: denied }),
    row({
      name: 'no escalation: ORG_OWNER of org-a on a manager of org-b',
      caller: U.ownerA,
      input: answer(U.helperB, 'u2f-h'),
      then: escalation,
    }),
    row({ name: 'an ORG_OWNER on itself', caller: U.ownerA, input: answer(U.ownerA, 'u2f-o'), then: ready(U.ownerA, 'u2f-o', ORG_A) }),
    row({
      name: 'an unknown user: NOT_FOUND',
      caller: U.ownerA,
      input: answer('ghost', 'u2f-1'),
      then: { error: { code: 'NOT_FOUND', message: /User not found/ } },
    }),
    row({
      name: 'an unknown u2fId: NOT_FOUND',
      caller: U.alice,
      input: answer(U.alice, 'u2f-nope'),
      then: { error: { code: 'NOT_FOUND', message: /U2F token not found/ } },
    }),
    row({
      name: "another user's u2fId: NOT_FOUND",
      caller: U.alice,
      input: answer(U.alice, 'u2f-b', { challenge: CH_B }),
      then: { error: { code: 'NOT_FOUND', message: /U2F token not found/ } },
    }),
    row({
      name: 'a token already verified: FAILED_PRECONDITION',
      given: withReady,
      caller: U.alice,
      input: answer(U.alice, 'u2f-aready', { challenge: 'eQ' }),
      then: { error: { code: 'FAILED_PRECONDITION', message: /already verified/ } },
    }),
    row({
      name: 'verify twice: the second is FAILED_PRECONDITION',
      caller: U.alice,
      arrange: async (h) =>
        expect((await h.when((ctx) => verifyU2FRegistration(ctx, answer(U.alice, 'u2f-1')(h)), { caller: U.alice })).ok).toBe(true),
      input: answer(U.alice, 'u2f-1'),
      then: { error: { code: 'FAILED_PRECONDITION', message: /already verified/ } },
    }),
    row({
      name: 'an expired challenge: INVALID_ARGUMENT',
      given: [...world, facts.u2fPending(U.alice, { id: 'u2f-1', challenge: CH, expiresAt: new Date(Date.now() - 1).toISOString() })],
      caller: U.alice,
      input: answer(U.alice, 'u2f-1'),
      then: invalidCredential(/challenge has expired/),
    }),
    row({
      name: 'another challenge: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { challenge: CH_B }),
      then: invalidCredential(/does not answer the challenge/),
    }),
    row({
      name: 'an origin not configured: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { origin: 'https://evil.example' }),
      then: invalidCredential(/origin that is not allowed/),
    }),
    row({
      name: 'another rp id: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { rpId: 'evil.example' }),
      then: invalidCredential(/another relying-party id/),
    }),
    row({
      name: 'a tampered attestation signature: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { fmt: 'packed', tamperSignature: true }),
      then: invalidCredential(/signature that does not verify/),
    }),
    row({
      name: 'an assertion instead of a registration: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { type: 'webauthn.get' }),
      then: invalidCredential(/not a registration/),
    }),
    row({
      name: 'a credential registered to another user: ALREADY_EXISTS',
      given: withReady,
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { credentialId: new Uint8Array(TAKEN) }),
      then: { error: { code: 'ALREADY_EXISTS', message: /u2fCredential/ } },
    }),
    row({
      name: 'a credential the user registered already: ALREADY_EXISTS',
      given: withReady,
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { credentialId: new Uint8Array(Buffer.from('alice-first')) }),
      then: { error: { code: 'ALREADY_EXISTS', message: /U2F credential already exists/ } },
    }),
    row({
      name: 'a public key of 4096 bytes (padded): ready',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { publicKeyBytes: 4096 }),
      then: ready(U.alice, 'u2f-1', ORG_A),
    }),
    row({
      name: 'a public key of 4097 bytes (padded): INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { publicKeyBytes: 4097 }),
      then: invalidCredential(/public key longer than 4096 bytes/),
    }),
    row({
      name: 'a public key padded to 700,000 bytes: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', { publicKeyBytes: 700_000 }),
      then: invalidCredential(/public key longer than 4096 bytes/),
    }),
    row({
      name: `${MAX_READY} ready tokens and one pending: FAILED_PRECONDITION`,
      given: [...seeded, ...readyTokens(U.alice, MAX_READY)],
      caller: U.alice,
      input: answer(U.alice, 'u2f-1'),
      then: full,
    }),
    row({
      name: `the ${MAX_READY}th token is verified while another pending one waits: that one is refused`,
      given: [...seeded, ...readyTokens(U.alice, MAX_READY - 1), facts.u2fPending(U.alice, { id: 'u2f-2', challenge: CH_B })],
      arrange: async (h) =>
        expect(
          (await h.when((ctx) => verifyU2FRegistration(ctx, answer(U.alice, 'u2f-2', { challenge: CH_B })(h)), { caller: U.alice })).ok,
        ).toBe(true),
      caller: U.alice,
      input: answer(U.alice, 'u2f-1'),
      then: full,
    }),
    row({
      name: 'an object that is no credential: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: { junk: chars(100) }, tokenName: 'k' },
      then: invalidCredential(/could not be parsed or verified/),
    }),
    row({
      name: 'a credential of 54 characters as JSON: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: { a: chars(46) }, tokenName: 'k' },
      then: invalidCredential(/55 to 1048576/),
    }),
    row({
      name: 'a credential of 55 characters passes the limit (and fails to verify)',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: { a: chars(47) }, tokenName: 'k' },
      then: invalidCredential(/could not be parsed/),
    }),
    row({
      name: 'a credential over 1048576 characters: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: { a: chars(1_048_570) }, tokenName: 'k' },
      then: invalidCredential(/55 to 1048576/),
    }),
    row({
      name: 'a credential nested 16 levels passes the shape rule (and fails to verify)',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: nested(16), tokenName: 'k' },
      then: invalidCredential(/could not be parsed/),
    }),
    row({
      name: 'a credential nested 17 levels: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: nested(17), tokenName: 'k' },
      then: invalidCredential(/deeper than 16 levels/),
    }),
    row({
      name: 'a credential of 1000 members passes the shape rule (and fails to verify)',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: members(1000), tokenName: 'k' },
      then: invalidCredential(/could not be parsed/),
    }),
    row({
      name: 'a credential of 1001 members (object members and array elements at any depth): INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: members(1001), tokenName: 'k' },
      then: invalidCredential(/at most 1000 members/),
    }),
    row({
      name: 'a credential that is no object: INVALID_ARGUMENT',
      caller: U.alice,
      input: { userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: chars(100), tokenName: 'k' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.publicKeyCredential'] } },
    }),
    row({
      name: 'tokenName blank, u2fId blank, userId of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: (h: Harness) => ({ ...answer(U.alice, 'u2f-1')(h), userId: chars(201), u2fId: ' ', tokenName: '' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.tokenName', 'input.u2fId', 'input.userId'] } },
    }),
    row({
      name: 'a tokenName of 201: INVALID_ARGUMENT',
      caller: U.alice,
      input: answer(U.alice, 'u2f-1', {}, chars(201)),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.tokenName'] } },
    }),
    ...unauthenticatedRows<any>({ userId: U.alice, u2fId: 'u2f-1', publicKeyCredential: { a: chars(100) }, tokenName: 'k' }, seeded),
  ]);
});
