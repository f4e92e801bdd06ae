// U2F / WebAuthn registration end to end over HTTP, on the embedded stores and on
// MongoDB-wire + Redis: registerU2F, then verifyU2FRegistration with credentials a
// software authenticator makes ('none' and 'packed' attestation), every failure of
// DESIGN.md section 8, the limits of SPEC.md operation 3, and the permissions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  RegisterU2FDocument,
  UserU2FTokensDocument,
  VerifyU2FRegistrationDocument,
} from './generated/graphql.ts';
import { describeWith } from './support/servers.ts';
import { expectRestStatus, onlyError, startGateway, violatedFields, type Response, type TestGateway } from './support/gateway.ts';
import { createSoftAuthenticator, type CreateOptions } from './support/soft-authenticator.ts';
import type { User } from '../src/model/users.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Ada', lastName: 'Lovelace', displayName: 'Ada L.' };

const ORIGIN = 'http://localhost:4000';
const SUB_ORIGIN = 'https://id.localhost';
const LIMIT = 1_048_576;
const CREDENTIAL = 'input.publicKeyCredential';

const authenticator = createSoftAuthenticator();

/** `value` with a `pad` field that makes its JSON text exactly `length` code points long. */
function paddedTo(value: Record<string, unknown>, length: number, filler = 'x'): Record<string, unknown> {
  const base = JSON.stringify({ ...value, pad: '' });
  const missing = length - [...base].length;
  if (missing < 0) throw new Error(`cannot pad ${base.length} chars down to ${length}`);
  const fillerPoints = [...filler].length;
  const pad = filler.repeat(Math.floor(missing / fillerPoints)) + 'x'.repeat(missing % fillerPoints);
  const out = { ...value, pad };
  expect([...JSON.stringify(out)].length).toBe(length);
  return out;
}

const SHORT_TTL_S = 4;

