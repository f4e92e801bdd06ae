// Ill-formed and control text, end to end on both stores: a lone surrogate in any
// string input is INVALID_ARGUMENT naming the field (MongoDB would hand it back as
// U+FFFD, silently changing an acknowledged value), control characters are refused
// in names, usernames and emails, and well-formed text of every script comes back
// exactly as sent.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrganizationDocument,
  AddProjectDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UserDocument,
} from './generated/graphql.ts';
import { onlyError, startGateway, violatedFields, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import type { User } from '../src/model/users.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const LONE_HIGH = '\uD83D';
const LONE_LOW = '\uDE00';

function textSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let gw: TestGateway;
    let userId = '';
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
      const res = await gw.send(AddHumanUserDocument, {
        input: { profile: { firstName: 'Ada', lastName: 'Lovelace' }, email: { email: `${unique('t')}@example.com`, returnCode: true } },
      });
      userId = res.data!.addHumanUser.userId;
    });
    afterAll(async () => gw?.close());

    const sequenceOf = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))?.sequence;

    async function refused<T, V>(doc: TypedDocumentNode<T, V>, variables: V, field: string, description: RegExp) {
      const before = await sequenceOf(userId);
      const res = await gw.send(doc, variables);
      const error = onlyError(res);
      expect(error.extensions?.code, res.text).toBe('INVALID_ARGUMENT');
      expect(violatedFields(error)).toContain(field);
      const violation = error.extensions!.details!.flatMap((d: any) => d.fieldViolations ?? []).find((v: any) => v.field === field);
      expect(violation.description).toMatch(description);
      expect(await sequenceOf(userId), 'sequence did not move').toBe(before);
    }

    const profileWith = (patch: Record<string, string>) => ({ userId, firstName: 'Ada', lastName: 'Lovelace', ...patch });

    it.each([
      ['firstName', { firstName: `Ad${LONE_HIGH}a` }],
      ['lastName', { lastName: `Love${LONE_LOW}` }],
      ['nickName', { nickName: LONE_LOW + LONE_HIGH }],
      ['displayName', { displayName: `x${LONE_HIGH}` }],
      ['preferredLanguage', { preferredLanguage: `e${LONE_HIGH}` }],
    ])('a lone surrogate in %s is INVALID_ARGUMENT naming it, and nothing is written', async (field, patch) => {
      await refused(UpdateHumanProfileDocument, { input: profileWith(patch) as any }, `input.${field}`, /well-formed Unicode/);
    });

    it('a lone surrogate is refused in every kind of string input: ids, emails, passwords, templates, keys, names', async () => {
      await refused(SetHumanPasswordDocument, { input: { userId, password: `Secr3t!${LONE_HIGH}x` } }, 'input.password', /well-formed/);
      await refused(SetEmailDocument, { input: { userId, email: `a${LONE_HIGH}@example.com` } }, 'input.email', /well-formed/);
      await refused(
        SetEmailDocument,
        { input: { userId, email: `${unique('e')}@example.com`, sendCode: { urlTemplate: `https://x.example/{{.Code}}${LONE_LOW}` } } },
        'input.sendCode.urlTemplate',
        /well-formed/,
      );
      await refused(
        UpdateHumanProfileDocument,
        { input: profileWith({ userId: `${userId}${LONE_HIGH}` }) as any },
        'input.userId',
        /well-formed/,
      );
      const email = `${unique('n')}@example.com`;
      await refused(
        AddHumanUserDocument,
        {
          input: {
            username: `user${LONE_HIGH}`,
            profile: { firstName: 'A', lastName: 'B' },
            email: { email, isVerified: true },
            metadata: [{ key: `k${LONE_LOW}`, value: 'AA==' }],
          },
        },
        'input.username',
        /well-formed/,
      );
      expect(await gw.gateway.deps.store.lookup(`username:${email.toLowerCase()}`)).toBeNull();
      const project = await gw.send(AddProjectDocument, { input: { name: `P${LONE_HIGH}` } });
      expect(onlyError(project).extensions?.code).toBe('INVALID_ARGUMENT');
      expect(violatedFields(onlyError(project))).toEqual(['input.name']);
    });

    it.each([
      ['NUL', '\u0000'],
      ['a C0 control', '\u0007'],
      ['DEL', '\u007F'],
      ['a C1 control', '\u0085'],
      ['a line separator', '\u2028'],
      ['a bidi override', '\u202E'],
    ])('%s is refused in names, usernames and emails', async (_label, control) => {
      await refused(
        UpdateHumanProfileDocument,
        { input: profileWith({ firstName: `A${control}da` }) as any },
        'input.firstName',
        /control characters/,
      );
      await refused(
        UpdateMyProfileDocument,
        { input: { firstName: 'A', lastName: 'B', displayName: `D${control}`, nickName: 'n' } },
        'input.displayName',
        /control/,
      );
      await refused(SetEmailDocument, { input: { userId, email: `a${control}b@example.com` } }, 'input.email', /valid email/);
      const res = await gw.send(AddHumanUserDocument, {
        input: {
          username: `u${control}${unique('x')}`,
          profile: { firstName: 'A', lastName: 'B' },
          email: { email: `${unique('c')}@example.com`, isVerified: true },
        },
      });
      expect(violatedFields(onlyError(res))).toEqual(['input.username']);
      const org = await gw.send(AddOrganizationDocument, { input: { name: `Org${control}${unique('o')}` } });
      expect(violatedFields(onlyError(org))).toEqual(['input.name']);
    });

    it('well-formed text of any script, emoji sequences and combining marks included, is stored and read back unchanged', async () => {
      const names = {
        firstName: '👩🏽‍💻 Zoë',
        lastName: 'محمد بن موسى',
        nickName: 'ｱﾀﾞ 𝔄𝔡𝔞',
        displayName: 'e\u0301\u0327 ✓ 🏳️‍🌈',
      };
      const res = await gw.send(UpdateHumanProfileDocument, { input: profileWith(names) as any });
      expect(res.errors, res.text).toBeUndefined();
      const read = await gw.send(UserDocument, { id: userId });
      expect(read.data!.user!.profile).toMatchObject(names);
      const stored = await gw.gateway.deps.store.load<User>('user', userId);
      expect(stored!.state.profile).toMatchObject(names);
    });
  });
}

textSuite('text inputs (embedded stores)', () => ({}));
describeWith('mongo', 'text inputs (MongoDB-wire + Redis)', (mongoUrl) => {
  textSuite('on MongoDB-wire', () => ({ MONGODB_URL: mongoUrl, MONGODB_DB: `text_${Date.now()}` }));
});
