// The command-test harness itself (test/support/given.ts): its fact builders
// write exactly what the commands write, and its `then` cannot pass by doing
// nothing (an event anywhere after an error, a secret in clear, a missing
// event: each is caught).
import { describe, expect, it } from 'vitest';
import { bootstrap } from '../src/commands/bootstrap.ts';
import { addOIDCIdentityProvider } from '../src/commands/idps.ts';
import { addOrganization, addOrgMember } from '../src/commands/orgs.ts';
import { addProject, addSAMLApp } from '../src/commands/projects.ts';
import { registerU2F, verifyU2FRegistration } from '../src/commands/u2f.ts';
import { addHumanUser, setEmail, updateHumanPhone, updateMyProfile } from '../src/commands/users.ts';
import { AppError } from '../src/errors.ts';
import { open } from '../src/model/secret-box.ts';
import type { AggregateType, StoredEvent } from '../src/store/port.ts';
import {
  ADMIN,
  DEFAULT_ORG,
  event,
  expectError,
  expectEvents,
  facts,
  given,
  ORG_A,
  samlMetadata,
  TEST_IDP_KEY,
  U,
  world,
  type Fact,
  type Harness,
} from './support/given.ts';
import { createSoftAuthenticator } from './support/soft-authenticator.ts';

/** What a builder seeds and what a command wrote, side by side: type, payload, owner, claims. */
const shape = (e: StoredEvent | undefined) =>
  e && { type: e.type, payload: e.payload, resourceOwner: e.resourceOwner, claims: [...e.claims].sort() };
async function seededShape(fact: Fact, before: readonly Fact[] = world) {
  const h = await given([...before, fact]);
  return shape((await h.events(fact.aggregateType, fact.aggregateId)).at(-1));
}
async function lastEvent(h: Harness, type: AggregateType, id: string) {
  return (await h.events(type, id)).at(-1);
}

