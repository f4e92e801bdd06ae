// Command tests of identity providers (issue 12 step 1): addOIDCIdentityProvider
// and the deprecated updateOIDCIdentityProvider (SPEC.md operation 2).
import { describe, expect } from 'vitest';
import { addOIDCIdentityProvider, updateOIDCIdentityProvider } from '../src/commands/idps.ts';
import { idpEvents, type IdentityProvider } from '../src/model/idps.ts';
import { open } from '../src/model/secret-box.ts';
import {
  ADMIN,
  chars,
  commandTable,
  DEFAULT_ORG,
  event,
  facts,
  ORG_A,
  ORG_B,
  TEST_IDP_KEY,
  U,
  unauthenticatedRows,
  world,
  type Fact,
  type Harness,
  type Row,
  type Then,
} from './support/given.ts';

const SEALED = /^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/;
const stored = async (h: Harness, id: string) => (await h.store.load<IdentityProvider>('idp', id))!.state;
const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };

describe('addOIDCIdentityProvider', () => {
  const SECRET = 'client-secret-1';
  const input = (over: Record<string, unknown> = {}) => ({
    name: 'Google',
    issuer: 'https://accounts.google.com',
    clientId: 'cid',
    clientSecret: SECRET,
    ...over,
  });
  const payload = (over: Record<string, unknown> = {}) => ({
    name: 'Google',
    issuer: 'https://accounts.google.com',
    clientId: 'cid',
    scopes: [],
    displayNameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
    usernameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
    clientSecret: expect.stringMatching(SEALED),
    ...over,
  });
  const added = (owner: string, over: Record<string, unknown> = {}, secret = SECRET): Then<any> => ({
    events: [event('idp', 'id-1', idpEvents.oidcAdded, payload(over), owner)],
    secrets: [secret],
    details: true,
    result: async (r, h) => {
      expect(r.idpId).toBe('id-1');
      // Sealed for this IDP with the configured key: it opens to the given secret.
      expect(open(TEST_IDP_KEY, 'id-1', (await stored(h, 'id-1')).clientSecret!)).toBe(secret);
    },
  });
  commandTable<any>(addOIDCIdentityProvider, [
    { name: 'ORG_SETTINGS_MANAGER adds an IDP to its org; the secret sealed', caller: U.settingsA, input: input(), then: added(ORG_A) },
    { name: 'ORG_OWNER', caller: U.ownerA, input: input(), then: added(ORG_A) },
    { name: 'IAM_OWNER with x-service-orgid', caller: ADMIN, orgHeader: ORG_B, input: input(), then: added(ORG_B) },
    { name: 'IAM_OWNER without the header: its own (default) org', caller: ADMIN, input: input(), then: added(DEFAULT_ORG) },
    { name: 'ORG_OWNER of another org, no header: in its own org', caller: U.ownerB, input: input(), then: added(ORG_B) },
    {
      name: 'every field: trimmed (the secret kept as given), scopes and mappings stored',
      caller: U.settingsA,
      input: input({
        name: ' Google ',
        issuer: ' https://accounts.google.com ',
        clientId: ' cid ',
        clientSecret: ' s e c ',
        scopes: ['openid', 'email'],
        displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
        usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
      }),
      then: added(
        ORG_A,
        {
          scopes: ['openid', 'email'],
          displayNameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME',
          usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
        },
        ' s e c ',
      ),
    },
    {
      name: 'the issuer is any text, not checked as a URL',
      caller: U.settingsA,
      input: input({ issuer: 'not a url' }),
      then: added(ORG_A, { issuer: 'not a url' }),
    },
    {
      name: 'fields of 200',
      caller: U.settingsA,
      input: input({ name: chars(200), issuer: chars(200), clientId: chars(200), clientSecret: chars(200, 's') }),
      then: added(ORG_A, { name: chars(200), issuer: chars(200), clientId: chars(200) }, chars(200, 's')),
    },
    {
      name: '50 scopes',
      caller: U.settingsA,
      input: input({ scopes: Array.from({ length: 50 }, (_, i) => `s${i}`) }),
      then: added(ORG_A, { scopes: Array.from({ length: 50 }, (_, i) => `s${i}`) }),
    },
    {
      name: 'fields of 201: INVALID_ARGUMENT listing each',
      caller: U.settingsA,
      input: input({ name: chars(201), issuer: chars(201), clientId: chars(201), clientSecret: chars(201), scopes: [chars(201)] }),
      then: {
        error: {
          code: 'INVALID_ARGUMENT',
          fields: ['input.clientId', 'input.clientSecret', 'input.issuer', 'input.name', 'input.scopes.0'],
        },
      },
    },
    {
      name: 'blank fields: INVALID_ARGUMENT (the secret is required here)',
      caller: U.settingsA,
      input: input({ name: ' ', issuer: '', clientId: ' ', clientSecret: '' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientId', 'input.clientSecret', 'input.issuer', 'input.name'] } },
    },
    {
      name: 'missing fields: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: {},
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientId', 'input.clientSecret', 'input.issuer', 'input.name'] } },
    },
    {
      name: 'a scope with white space, a blank one, a duplicate: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ scopes: ['openid email', ' ', 'a', 'a'] }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.scopes.0', 'input.scopes.1', 'input.scopes.3'] } },
    },
    {
      name: '51 scopes: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ scopes: Array.from({ length: 51 }, (_, i) => `s${i}`) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.scopes'], message: /at most 50/ } },
    },
    {
      name: 'unknown mappings: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ displayNameMapping: 'EMAIL', usernameMapping: 1 }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.displayNameMapping', 'input.usernameMapping'] } },
    },
    {
      name: 'a name with a control character: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ name: 'Goo\u0000gle' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    {
      name: 'a name taken in the org, another case: ALREADY_EXISTS',
      given: [...world, facts.idp('idp-1', ORG_A, { name: 'Google' })],
      caller: U.settingsA,
      input: input({ name: ' GOOGLE ' }),
      then: { error: { code: 'ALREADY_EXISTS', message: /idpName/ } },
    },
    {
      name: 'the same name in another org is fine',
      given: [...world, facts.idp('idp-b', ORG_B, { name: 'Google' })],
      caller: U.settingsA,
      input: input(),
      then: added(ORG_A),
    },
    { name: 'ORG_USER_MANAGER lacks org.idp.write: PERMISSION_DENIED', caller: U.managerA, input: input(), then: denied },
    { name: 'ORG_PROJECT_CREATOR: PERMISSION_DENIED', caller: U.creatorA, input: input(), then: denied },
    { name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: input(), then: denied },
    { name: 'a role in another org only: PERMISSION_DENIED in its own', caller: U.helperB, input: input(), then: denied },
    {
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.settingsA,
      orgHeader: ORG_B,
      input: input(),
      then: denied,
    },
    {
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: input(),
      then: denied,
    },
    {
      name: 'input rules before authentication',
      caller: null,
      input: input({ clientSecret: '' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientSecret'] } },
    },
    ...unauthenticatedRows<any>(input()),
  ]);
});

