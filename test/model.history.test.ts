// summarize (src/model/history.ts): every event type of src/model, and what it must never show.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { summarize } from '../src/model/history.ts';
import { idpEvent, idpEvents } from '../src/model/idps.ts';
import { instanceEvent, instanceEvents, orgEvent, orgEvents } from '../src/model/orgs.ts';
import { projectEvent, projectEvents } from '../src/model/projects.ts';
import { partsOf, seal } from '../src/model/secret-box.ts';
import { userEvent, userEvents, type Profile } from '../src/model/users.ts';

const hash = '$2b$04$Q9dZ3Yk1bE2o0lq4uN2yEe0b7k8pR1mQwF4rT6yU8iO0pA2sD4fG6';
const metadataValue = 'bWV0YWRhdGEtc2VjcmV0LXZhbHVl'; // base64 of "metadata-secret-value"
const challenge = 'Y2hhbGxlbmdlLXRoYXQtbXVzdC1ub3QtbGVhaw';
const publicKey = 'cHVibGljLWtleS10aGF0LXN0YXlzLWluc2lkZQ';
const clientSecret = 'oidc-client-s3cr3t-value';
const sealed = seal(randomBytes(32), 'idp-1', clientSecret);
const metadataXml = Buffer.from('<md:EntityDescriptor entityID="https://sp.example.com"/>').toString('base64');
const profile: Profile = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  nickName: null,
  displayName: 'Ada L.',
  preferredLanguage: 'en',
  gender: 'GENDER_FEMALE',
};
const oidc = {
  issuer: 'https://issuer.example.com',
  clientId: 'client-1',
  scopes: ['openid', 'email'],
  displayNameMapping: 'OIDC_MAPPING_FIELD_EMAIL' as const,
  usernameMapping: 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME' as const,
};

/** One event of every type the model makes, each with what it may carry (secrets included). */
const samples = [
  userEvent.added({
    username: 'ada',
    profile,
    email: { email: 'ada@example.com', isVerified: false },
    phone: { phone: '+41791234567', isVerified: true },
    passwordHash: hash,
    passwordChangeRequired: true,
    metadata: [{ key: 'team', value: metadataValue }],
    idpLinks: [{ idpId: 'idp-1', userId: 'ext-1', userName: 'ada@idp' }],
    u2fTokens: [],
  }),
  userEvent.profileChanged({ ...profile, nickName: 'countess' }),
  userEvent.emailChanged('ada@new.example.com', false),
  userEvent.emailVerified(),
  userEvent.phoneChanged('+41791112233', false),
  userEvent.phoneVerified(),
  userEvent.passwordChanged(hash, false),
  userEvent.u2fAdded({
    id: 'u2f-1',
    challenge,
    rpId: 'example.com',
    origins: ['https://example.com'],
    expiresAt: '2030-01-01T00:00:00.000Z',
  }),
  userEvent.u2fVerified({ id: 'u2f-1', name: 'key', credentialId: 'cred-1', publicKey, counter: 3, transports: ['usb'] }),
  userEvent.memberOfRecorded('org-1'),
  orgEvent.added('Acme', 'acme.example.com'),
  orgEvent.memberAdded('user-1', ['ORG_OWNER']),
  instanceEvent.setUp('admin-1', 'org-1'),
  idpEvent.oidcAdded('Corp IdP', oidc, sealed),
  idpEvent.oidcChanged({ ...oidc, clientId: 'client-2' }, sealed),
  projectEvent.added('Portal'),
  projectEvent.samlAppAdded({ appId: 'app-1', name: 'SP', entityId: 'https://sp.example.com', metadataUrl: null, metadataXml }),
];

const allTypes = [userEvents, orgEvents, instanceEvents, idpEvents, projectEvents].flatMap((events) => Object.values(events));
const changesOf = (event: { type: string; payload: object }) =>
  Object.fromEntries(summarize(event as never).changes.map((c) => [c.field, c.value]));

describe('summarize', () => {
  it('has a sample of every event type in src/model, and each shows some change', () => {
    expect(samples.map((e) => e.type).sort()).toEqual([...allTypes].sort());
    for (const event of samples) {
      const summary = summarize(event as never);
      expect(summary.type).toBe(event.type);
      expect(summary.changes.length, event.type).toBeGreaterThan(0);
      for (const change of summary.changes) expect(change.value === null || typeof change.value === 'string', change.field).toBe(true);
    }
  });

  it('never shows a password hash, a client secret, a metadata value, a challenge, a public key or a metadata document', () => {
    const text = JSON.stringify(samples.map((e) => summarize(e as never)));
    const secrets = [hash, clientSecret, sealed, ...Object.values(partsOf(sealed)), metadataValue, challenge, publicKey, metadataXml];
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/challenge|publicKey|metadataXml|passwordHash|"hash"/);
  });

  it('shows that a secret was set, and metadata by its keys', () => {
    expect(changesOf(samples[0]!)).toMatchObject({
      password: null,
      metadata: '["team"]',
      passwordChangeRequired: 'true',
      email: 'ada@example.com',
    });
    expect(changesOf(userEvent.passwordChanged(hash, true))).toEqual({ password: null, passwordChangeRequired: 'true' });
    expect(changesOf(idpEvent.oidcAdded('Corp', oidc, sealed))).toMatchObject({
      name: 'Corp',
      clientSecret: null,
      scopes: '["openid","email"]',
    });
    // A secret that was not set is not listed at all.
    expect(changesOf(idpEvent.oidcChanged(oidc, null))).not.toHaveProperty('clientSecret');
    expect(changesOf(idpEvent.oidcAdded('Corp', oidc, null))).not.toHaveProperty('clientSecret');
  });

  it('shows whole profiles on change (null: cleared), only the fields given on creation', () => {
    expect(changesOf(userEvent.profileChanged(profile))).toEqual({
      'profile.firstName': 'Ada',
      'profile.lastName': 'Lovelace',
      'profile.nickName': null,
      'profile.displayName': 'Ada L.',
      'profile.preferredLanguage': 'en',
      'profile.gender': 'GENDER_FEMALE',
    });
    expect(changesOf(samples[0]!)).not.toHaveProperty('profile.nickName');
  });

  it('leaves out any field the allowlist does not name, and an unknown type shows only its type', () => {
    const extra = {
      type: userEvents.emailChanged,
      payload: { email: 'a@example.com', isVerified: true, code: 'H9YUV6', passwordHash: hash },
    };
    expect(summarize(extra as never).changes).toEqual([
      { field: 'email', value: 'a@example.com' },
      { field: 'email.isVerified', value: 'true' },
    ]);
    expect(summarize({ type: 'user.something-new', payload: { password: 'clear' } } as never)).toEqual({
      type: 'user.something-new',
      changes: [],
    });
    expect(summarize({ type: 'toString', payload: {} } as never)).toEqual({ type: 'toString', changes: [] });
  });

  it('takes events written before a field existed (older IDP events without mappings)', () => {
    const older = {
      type: idpEvents.oidcAdded,
      payload: { name: 'Old', issuer: 'https://old.example.com', clientId: 'c', clientSecret: null },
    };
    expect(summarize(older as never).changes).toEqual([
      { field: 'name', value: 'Old' },
      { field: 'issuer', value: 'https://old.example.com' },
      { field: 'clientId', value: 'c' },
    ]);
  });
});