function u2fSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    let shortLived: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { ...env(), WEBAUTHN_ORIGINS: `${ORIGIN},${SUB_ORIGIN}` } });
      const ttlEnv = env();
      if (ttlEnv.MONGODB_DB) ttlEnv.MONGODB_DB += '_ttl';
      // Challenges that expire in SHORT_TTL_S: long enough for a registration verified at once
      // (five store round trips on FerretDB) on a loaded machine.
      shortLived = await startGateway({ env: { ...ttlEnv, U2F_CHALLENGE_TTL_SECONDS: String(SHORT_TTL_S) } });
    });
    afterAll(async () => {
      await gw?.close();
      await shortLived?.close();
    });

    const addUser = async (on = gw, extra: Record<string, unknown> = {}, opts: { orgId?: string } = {}) => {
      const res = await on.send(
        AddHumanUserDocument,
        { input: { profile, email: { email: `${unique('u')}@example.com`, isVerified: true }, ...extra } as any },
        opts,
      );
      if (!res.data) throw new Error(res.text);
      return res.data.addHumanUser.userId;
    };
    const stored = async (id: string, on = gw) => (await on.gateway.deps.store.load<User>('user', id))!;
    const sequenceOf = async (id: string, on = gw) => (await stored(id, on)).sequence;

    const register = async (userId: string, opts: { token?: string | null; domain?: string; on?: TestGateway } = {}) => {
      const on = opts.on ?? gw;
      const res = await on.send(RegisterU2FDocument, { input: { userId, domain: opts.domain } }, { token: opts.token });
      return res;
    };
    const registered = async (userId: string, opts: { token?: string | null; domain?: string; on?: TestGateway } = {}) => {
      const res = await register(userId, opts);
      if (!res.data) throw new Error(res.text);
      const { u2fId, publicKeyCredentialCreationOptions: options, details } = res.data.registerU2F;
      return { u2fId, options: options as any, details };
    };
    const verify = (
      userId: string,
      u2fId: string,
      publicKeyCredential: Record<string, unknown>,
      tokenName = 'YubiKey',
      opts: { token?: string | null; on?: TestGateway } = {},
    ) =>
      (opts.on ?? gw).send(
        VerifyU2FRegistrationDocument,
        { input: { userId, u2fId, publicKeyCredential, tokenName } },
        { token: opts.token },
      );
    const credentialFor = (options: any, extra: Partial<CreateOptions> = {}) =>
      authenticator.create({ challenge: options.challenge, origin: ORIGIN, rpId: options.rp.id, ...extra });
    const tokensOf = async (userId: string) => (await gw.send(UserU2FTokensDocument, { id: userId })).data!.user!.u2fTokens;

    /** A failure: the code, and nothing written. */
    const expectRefused = async (userId: string, res: Promise<Response<unknown>>, code: string, on = gw) => {
      const before = await sequenceOf(userId, on);
      const error = onlyError(await res);
      expect(error.extensions?.code).toBe(code);
      expect(await sequenceOf(userId, on)).toBe(before);
      return error;
    };

    it("registerU2F returns the creation options and a pending token; 'none' attestation verifies and the token is ready", async () => {
      const userId = await addUser();
      const before = await sequenceOf(userId);
      const { u2fId, options, details } = await registered(userId);
      expect(u2fId).toMatch(/^\d+$/);
      expect(details.sequence).toBe(String(before + 1));
      expect(details.creationDate).toBeNull();
      expect(details.resourceOwner).toBe(gw.defaultOrgId);
      expect(options.rp).toEqual({ id: 'localhost', name: gw.config.webauthn.rpName });
      expect(options.user.name).toMatch(/@example\.com$/);
      expect(options.user.displayName).toBe('Ada L.');
      expect(Buffer.from(options.user.id, 'base64url').toString()).toBe(userId);
      expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(options.attestation).toBe('none');
      expect(options.excludeCredentials).toEqual([]);
      expect(options.timeout).toBe(300_000);
      expect(options.pubKeyCredParams.map((p: any) => p.alg)).toContain(-7);
      expect(await tokensOf(userId)).toEqual([{ id: u2fId, name: null, state: 'U2F_STATE_NOT_READY' }]);

      const cred = credentialFor(options, { transports: ['usb', 'nfc', 'bogus'] });
      const res = await verify(userId, u2fId, cred.response as any, '  My YubiKey  ');
      expect(res.errors).toBeUndefined();
      const d = res.data!.verifyU2FRegistration.details;
      expect(d.sequence).toBe(String(before + 2));
      expect(d.creationDate).toBeNull();
      expect(d.resourceOwner).toBe(gw.defaultOrgId);
      expect(new Date(d.changeDate).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(await tokensOf(userId)).toEqual([{ id: u2fId, name: 'My YubiKey', state: 'U2F_STATE_READY' }]);

      const token = (await stored(userId)).state.u2fTokens[0]!;
      expect(token.credentialId).toBe(cred.credentialId);
      expect(token.publicKey).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(token.counter).toBe(0);
      expect(token.transports).toEqual(['usb', 'nfc']);
      expect(token.challenge).toBeUndefined();
      expect(token.expiresAt).toBeUndefined();
    });

    it("'packed' self attestation verifies; the next registration excludes the ready credential; the same credential again is refused", async () => {
      const userId = await addUser();
      const first = await registered(userId);
      const cred = credentialFor(first.options, { fmt: 'packed', counter: 7 });
      const res = await verify(userId, first.u2fId, cred.response as any, 'Packed key');
      expect(res.errors).toBeUndefined();
      expect(await tokensOf(userId)).toEqual([{ id: first.u2fId, name: 'Packed key', state: 'U2F_STATE_READY' }]);
      expect((await stored(userId)).state.u2fTokens[0]!.counter).toBe(7);

      const second = await registered(userId);
      expect(second.options.excludeCredentials).toEqual([{ id: cred.credentialId, type: 'public-key', transports: ['usb'] }]);
      const again = credentialFor(second.options, { credentialId: Buffer.from(cred.credentialId, 'base64url') });
      await expectRefused(userId, verify(userId, second.u2fId, again.response as any), 'ALREADY_EXISTS');

      // and a credential of one user cannot be registered for another
      const other = await addUser();
      const theirs = await registered(other);
      const stolen = credentialFor(theirs.options, { credentialId: Buffer.from(cred.credentialId, 'base64url') });
      await expectRefused(other, verify(other, theirs.u2fId, stolen.response as any), 'ALREADY_EXISTS');
    });

    const brokenCredentials: [string, (options: any) => Record<string, unknown>, RegExp][] = [
      [
        'a wrong challenge',
        (o) => credentialFor(o, { challenge: Buffer.from('not the challenge').toString('base64url') }).response as any,
        /challenge/,
      ],
      ['a wrong origin', (o) => credentialFor(o, { origin: 'https://evil.example' }).response as any, /origin/],
      ['a wrong rp id', (o) => credentialFor(o, { rpId: 'evil.example' }).response as any, /relying-party id/],
      ['a tampered signature', (o) => credentialFor(o, { fmt: 'packed', tamperSignature: true }).response as any, /signature/],
      ['an assertion instead of a registration', (o) => credentialFor(o, { type: 'webauthn.get' }).response as any, /registration/],
      ['an empty object padded to 55 chars', () => paddedTo({}, 55), /parsed/],
      [
        'garbage fields',
        () => ({ id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: '!!!', attestationObject: 42 } }),
        /parsed/,
      ],
      [
        'an undecodable attestation object',
        (o) => {
          const r = credentialFor(o).response as any;
          return { ...r, response: { ...r.response, attestationObject: Buffer.from('not cbor at all').toString('base64url') } };
        },
        /parsed/,
      ],
    ];
    for (const [what, make, description] of brokenCredentials) {
      it(`a credential with ${what} is INVALID_ARGUMENT, names the credential, and writes nothing`, async () => {
        const userId = await addUser();
        const { u2fId, options } = await registered(userId);
        const credential = make(options);
        const error = await expectRefused(userId, verify(userId, u2fId, credential), 'INVALID_ARGUMENT');
        expect(violatedFields(error)).toEqual([CREDENTIAL]);
        expect(error.message).toMatch(description);
        expect(error.message).not.toContain(options.challenge);
        expect(await tokensOf(userId)).toEqual([{ id: u2fId, name: null, state: 'U2F_STATE_NOT_READY' }]);
        // the pending token is still usable with a good credential
        expect((await verify(userId, u2fId, credentialFor(options).response as any)).errors).toBeUndefined();
      });
    }

    it('an expired challenge is INVALID_ARGUMENT and writes nothing', async () => {
      const userId = await addUser(shortLived);
      const { u2fId, options } = await registered(userId, { on: shortLived });
      expect(options.timeout).toBe(SHORT_TTL_S * 1000);
      await new Promise((r) => setTimeout(r, SHORT_TTL_S * 1000 + 300));
      const error = await expectRefused(
        userId,
        verify(userId, u2fId, credentialFor(options).response as any, 'late', { on: shortLived }),
        'INVALID_ARGUMENT',
        shortLived,
      );
      expect(violatedFields(error)).toEqual([CREDENTIAL]);
      expect(error.message).toMatch(/expired/);
      // a new registration drops the expired pending token and works
      const fresh = await registered(userId, { on: shortLived });
      const tokens = (await stored(userId, shortLived)).state.u2fTokens.map((t) => t.id);
      expect(tokens).toEqual([fresh.u2fId]);
      const ok = await verify(userId, fresh.u2fId, credentialFor(fresh.options).response as any, 'quick', { on: shortLived });
      expect(ok.errors).toBeUndefined();
    });

    it("an unknown u2fId and another user's u2fId are NOT_FOUND; verifying twice is FAILED_PRECONDITION", async () => {
      const userId = await addUser();
      const other = await addUser();
      const mine = await registered(userId);
      const theirs = await registered(other);
      const cred = credentialFor(mine.options).response as any;

      const unknown = await expectRefused(userId, verify(userId, '123456789', cred), 'NOT_FOUND');
      expect(unknown.extensions?.grpcCode).toBe(5);
      await expectRefused(userId, verify(userId, theirs.u2fId, credentialFor(theirs.options).response as any), 'NOT_FOUND');
      await expectRefused(other, verify(other, mine.u2fId, cred), 'NOT_FOUND');
      const missingUser = await verify('no-such-user', mine.u2fId, cred);
      expect(onlyError(missingUser).extensions?.code).toBe('NOT_FOUND');
      expectRestStatus(missingUser, 404);
      expect(onlyError(await register('no-such-user')).extensions?.code).toBe('NOT_FOUND');

      expect((await verify(userId, mine.u2fId, cred)).errors).toBeUndefined();
      const twice = await expectRefused(userId, verify(userId, mine.u2fId, cred), 'FAILED_PRECONDITION');
      expect(twice.extensions?.grpcCode).toBe(9);
      const fresh = credentialFor(mine.options).response as any;
      await expectRefused(userId, verify(userId, mine.u2fId, fresh), 'FAILED_PRECONDITION');
    });

    it('publicKeyCredential is 55..1048576 characters of JSON, counted in code points; a body that large is accepted', async () => {
      const userId = await addUser();
      const { u2fId, options } = await registered(userId);
      const lengthMessage = /55 to 1048576/;

      const short = await expectRefused(userId, verify(userId, u2fId, paddedTo({}, 54)), 'INVALID_ARGUMENT');
      expect(violatedFields(short)).toEqual([CREDENTIAL]);
      expect(short.message).toMatch(lengthMessage);
      const atMin = await expectRefused(userId, verify(userId, u2fId, paddedTo({}, 55)), 'INVALID_ARGUMENT');
      expect(atMin.message).not.toMatch(lengthMessage);

      const real = credentialFor(options, { fmt: 'packed' }).response as any;
      const overRes = verify(userId, u2fId, paddedTo(real, LIMIT + 1));
      const over = await overRes;
      expectRestStatus(over, 400);
      const tooLong = await expectRefused(userId, Promise.resolve(over), 'INVALID_ARGUMENT');
      expect(violatedFields(tooLong)).toEqual([CREDENTIAL]);
      expect(tooLong.message).toMatch(lengthMessage);
      expect(over.text.length).toBeLessThan(2000); // the input is not echoed

      // 1000 emoji are 2000 UTF-16 units but 1000 characters: exactly at the limit, and it verifies
      const atMax = paddedTo(real, LIMIT, '🔑');
      expect(JSON.stringify(atMax).length).toBeGreaterThan(LIMIT);
      const ok = await verify(userId, u2fId, atMax, 'padded');
      expect(ok.status).toBe(200);
      expect(ok.errors).toBeUndefined();
      expect(await tokensOf(userId)).toEqual([{ id: u2fId, name: 'padded', state: 'U2F_STATE_READY' }]);
    });

    it('tokenName: 200 emoji pass, 201 and blank fail; every violated field is listed', async () => {
      const userId = await addUser();
      const { u2fId, options } = await registered(userId);
      const cred = credentialFor(options).response as any;
      const long = await expectRefused(userId, verify(userId, u2fId, cred, '🔐'.repeat(201)), 'INVALID_ARGUMENT');
      expect(violatedFields(long)).toEqual(['input.tokenName']);
      const blank = await expectRefused(userId, verify(userId, u2fId, cred, '  \t '), 'INVALID_ARGUMENT');
      expect(violatedFields(blank)).toEqual(['input.tokenName']);
      const both = await expectRefused(userId, verify(userId, u2fId, paddedTo({}, 54), ''), 'INVALID_ARGUMENT');
      expect(violatedFields(both)).toEqual([CREDENTIAL, 'input.tokenName']);

      const ok = await verify(userId, u2fId, cred, '🔐'.repeat(200));
      expect(ok.errors).toBeUndefined();
      expect((await tokensOf(userId))[0]!.name).toBe('🔐'.repeat(200));
    });

    it('domain: the configured rp id or a subdomain a configured origin can use; anything else is INVALID_ARGUMENT', async () => {
      const userId = await addUser();
      const same = await registered(userId, { domain: ' LocalHost ' });
      expect(same.options.rp.id).toBe('localhost');

      const sub = await registered(userId, { domain: 'id.localhost' });
      expect(sub.options.rp.id).toBe('id.localhost');
      // the token is bound to its rp id: a credential for the configured one, or from an origin outside it, fails
      await expectRefused(
        userId,
        verify(userId, sub.u2fId, credentialFor(sub.options, { rpId: 'localhost', origin: SUB_ORIGIN }).response as any),
        'INVALID_ARGUMENT',
      );
      await expectRefused(
        userId,
        verify(userId, sub.u2fId, credentialFor(sub.options, { origin: ORIGIN }).response as any),
        'INVALID_ARGUMENT',
      );
      const ok = await verify(userId, sub.u2fId, credentialFor(sub.options, { origin: SUB_ORIGIN }).response as any, 'sub');
      expect(ok.errors).toBeUndefined();

      for (const domain of ['evil.example', 'localhost.evil.example', 'other.localhost', 'not a host', 'exa_mple']) {
        const res = await register(userId, { domain });
        const error = onlyError(res);
        expect(error.extensions?.code, domain).toBe('INVALID_ARGUMENT');
        expect(violatedFields(error), domain).toEqual(['input.domain']);
      }
    });

    it("permissions: no token is UNAUTHENTICATED; another plain user, a user manager and another org's owner are PERMISSION_DENIED; the user itself and an org owner may", async () => {
      const org = (await gw.send(AddOrganizationDocument, { input: { name: unique('U2F Org ') } })).data!.addOrganization.orgId;
      const target = await addUser(gw, { organisation: { orgId: org } });
      const plain = await addUser(gw, { organisation: { orgId: org } });
      const owner = await addUser(gw, { organisation: { orgId: org } });
      const manager = await addUser(gw, { organisation: { orgId: org } });
      const foreignOwner = await addUser();
      expect(
        (await gw.send(AddOrgMemberDocument, { input: { userId: owner, roles: ['ORG_OWNER'] } }, { orgId: org })).errors,
      ).toBeUndefined();
      expect(
        (await gw.send(AddOrgMemberDocument, { input: { userId: manager, roles: ['ORG_USER_MANAGER'] } }, { orgId: org })).errors,
      ).toBeUndefined();
      expect((await gw.send(AddOrgMemberDocument, { input: { userId: foreignOwner, roles: ['ORG_OWNER'] } })).errors).toBeUndefined();
      const pending = await registered(target);
      const cred = credentialFor(pending.options).response as any;

      const anonymous = await expectRefused(target, register(target, { token: null }), 'UNAUTHENTICATED');
      expect(anonymous.extensions?.grpcCode).toBe(16);
      await expectRefused(target, verify(target, pending.u2fId, cred, 'x', { token: null }), 'UNAUTHENTICATED');
      for (const who of [plain, manager, foreignOwner]) {
        const token = await gw.tokenFor(who);
        const denied = await register(target, { token });
        expect(onlyError(denied).extensions?.code).toBe('PERMISSION_DENIED');
        expectRestStatus(denied, 403);
        await expectRefused(target, verify(target, pending.u2fId, cred, 'x', { token }), 'PERMISSION_DENIED');
      }

      // the user itself
      const selfToken = await gw.tokenFor(target);
      const own = await registered(target, { token: selfToken });
      const ownRes = await verify(target, own.u2fId, credentialFor(own.options).response as any, 'mine', { token: selfToken });
      expect(ownRes.errors).toBeUndefined();
      expect(ownRes.data!.verifyU2FRegistration.details.resourceOwner).toBe(org);

      // an owner of the user's organization, finishing a registration the admin started
      const ownerToken = await gw.tokenFor(owner);
      const byOwner = await verify(target, pending.u2fId, cred, 'by owner', { token: ownerToken });
      expect(byOwner.errors).toBeUndefined();
      const started = await registered(target, { token: ownerToken });
      expect(started.details.resourceOwner).toBe(org);
      expect(started.options.excludeCredentials).toHaveLength(2);

      const tokens = (await stored(target)).state.u2fTokens;
      expect(tokens.map((t) => [t.name, t.state])).toEqual([
        ['by owner', 'U2F_STATE_READY'],
        ['mine', 'U2F_STATE_READY'],
        [null, 'U2F_STATE_NOT_READY'],
      ]);
    });
  });
}

u2fSuite('U2F registration on the embedded stores', () => ({}));
describeWith('mongo', 'U2F registration on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    u2fSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `e2e_u2f_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