describe('the fact builders write what the commands write', () => {
  it('instance, default org and admin: as bootstrap writes them', async () => {
    const h = await given([]);
    await bootstrap(h.ctx());
    const ours = await given([
      facts.instance('id-1', 'id-2'),
      facts.org('id-2', 'Default'),
      facts.human('id-1', 'id-2', {
        username: 'admin',
        email: 'admin@localhost',
        profile: { firstName: 'Instance', lastName: 'Administrator', displayName: 'Administrator', preferredLanguage: 'en' },
      }),
    ]);
    for (const [type, id] of [
      ['instance', 'instance'],
      ['org', 'id-2'],
      ['user', 'id-1'],
    ] as const) {
      expect(shape(await lastEvent(ours, type, id)), `${type} ${id}`).toEqual(shape(await lastEvent(h, type, id)));
      expect((await ours.store.load(type, id))!.state).toEqual((await h.store.load(type, id))!.state);
    }
  });

  it('org: as addOrganization writes it', async () => {
    const h = await given(world);
    await addOrganization(h.ctx({ caller: ADMIN }), { name: 'Zürich Labs' });
    expect(await seededShape(facts.org('id-1', 'Zürich Labs'))).toEqual(shape(await lastEvent(h, 'org', 'id-1')));
  });

  it('human: as addHumanUser writes it (verified email, phone, password hash, metadata, idp link)', async () => {
    const idp = facts.idp('idp-1', ORG_A);
    const h = await given([...world, idp]);
    await addHumanUser(h.ctx({ caller: U.ownerA }), {
      userId: 'neo',
      username: 'Neo',
      profile: { firstName: 'Neo', lastName: 'Tester', displayName: 'The One' },
      email: { email: 'neo@example.com', isVerified: true },
      phone: { phone: '+41797654321', isVerified: true },
      hashedPassword: { hash: '$2y$04$Cxq5Gf.Ih4FQcZ.xMxZrNOP.f01Bc4pgdp0MRnz.VBz3bEhF08eCm', changeRequired: true },
      metadata: [{ key: 'k', value: 'aGk=' }],
      idpLinks: [{ idpId: 'idp-1', userId: 'ext', userName: 'neo.ext' }],
    });
    const fact = facts.human('neo', ORG_A, {
      username: 'Neo',
      profile: { displayName: 'The One' },
      email: 'neo@example.com',
      phone: '+41797654321',
      phoneVerified: true,
      passwordHash: '$2y$04$Cxq5Gf.Ih4FQcZ.xMxZrNOP.f01Bc4pgdp0MRnz.VBz3bEhF08eCm',
      passwordChangeRequired: true,
      metadata: [{ key: 'k', value: 'aGk=' }],
      idpLinks: [{ idpId: 'idp-1', userId: 'ext', userName: 'neo.ext' }],
    });
    expect(await seededShape(fact, [...world, idp])).toEqual(shape(await lastEvent(h, 'user', 'neo')));
  });

  it('member: as addOrgMember writes it (membership on the user, then the grant)', async () => {
    const h = await given(world);
    await addOrgMember(h.ctx({ caller: ADMIN, orgHeader: ORG_A }), { userId: U.bob, roles: ['ORG_USER_MANAGER', 'ORG_OWNER'] });
    const ours = await given([...world, ...facts.member(ORG_A, U.bob, ['ORG_USER_MANAGER', 'ORG_OWNER'])]);
    expect(shape(await lastEvent(ours, 'user', U.bob))).toEqual(shape(await lastEvent(h, 'user', U.bob)));
    expect(shape(await lastEvent(ours, 'org', ORG_A))).toEqual(shape(await lastEvent(h, 'org', ORG_A)));
  });

  it('idp: as addOIDCIdentityProvider writes it (the secret sealed for the IDP)', async () => {
    const h = await given(world);
    await addOIDCIdentityProvider(h.ctx({ caller: U.ownerA }), {
      name: 'G',
      issuer: 'https://i.example',
      clientId: 'c',
      clientSecret: 's3cret',
      scopes: ['openid', 'email'],
      usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
    });
    const theirs = shape(await lastEvent(h, 'idp', 'id-1'))!;
    const ours = (await seededShape(
      facts.idp('id-1', ORG_A, {
        name: 'G',
        issuer: 'https://i.example',
        clientId: 'c',
        clientSecret: 's3cret',
        scopes: ['openid', 'email'],
        usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL',
      }),
    ))!;
    const secretOf = (s: typeof ours) => open(TEST_IDP_KEY, 'id-1', s.payload.clientSecret as string);
    expect(secretOf(ours)).toBe('s3cret');
    expect(secretOf(theirs)).toBe('s3cret');
    expect({ ...ours, payload: { ...ours.payload, clientSecret: 'x' } }).toEqual({
      ...theirs,
      payload: { ...theirs.payload, clientSecret: 'x' },
    });
  });

  it('project and samlApp: as addProject and addSAMLApp write them', async () => {
    const h = await given(world);
    await addProject(h.ctx({ caller: U.creatorA }), { name: 'Portal' });
    const xml = Buffer.from(samlMetadata('urn:sp')).toString('base64');
    await addSAMLApp(h.ctx({ caller: U.creatorA }), { projectId: 'id-1', name: 'Shop', metadataXml: xml });
    const events = await h.events('project', 'id-1');
    const project = facts.project('id-1', ORG_A, 'Portal');
    const app = facts.samlApp('id-1', { appId: 'id-2', name: 'Shop', entityId: 'urn:sp' });
    const ours = await given([...world, project, app]);
    expect((await ours.events('project', 'id-1')).map(shape)).toEqual(events.map(shape));
  });

  it('u2fPending and u2fReady: as registerU2F and verifyU2FRegistration write them', async () => {
    const h = await given(world);
    const { u2fId, publicKeyCredentialCreationOptions: options } = await registerU2F(h.ctx({ caller: U.alice }), { userId: U.alice });
    const cred = createSoftAuthenticator().create({ challenge: options.challenge, origin: 'http://localhost:4000', rpId: 'localhost' });
    await verifyU2FRegistration(h.ctx({ caller: U.alice }), {
      userId: U.alice,
      u2fId,
      publicKeyCredential: cred.response,
      tokenName: 'Key',
    });
    const [added, verified] = (await h.events('user', U.alice)).slice(-2);
    const p = added!.payload as { challenge: string; expiresAt: string };
    const v = verified!.payload as { publicKey: string };
    const ours = await given([
      ...world,
      facts.u2fPending(U.alice, { id: u2fId, challenge: p.challenge, expiresAt: p.expiresAt }),
      facts.u2fReady(U.alice, { id: u2fId, name: 'Key', credentialId: cred.credentialId, publicKey: v.publicKey, transports: ['usb'] }),
    ]);
    expect((await ours.events('user', U.alice)).slice(-2).map(shape)).toEqual([added, verified].map(shape));
  });

  it('emailChanged and phoneChanged: as setEmail and updateHumanPhone write them', async () => {
    const h = await given(world);
    await setEmail(h.ctx({ caller: U.managerA }), { userId: U.alice, email: 'new@example.com', returnCode: true });
    await updateHumanPhone(h.ctx({ caller: U.managerA }), { userId: U.alice, phone: '+41797654321' });
    const ours = await given([...world, facts.emailChanged(U.alice, 'new@example.com'), facts.phoneChanged(U.alice, '+41797654321')]);
    expect((await ours.events('user', U.alice)).slice(-2).map(shape)).toEqual((await h.events('user', U.alice)).slice(-2).map(shape));
  });
});

