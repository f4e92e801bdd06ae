// The identity provider operations end to end over HTTP (SPEC.md operation 2, DESIGN.md
// sections 3, 6, 7 and 8), on the embedded stores and on MongoDB-wire + Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOIDCIdentityProviderDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  IdentityProviderDocument,
  MutationDeprecationsDocument,
  UpdateOIDCIdentityProviderDocument,
  UserDocument,
  type AddOIDCIdentityProviderInput,
  type UpdateOIDCIdentityProviderInput,
} from './generated/graphql.ts';
import { describeWith } from './support/servers.ts';
import { onlyError, startGateway, violatedFields, type Response, type TestGateway } from './support/gateway.ts';
import type { IdentityProvider } from '../src/model/idps.ts';
import { open } from '../src/model/secret-box.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Ada', lastName: 'Lovelace' };
const DEPRECATION = 'Deprecated operation of the identity API; it may be removed in a future version.';
const emoji = (n: number) => '😀'.repeat(n);

const statusOf = {
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  FAILED_PRECONDITION: 409,
  INVALID_ARGUMENT: 400,
} as const;

function expectError(res: Response<unknown>, code: keyof typeof statusOf, label = '') {
  const err = onlyError(res);
  expect(err.extensions?.code, `${label}: ${res.text}`).toBe(code);
  // An executed request: HTTP 200, the REST face's status as extensions.httpStatus.
  expect(res.status, `${label}: ${res.text}`).toBe(200);
  expect(err.extensions?.httpStatus, `${label}: ${res.text}`).toBe(statusOf[code]);
  return err;
}

function expectOk<T>(res: Response<T>, label = ''): T {
  expect(res.errors, `${label}: ${res.text}`).toBeUndefined();
  return res.data!;
}

function idpSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const store = () => gw.gateway.deps.store;
    const stored = async (id: string) => (await store().load<IdentityProvider>('idp', id))!;
    const storedSecret = async (id: string) => open(gw.gateway.deps.idpSecretKey, id, (await stored(id)).state.clientSecret!);
    const eventsJson = async (id: string) => JSON.stringify(await store().events('idp', id));
    /** Every response text this suite saw, and every client secret it sent, to check no secret ever came back. */
    const seen: string[] = [];
    const secretsSent = new Set<string>();
    const remember = (secret: string | null | undefined) => {
      if (secret && /^[\w!-]{12,}$/.test(secret)) secretsSent.add(secret);
    };

    const send: TestGateway['send'] = async (doc, variables, opts) => {
      const res = await gw.send(doc, variables, opts);
      seen.push(res.text);
      return res;
    };
    const addIdp = (input: Partial<AddOIDCIdentityProviderInput> = {}, opts: Parameters<TestGateway['send']>[2] = {}) => {
      const full = {
        name: unique('IDP '),
        issuer: 'https://issuer.example',
        clientId: unique('client-'),
        clientSecret: unique('s3cr3t-'),
        ...input,
      };
      remember(full.clientSecret);
      return send(AddOIDCIdentityProviderDocument, { input: full }, opts);
    };
    const added = async (input: Partial<AddOIDCIdentityProviderInput> = {}, opts: Parameters<TestGateway['send']>[2] = {}) =>
      expectOk(await addIdp(input, opts), 'addOIDCIdentityProvider').addOIDCIdentityProvider;
    const update = (input: UpdateOIDCIdentityProviderInput, opts: Parameters<TestGateway['send']>[2] = {}) => {
      remember(input.clientSecret);
      return send(UpdateOIDCIdentityProviderDocument, { input }, opts);
    };
    const read = (id: string, opts: Parameters<TestGateway['send']>[2] = {}) => send(IdentityProviderDocument, { id }, opts);

    const newOrg = async () => expectOk(await send(AddOrganizationDocument, { input: { name: unique('Org ') } })).addOrganization.orgId;
    const newUser = async (orgId?: string) =>
      expectOk(
        await send(AddHumanUserDocument, {
          input: {
            profile,
            email: { email: `${unique('u')}@example.com`, isVerified: true },
            ...(orgId ? { organisation: { orgId } } : {}),
          },
        }),
      ).addHumanUser.userId;
    /** A user of `orgId` holding `roles` there, and a token for it. */
    const member = async (orgId: string, roles: string[]) => {
      const userId = await newUser(orgId);
      if (roles.length) expectOk(await send(AddOrgMemberDocument, { input: { userId, roles } }, { orgId }), 'addOrgMember');
      return { userId, token: await gw.tokenFor(userId) };
    };

    it('addOIDCIdentityProvider stores the IDP; identityProvider reads it back without the secret', async () => {
      const secret = unique('Cl!ent-s3cret-');
      const res = await addIdp({
        name: '  Corporate SSO ',
        issuer: 'https://login.example.com',
        clientId: 'gateway-client',
        clientSecret: secret,
        scopes: ['openid', 'profile', 'email'],
        displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
        usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
      });
      const { idpId, details } = expectOk(res).addOIDCIdentityProvider;
      expect(idpId).toMatch(/^\d+$/);
      expect(details.sequence).toBe('1');
      expect(details.creationDate).toBe(details.changeDate);
      expect(details.resourceOwner).toBe(gw.defaultOrgId);
      expect(new Date(details.changeDate).getTime()).toBeGreaterThan(Date.now() - 60_000);

      const got = await read(idpId);
      expect(expectOk(got).identityProvider).toEqual({
        id: idpId,
        name: 'Corporate SSO',
        resourceOwner: gw.defaultOrgId,
        details: { sequence: '1', creationDate: details.changeDate, changeDate: details.changeDate, resourceOwner: gw.defaultOrgId },
        issuer: 'https://login.example.com',
        clientId: 'gateway-client',
        hasClientSecret: true,
        scopes: ['openid', 'profile', 'email'],
        displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
        usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
      });

      // Encrypted at rest, bound to this IDP, and nowhere in clear.
      expect(await storedSecret(idpId)).toBe(secret);
      const events = await store().events('idp', idpId);
      expect(events.map((e) => [e.type, e.sequence, e.creator])).toEqual([['idp.oidc.added', 1, gw.adminId]]);
      expect(events[0]!.payload.clientSecret).toMatch(/^v1:/);
      expect(JSON.stringify(events)).not.toContain(secret);
      expect(JSON.stringify(await stored(idpId))).not.toContain(secret);
      expect(res.text + got.text).not.toContain(secret);
      expect(gw.logs.join('\n')).not.toContain(secret);
    });

    it('defaults: scopes left out are empty, mappings UNSPECIFIED', async () => {
      const { idpId } = await added();
      const idp = expectOk(await read(idpId)).identityProvider!;
      expect(idp.scopes).toEqual([]);
      expect(idp.displayNameMapping).toBe('OIDC_MAPPING_FIELD_UNSPECIFIED');
      expect(idp.usernameMapping).toBe('OIDC_MAPPING_FIELD_UNSPECIFIED');
    });

    it('updateOIDCIdentityProvider replaces the whole configuration: left-out scopes are [] and mappings UNSPECIFIED', async () => {
      const secret = unique('keep-me-');
      const { idpId } = await added({
        clientSecret: secret,
        scopes: ['openid', 'groups'],
        displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
        usernameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
      });
      const res = await update({ idpId, issuer: ' https://new-issuer.example ', clientId: 'new-client' });
      const { details } = expectOk(res).updateOIDCIdentityProvider;
      expect(details.sequence).toBe('2');
      expect(details.creationDate).not.toBeNull();
      expect(details.creationDate).toBe(details.changeDate);
      expect(details.resourceOwner).toBe(gw.defaultOrgId);

      const idp = expectOk(await read(idpId)).identityProvider!;
      expect(idp).toMatchObject({
        issuer: 'https://new-issuer.example',
        clientId: 'new-client',
        scopes: [],
        displayNameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
        usernameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
        hasClientSecret: true,
      });
      expect(idp.details.sequence).toBe('2');
      expect(new Date(idp.details.creationDate!).getTime()).toBeLessThanOrEqual(new Date(idp.details.changeDate).getTime());
      // No secret given: the stored one is still there and still opens.
      expect(await storedSecret(idpId)).toBe(secret);
      const events = await store().events('idp', idpId);
      expect(events.map((e) => e.type)).toEqual(['idp.oidc.added', 'idp.oidc.changed']);
      expect(events[1]!.payload).not.toHaveProperty('clientSecret');
    });

    it('an empty clientSecret keeps the stored one; a new one replaces it, encrypted', async () => {
      const first = unique('first-');
      const { idpId } = await added({ clientSecret: first, scopes: ['openid'] });
      expectOk(await update({ idpId, issuer: 'https://a.example', clientId: 'a', clientSecret: '', scopes: ['openid'] }));
      expect(await storedSecret(idpId)).toBe(first);

      const second = unique('second-');
      const res = await update({ idpId, issuer: 'https://a.example', clientId: 'a', clientSecret: second, scopes: ['openid'] });
      expect(expectOk(res).updateOIDCIdentityProvider.details.sequence).toBe('3');
      expect(await storedSecret(idpId)).toBe(second);
      const json = await eventsJson(idpId);
      expect(json).not.toContain(first);
      expect(json).not.toContain(second);
      expect((await store().events('idp', idpId))[2]!.payload.clientSecret).toMatch(/^v1:/);
      expect(gw.logs.join('\n')).not.toContain(second);
      expect(expectOk(await read(idpId)).identityProvider!.hasClientSecret).toBe(true);
    });

    it('the same configuration with no new secret is FAILED_PRECONDITION and writes nothing; a new secret always counts', async () => {
      const secret = unique('same-');
      const config = {
        issuer: 'https://same.example',
        clientId: 'same',
        scopes: ['openid', 'email'],
        displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL' as const,
        usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL' as const,
      };
      const { idpId } = await added({ ...config, clientSecret: secret });
      for (const clientSecret of [undefined, null, '']) {
        const same = await update({ idpId, ...config, clientSecret });
        expectError(same, 'FAILED_PRECONDITION', `clientSecret ${JSON.stringify(clientSecret)}`);
        expect((await stored(idpId)).sequence).toBe(1);
      }
      // Trimmed values compare equal too.
      expectError(await update({ idpId, ...config, issuer: ' https://same.example ' }), 'FAILED_PRECONDITION');
      // Scope order is part of the configuration.
      expectOk(await update({ idpId, ...config, scopes: ['email', 'openid'] }));
      expect((await stored(idpId)).sequence).toBe(2);
      // Even the very same secret again is a change (it is re-encrypted).
      const before = (await stored(idpId)).state.clientSecret;
      expectOk(await update({ idpId, ...config, scopes: ['email', 'openid'], clientSecret: secret }));
      const after = await stored(idpId);
      expect(after.sequence).toBe(3);
      expect(after.state.clientSecret).not.toBe(before);
      expect(await storedSecret(idpId)).toBe(secret);
    });

    it('NOT_FOUND for an unknown IDP and for an IDP of another organization; that organization itself finds it', async () => {
      const input = { issuer: 'https://x.example', clientId: 'x' };
      expectError(await update({ idpId: 'no-such-idp', ...input }), 'NOT_FOUND');
      const orgId = await newOrg();
      const { idpId } = await added({}, { orgId });
      expect((await stored(idpId)).resourceOwner).toBe(orgId);
      expectError(await update({ idpId, ...input }), 'NOT_FOUND', 'admin acting in the default org');
      expect((await stored(idpId)).sequence).toBe(1);
      expect(expectOk(await read(idpId)).identityProvider).toBeNull();
      expect(expectOk(await read('no-such-idp')).identityProvider).toBeNull();

      const res = await update({ idpId, ...input }, { orgId });
      expect(expectOk(res).updateOIDCIdentityProvider.details.resourceOwner).toBe(orgId);
      expect(expectOk(await read(idpId, { orgId })).identityProvider!.resourceOwner).toBe(orgId);
    });

    it('permissions: org.idp.write in the acting organization; reading needs a role there', async () => {
      const orgId = await newOrg();
      const { idpId } = await added({}, { orgId });
      const input = { idpId, issuer: 'https://perm.example', clientId: 'perm' };

      for (const [label, token] of [
        ['no token', null],
        ['forged token', 'not-a-jwt'],
      ] as const) {
        expectError(await addIdp({}, { token, orgId }), 'UNAUTHENTICATED', `add, ${label}`);
        expectError(await update(input, { token, orgId }), 'UNAUTHENTICATED', `update, ${label}`);
        expectError(await read(idpId, { token, orgId }), 'UNAUTHENTICATED', `read, ${label}`);
      }

      const plain = await member(orgId, []);
      expectError(await addIdp({}, { token: plain.token }), 'PERMISSION_DENIED', 'plain user');
      expectError(await update(input, { token: plain.token }), 'PERMISSION_DENIED', 'plain user');
      expectError(await read(idpId, { token: plain.token }), 'PERMISSION_DENIED', 'plain user reads');
      expectError(await read('no-such-idp', { token: plain.token }), 'PERMISSION_DENIED', 'plain user cannot probe ids');

      const userManager = await member(orgId, ['ORG_USER_MANAGER']);
      expectError(await addIdp({}, { token: userManager.token }), 'PERMISSION_DENIED', 'ORG_USER_MANAGER');
      expectError(await update(input, { token: userManager.token }), 'PERMISSION_DENIED', 'ORG_USER_MANAGER');
      expect(expectOk(await read(idpId, { token: userManager.token })).identityProvider!.id).toBe(idpId);
      expect((await stored(idpId)).sequence).toBe(1);

      const settings = await member(orgId, ['ORG_SETTINGS_MANAGER']);
      const own = await added({}, { token: settings.token });
      expect(own.details.resourceOwner).toBe(orgId);
      expect((await store().events('idp', own.idpId))[0]!.creator).toBe(settings.userId);
      expect(expectOk(await update(input, { token: settings.token })).updateOIDCIdentityProvider.details.sequence).toBe('2');
      expect(expectOk(await read(idpId, { token: settings.token })).identityProvider!.issuer).toBe('https://perm.example');

      const owner = await member(orgId, ['ORG_OWNER']);
      expectOk(await update({ ...input, clientId: 'by-owner' }, { token: owner.token }));

      // Another organization through x-service-orgid, without a role there.
      const elsewhere = await newOrg();
      const theirs = await added({}, { orgId: elsewhere });
      expectError(await addIdp({}, { token: settings.token, orgId: elsewhere }), 'PERMISSION_DENIED', 'settings manager, other org');
      expectError(
        await update({ idpId: theirs.idpId, issuer: 'https://x.example', clientId: 'x' }, { token: settings.token, orgId: elsewhere }),
        'PERMISSION_DENIED',
        'settings manager updates in another org',
      );
      expectError(await read(theirs.idpId, { token: settings.token, orgId: elsewhere }), 'PERMISSION_DENIED');
      // Without the header, the other org's IDP is simply not in the acting org.
      expectError(
        await update({ idpId: theirs.idpId, issuer: 'https://x.example', clientId: 'x' }, { token: settings.token }),
        'NOT_FOUND',
      );
      expect((await stored(theirs.idpId)).sequence).toBe(1);

      // An organization that does not exist: PERMISSION_DENIED, even for the administrator.
      expectError(await addIdp({}, { orgId: 'no-such-org' }), 'PERMISSION_DENIED', 'unknown org header');
      expectError(await read(idpId, { orgId: 'no-such-org' }), 'PERMISSION_DENIED', 'unknown org header');

      // The instance administrator with the header works anywhere.
      expect(
        expectOk(await update({ idpId: theirs.idpId, issuer: 'https://admin.example', clientId: 'x' }, { orgId: elsewhere }))
          .updateOIDCIdentityProvider.details.resourceOwner,
      ).toBe(elsewhere);
    });

    it('every text limit at its boundary in code points: 200 passes, 201 fails and writes nothing', async () => {
      // add: name, issuer, clientId, clientSecret, a scope
      const fields = ['name', 'issuer', 'clientId', 'clientSecret'] as const;
      for (const field of fields) {
        const ok = await addIdp({ [field]: emoji(200) });
        expectOk(ok, `add ${field} 200`);
        const bad = await addIdp({ [field]: emoji(200) + 'x' });
        expect(violatedFields(expectError(bad, 'INVALID_ARGUMENT', `add ${field} 201`))).toEqual([`input.${field}`]);
        for (const blank of ['', ' \t ']) {
          const empty = await addIdp({ [field]: blank });
          expect(violatedFields(expectError(empty, 'INVALID_ARGUMENT', `add ${field} blank`))).toEqual([`input.${field}`]);
        }
      }
      expectOk(await addIdp({ scopes: [emoji(200)] }), 'scope 200');
      expect(violatedFields(expectError(await addIdp({ scopes: ['openid', emoji(201)] }), 'INVALID_ARGUMENT'))).toEqual(['input.scopes.1']);

      // update: issuer, clientId, clientSecret, a scope; the IDP's sequence stays where it was on failure
      const { idpId } = await added({ issuer: 'https://limits.example', clientId: 'limits' });
      let sequence = 1;
      for (const field of ['issuer', 'clientId', 'clientSecret'] as const) {
        const base = { idpId, issuer: `https://limits${sequence}.example`, clientId: 'limits' };
        const bad = await update({ ...base, [field]: emoji(201) });
        expect(violatedFields(expectError(bad, 'INVALID_ARGUMENT', `update ${field} 201`))).toEqual([`input.${field}`]);
        expect((await stored(idpId)).sequence).toBe(sequence);
        const ok = await update({ ...base, [field]: emoji(200) });
        expect(expectOk(ok, `update ${field} 200`).updateOIDCIdentityProvider.details.sequence).toBe(String(++sequence));
      }
      expect(await storedSecret(idpId)).toBe(emoji(200));
      for (const field of ['issuer', 'clientId'] as const) {
        const blank = await update({ idpId, issuer: 'https://b.example', clientId: 'b', [field]: '  ' });
        expect(violatedFields(expectError(blank, 'INVALID_ARGUMENT', `update ${field} blank`))).toEqual([`input.${field}`]);
      }
      // A secret of only white space is neither "empty" (keep) nor a real secret.
      expect(
        violatedFields(
          expectError(await update({ idpId, issuer: 'https://b.example', clientId: 'b', clientSecret: '   ' }), 'INVALID_ARGUMENT'),
        ),
      ).toEqual(['input.clientSecret']);
      const scopeOk = await update({ idpId, issuer: 'https://b.example', clientId: 'b', scopes: [emoji(200)] });
      expect(expectOk(scopeOk).updateOIDCIdentityProvider.details.sequence).toBe(String(++sequence));
      expectError(await update({ idpId, issuer: 'https://b.example', clientId: 'b', scopes: [emoji(201)] }), 'INVALID_ARGUMENT');
      expect((await stored(idpId)).sequence).toBe(sequence);
    });

    it('scopes: at most 50, each non-empty, without white space and not repeated', async () => {
      const many = (n: number) => Array.from({ length: n }, (_, i) => `scope${i}`);
      const ok = await added({ scopes: many(50) });
      expect(expectOk(await read(ok.idpId)).identityProvider!.scopes).toEqual(many(50));
      expect(violatedFields(expectError(await addIdp({ scopes: many(51) }), 'INVALID_ARGUMENT'))).toEqual(['input.scopes']);
      expect(violatedFields(expectError(await addIdp({ scopes: ['openid', ''] }), 'INVALID_ARGUMENT'))).toEqual(['input.scopes.1']);
      expect(violatedFields(expectError(await addIdp({ scopes: ['openid profile'] }), 'INVALID_ARGUMENT'))).toEqual(['input.scopes.0']);
      expect(violatedFields(expectError(await addIdp({ scopes: ['openid', 'email', 'openid'] }), 'INVALID_ARGUMENT'))).toEqual([
        'input.scopes.2',
      ]);
      const before = (await stored(ok.idpId)).sequence;
      expectError(await update({ idpId: ok.idpId, issuer: 'https://s.example', clientId: 's', scopes: many(51) }), 'INVALID_ARGUMENT');
      expect((await stored(ok.idpId)).sequence).toBe(before);
      expectOk(await update({ idpId: ok.idpId, issuer: 'https://s.example', clientId: 's', scopes: [] }));
      expect(expectOk(await read(ok.idpId)).identityProvider!.scopes).toEqual([]);
    });

    it('an invalid input lists every violated field at once', async () => {
      const res = await send(AddOIDCIdentityProviderDocument, {
        input: { name: '', issuer: emoji(201), clientId: ' ', clientSecret: '', scopes: ['a b'] },
      });
      expect(violatedFields(expectError(res, 'INVALID_ARGUMENT'))).toEqual([
        'input.clientId',
        'input.clientSecret',
        'input.issuer',
        'input.name',
        'input.scopes.0',
      ]);
      const upd = await update({ idpId: '', issuer: '', clientId: emoji(201), clientSecret: emoji(201) });
      expect(violatedFields(expectError(upd, 'INVALID_ARGUMENT'))).toEqual([
        'input.clientId',
        'input.clientSecret',
        'input.idpId',
        'input.issuer',
      ]);
    });

    it('IDP names are unique in their organization ignoring case; another organization may reuse one', async () => {
      const name = unique('Okta ');
      await added({ name });
      expectError(await addIdp({ name: `  ${name.toUpperCase()} ` }), 'ALREADY_EXISTS');
      const orgId = await newOrg();
      expectOk(await addIdp({ name }, { orgId }));
    });

    it('updateOIDCIdentityProvider is deprecated in the schema with its reason', async () => {
      const res = await send(MutationDeprecationsDocument, {});
      const fields = expectOk(res).__type!.fields!;
      expect(fields.find((f) => f.name === 'updateOIDCIdentityProvider')).toEqual({
        name: 'updateOIDCIdentityProvider',
        isDeprecated: true,
        deprecationReason: DEPRECATION,
      });
      expect(fields.find((f) => f.name === 'addOIDCIdentityProvider')!.isDeprecated).toBe(false);
    });

    it('addHumanUser links users to the IDP; one (idpId, external userId) pair belongs to one user', async () => {
      const { idpId } = await added();
      const externalId = unique('ext-');
      const link = { idpId, userId: externalId, userName: 'ada@idp.example' };
      const first = await send(AddHumanUserDocument, {
        input: { profile, email: { email: `${unique('l')}@example.com`, isVerified: true }, idpLinks: [link] },
      });
      const userId = expectOk(first).addHumanUser.userId;
      const user = expectOk(await send(UserDocument, { id: userId })).user!;
      expect(user.idpLinks).toEqual([link]);
      expect(user.state).toBe('USER_STATE_ACTIVE');

      const second = await send(AddHumanUserDocument, {
        input: { profile, email: { email: `${unique('l')}@example.com`, isVerified: true }, idpLinks: [{ ...link, userName: 'other' }] },
      });
      expectError(second, 'ALREADY_EXISTS');
      const otherExternal = await send(AddHumanUserDocument, {
        input: {
          profile,
          email: { email: `${unique('l')}@example.com`, isVerified: true },
          idpLinks: [{ ...link, userId: unique('ext-') }],
        },
      });
      expectOk(otherExternal);
      const unknown = await send(AddHumanUserDocument, {
        input: { profile, email: { email: `${unique('l')}@example.com`, isVerified: true }, idpLinks: [{ ...link, idpId: 'no-such-idp' }] },
      });
      expectError(unknown, 'NOT_FOUND');
    });

    it('no response and no log line of this suite ever carried a client secret in clear', async () => {
      const secret = unique('final-secret-');
      const { idpId } = await added({ clientSecret: secret });
      await update({ idpId, issuer: 'https://final.example', clientId: 'final', clientSecret: unique('final-secret-') });
      const all = seen.join('\n') + gw.logs.join('\n');
      expect(seen.length).toBeGreaterThan(50);
      expect(secretsSent.size).toBeGreaterThan(20);
      expect(secretsSent.has(secret)).toBe(true);
      expect([...secretsSent].filter((s) => all.includes(s))).toEqual([]);
      expect(all).not.toMatch(/s3cr3t-|final-secret-/);
    });
  });
}

idpSuite('identity provider operations on the embedded stores', () => ({}));
describeWith('mongo', 'identity provider operations on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    idpSuite('the same suite', () => ({
      MONGODB_URL: mongoUrl,
      MONGODB_DB: `e2e_idp_${Date.now()}`,
      REDIS_URL: redisUrl,
      CODE_HMAC_KEY: 'test-key',
    }));
  });
});