describe('updateOIDCIdentityProvider', () => {
  const IDP = 'idp-1';
  const seeded: Fact[] = [
    ...world,
    facts.idp(IDP, ORG_A, {
      name: 'Google',
      issuer: 'https://issuer.example.com',
      clientId: 'client-1',
      scopes: ['openid'],
      clientSecret: 'seeded-secret',
    }),
    facts.idp('idp-b', ORG_B),
  ];
  /** The seeded configuration, in full. */
  const same = { idpId: IDP, issuer: 'https://issuer.example.com', clientId: 'client-1', scopes: ['openid'] };
  const input = (over: Record<string, unknown> = {}) => ({ ...same, issuer: 'https://new.example.com', ...over });
  const config = (over: Record<string, unknown> = {}) => ({
    issuer: 'https://new.example.com',
    clientId: 'client-1',
    scopes: ['openid'],
    displayNameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
    usernameMapping: 'OIDC_MAPPING_FIELD_UNSPECIFIED',
    ...over,
  });
  const changed = (over: Record<string, unknown> = {}, id = IDP, owner = ORG_A, secret = 'seeded-secret'): Then<unknown> => ({
    events: [event('idp', id, idpEvents.oidcChanged, config(over), owner)],
    secrets: [secret],
    details: true,
    result: async (_r, h) => {
      const idp = await stored(h, id);
      expect(open(TEST_IDP_KEY, id, idp.clientSecret!)).toBe(secret);
      expect(idp.name).toBe(id === IDP ? 'Google' : `IdP ${id}`);
    },
  });
  const row = (r: Omit<Row<unknown>, 'given'> & { given?: Fact[] }): Row<unknown> => ({ given: seeded, ...r });
  commandTable(updateOIDCIdentityProvider, [
    row({
      name: 'ORG_SETTINGS_MANAGER changes the issuer; the stored secret is kept',
      caller: U.settingsA,
      input: input(),
      then: changed(),
    }),
    row({ name: 'ORG_OWNER', caller: U.ownerA, input: input(), then: changed() }),
    row({ name: 'IAM_OWNER with x-service-orgid', caller: ADMIN, orgHeader: ORG_A, input: input(), then: changed() }),
    row({
      name: "x-service-orgid of the IDP's org, holding a role there",
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: input({ idpId: 'idp-b', clientId: 'client-1' }),
      then: changed({}, 'idp-b', ORG_B),
    }),
    row({
      name: 'the whole configuration is replaced: scopes left out are empty',
      caller: U.settingsA,
      input: { idpId: IDP, issuer: 'https://issuer.example.com', clientId: 'client-1' },
      then: changed({ issuer: 'https://issuer.example.com', scopes: [] }),
    }),
    row({
      name: 'mappings changed, fields trimmed',
      caller: U.settingsA,
      input: { ...same, issuer: ' https://issuer.example.com ', displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL' },
      then: changed({ issuer: 'https://issuer.example.com', displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL' }),
    }),
    row({ name: 'an empty clientSecret keeps the stored one', caller: U.settingsA, input: input({ clientSecret: '' }), then: changed() }),
    row({ name: 'a null clientSecret keeps the stored one', caller: U.settingsA, input: input({ clientSecret: null }), then: changed() }),
    row({
      name: 'a new secret alone is a change: sealed in the event',
      caller: U.settingsA,
      input: { ...same, clientSecret: 'rotated-1' },
      then: {
        ...changed({ issuer: 'https://issuer.example.com', clientSecret: expect.stringMatching(SEALED) }, IDP, ORG_A, 'rotated-1'),
        secrets: ['rotated-1', 'seeded-secret'],
      },
    }),
    row({
      name: 'the stored secret given again still counts as a change',
      caller: U.settingsA,
      input: { ...same, clientSecret: 'seeded-secret' },
      then: changed({ issuer: 'https://issuer.example.com', clientSecret: expect.stringMatching(SEALED) }),
    }),
    row({
      name: 'nothing changed: FAILED_PRECONDITION',
      caller: U.settingsA,
      input: same,
      then: { error: { code: 'FAILED_PRECONDITION', message: /has not changed/ } },
    }),
    row({
      name: 'nothing changed, with an empty secret: FAILED_PRECONDITION',
      caller: U.settingsA,
      input: { ...same, clientSecret: '' },
      then: { error: { code: 'FAILED_PRECONDITION' } },
    }),
    row({
      name: 'nothing changed after trimming: FAILED_PRECONDITION',
      caller: U.settingsA,
      input: { ...same, clientId: ' client-1 ' },
      then: { error: { code: 'FAILED_PRECONDITION' } },
    }),
    row({
      name: 'a blank secret: INVALID_ARGUMENT (send it empty to keep the stored one)',
      caller: U.settingsA,
      input: input({ clientSecret: '  ' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientSecret'], message: /white space/ } },
    }),
    row({
      name: 'a secret of 201: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ clientSecret: chars(201) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientSecret'] } },
    }),
    row({
      name: 'a secret of 200',
      caller: U.settingsA,
      input: input({ clientSecret: chars(200) }),
      then: { ...changed({ clientSecret: expect.stringMatching(SEALED) }, IDP, ORG_A, chars(200)) },
    }),
    row({
      name: 'issuer, clientId blank or over 200, idpId blank: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: { idpId: ' ', issuer: chars(201), clientId: '' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.clientId', 'input.idpId', 'input.issuer'] } },
    }),
    row({
      name: 'scopes with white space: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ scopes: ['a b'] }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.scopes.0'] } },
    }),
    row({
      name: 'an unknown mapping: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ usernameMapping: 'OIDC_MAPPING_FIELD_PHONE' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.usernameMapping'] } },
    }),
    row({
      name: 'an idpId of 200 that does not exist: NOT_FOUND',
      caller: U.settingsA,
      input: input({ idpId: chars(200) }),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({
      name: 'an idpId of 201: INVALID_ARGUMENT',
      caller: U.settingsA,
      input: input({ idpId: chars(201) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.idpId'] } },
    }),
    row({
      name: 'an unknown IDP: NOT_FOUND',
      caller: U.settingsA,
      input: input({ idpId: 'idp-nope' }),
      then: { error: { code: 'NOT_FOUND', message: /Identity provider not found/ } },
    }),
    row({
      name: 'an IDP of another org: NOT_FOUND in the acting org',
      caller: U.settingsA,
      input: input({ idpId: 'idp-b' }),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({
      name: 'IAM_OWNER without the header: NOT_FOUND in its own org',
      caller: ADMIN,
      input: input(),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({ name: 'ORG_USER_MANAGER: PERMISSION_DENIED', caller: U.managerA, input: input(), then: denied }),
    row({ name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: input(), then: denied }),
    row({ name: 'permission before the IDP is looked up', caller: U.alice, input: input({ idpId: 'idp-nope' }), then: denied }),
    row({
      name: "owner of another org with x-service-orgid of the IDP's org: PERMISSION_DENIED",
      caller: U.ownerB,
      orgHeader: ORG_A,
      input: input(),
      then: denied,
    }),
    row({
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: input(),
      then: denied,
    }),
    ...unauthenticatedRows(input(), seeded),
  ]);
});