describe('then cannot pass by doing nothing', () => {
  const profile = { firstName: 'Ada', lastName: 'Lovelace', displayName: 'Ada' };

  it('the new events are found on any aggregate, and counted by the store too', async () => {
    const h = await given(world);
    const outcome = await h.when(
      (ctx) => addHumanUser(ctx, { userId: 'not-generated', profile, email: { email: 'a@example.com', isVerified: true } }),
      { caller: U.managerA },
    );
    expect(outcome.events.map((e) => [e.aggregateType, e.aggregateId, e.type, e.creator, e.sequence])).toEqual([
      ['user', 'not-generated', 'user.added', U.managerA, 1],
    ]);
  });

  it('expectEvents fails on a missing, an extra or a different event', async () => {
    const h = await given(world);
    const outcome = await h.when((ctx) => updateMyProfile(ctx, profile), { caller: U.alice });
    const right = event(
      'user',
      U.alice,
      'user.profile.changed',
      { profile: { ...profile, nickName: null, preferredLanguage: null, gender: 'GENDER_UNSPECIFIED' } },
      ORG_A,
    );
    expectEvents(outcome, [right]);
    expect(() => expectEvents(outcome, [])).toThrow();
    expect(() => expectEvents(outcome, [right, right])).toThrow();
    expect(() => expectEvents(outcome, [{ ...right, resourceOwner: DEFAULT_ORG }])).toThrow();
    expect(() => expectEvents(outcome, [{ ...right, payload: {} }])).toThrow();
  });

  it('expectEvents fails when an event holds a given secret, or a code the command handed out, in clear', async () => {
    const h = await given(world);
    const outcome = await h.when((ctx) => updateMyProfile(ctx, { ...profile, nickName: 'hunter22' }), { caller: U.alice });
    const expected = [event('user', U.alice, 'user.profile.changed', { profile: expect.anything() })];
    expectEvents(outcome, expected);
    expect(() => expectEvents(outcome, expected, ['hunter22'])).toThrow(/secret in clear/);
    expect(() =>
      expectEvents({ ...outcome, jobs: [{ kind: 'verify-phone', userId: U.alice, orgId: ORG_A, to: '+41', code: 'hunter22' }] }, expected),
    ).toThrow(/secret in clear/);
  });

  it('expectError fails on success, on another code or message, on other fields, and on any new event or job', async () => {
    const h = await given(world);
    const ok = await h.when((ctx) => updateMyProfile(ctx, profile), { caller: U.alice });
    expect(() => expectError(ok, { code: 'FAILED_PRECONDITION' })).toThrow(/got success/);
    const failed = await h.when((ctx) => updateMyProfile(ctx, profile), { caller: U.alice });
    expectError(failed, { code: 'FAILED_PRECONDITION', message: /not changed/ });
    expect(() => expectError(failed, { code: 'NOT_FOUND' })).toThrow();
    expect(() => expectError(failed, { code: 'FAILED_PRECONDITION', message: /another text/ })).toThrow();
    expect(() => expectError({ ...failed, events: ok.events }, { code: 'FAILED_PRECONDITION' })).toThrow(/no new event/);
    expect(() =>
      expectError(
        { ...failed, jobs: [{ kind: 'verify-phone', userId: 'x', orgId: 'y', to: 'z', code: 'c' }] },
        { code: 'FAILED_PRECONDITION' },
      ),
    ).toThrow(/nothing sent/);
    const invalid = await h.when((ctx) => updateMyProfile(ctx, { ...profile, firstName: '' }), { caller: U.alice });
    expectError(invalid, { code: 'INVALID_ARGUMENT', fields: ['input.firstName'] });
    expect(() => expectError(invalid, { code: 'INVALID_ARGUMENT' })).toThrow(/names its violated fields/);
    expect(() => expectError(invalid, { code: 'INVALID_ARGUMENT', fields: ['input.lastName'] })).toThrow();
  });

  it('an error thrown after a write is seen: the event it left is reported', async () => {
    const h = await given(world);
    const outcome = await h.when(
      async (ctx) => {
        await updateMyProfile(ctx, profile);
        throw new AppError('INTERNAL', 'after the write');
      },
      { caller: U.alice },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.events).toHaveLength(1);
    expect(() => expectError(outcome, { code: 'INTERNAL' })).toThrow(/no new event/);
  });
});
