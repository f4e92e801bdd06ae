// Untrusted input of every parser, as an attacker would send it: deep JSON, huge
// base64, phone numbers, URL templates, emails and hashes far past their limits.
// Each answers INVALID_ARGUMENT naming what is wrong (never a 500 from a stack or
// regular expression overflow), in time linear in its size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, violatedFields, type TestGateway } from './support/gateway.ts';
import { isStandardBase64 } from '../src/model/base64.ts';
import { jsonDepth } from '../src/graphql/json-depth.ts';

const ADD_USER = 'mutation A($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }';
const VERIFY_U2F = 'mutation V($input: VerifyU2FRegistrationInput!) { verifyU2FRegistration(input: $input) { details { sequence } } }';
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('parsers of untrusted input', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  // 9,000 levels stay under the 10,000 objects a body may hold: the depth limit answers. 200,000
  // are refused before the body is parsed, as too many objects.
  it.each([
    ['9,000', 9_000, 'without an idempotency key', {}, 'variables'],
    ['9,000', 9_000, 'with an idempotency key (its fingerprint walks the variables)', { 'idempotency-key': 'deep-1' }, 'variables'],
    ['200,000', 200_000, 'without an idempotency key', {}, 'body'],
    ['200,000', 200_000, 'with an idempotency key', { 'idempotency-key': 'deep-2' }, 'body'],
  ])('%s nested objects in the variables, %s: INVALID_ARGUMENT, not a stack overflow', async (_count, depth, _label, headers, field) => {
    const body = `{"query":${JSON.stringify(VERIFY_U2F)},"variables":{"input":{"userId":"${gw.adminId}","u2fId":"1","tokenName":"t","publicKeyCredential":{"id":"x","response":${nested(depth)}}}}}`;
    const res = await post(body, headers);
    expect(res.status).toBe(400);
    expect(res.json.errors[0].extensions.code).toBe('INVALID_ARGUMENT');
    expect(violatedFields(res.json.errors[0])).toEqual([field]);
  });

  it('a 5,000,001-character base64 value (not a multiple of 4) is INVALID_ARGUMENT, not a regular expression stack overflow', async () => {
    const input = {
      profile: { firstName: 'a', lastName: 'b' },
      email: { email: 'a@b.ch', isVerified: true },
      metadata: [{ key: 'k', value: 'A'.repeat(5_000_001) }],
    };
    const res = await post(JSON.stringify({ query: ADD_USER, variables: { input } }));
    expect(res.status).toBe(200);
    expect(res.json.errors[0].extensions.httpStatus).toBe(400);
    expect(res.json.errors[0].extensions.code).toBe('INVALID_ARGUMENT');
  });

  it('megabytes in fields limited to a few hundred characters: INVALID_ARGUMENT naming each field', async () => {
    const big = 'a'.repeat(2_000_000);
    const input = {
      username: big,
      profile: { firstName: 'a', lastName: 'b' },
      email: { email: `${big}@${'b.'.repeat(500_000)}ch`, sendCode: { urlTemplate: '{{' + '{{.Code}}'.repeat(200_000) } },
      phone: { phone: '+41' + '1'.repeat(2_000_000) },
      hashedPassword: { hash: '$argon2id$v=19$m=' + '1'.repeat(2_000_000) },
    };
    const res = await post(JSON.stringify({ query: ADD_USER, variables: { input } }));
    expect(res.status).toBe(200);
    expect(res.json.errors[0].extensions.httpStatus).toBe(400);
    expect(new Set(violatedFields(res.json.errors[0]))).toEqual(
      new Set([
        'input.username',
        'input.email.email',
        'input.email.sendCode.urlTemplate',
        'input.phone.phone',
        'input.hashedPassword.hash',
      ]),
    );
  });

  it('legal nesting still passes the depth limit', () => {
    expect(jsonDepth({ input: { publicKeyCredential: { response: { transports: ['usb'] } } } })).toBe(5);
    expect(jsonDepth(JSON.parse(nested(32)))).toBe(32); // docs/graphql.md: variables nest at most 32 levels
    expect(jsonDepth(JSON.parse(nested(1_000_000)))).toBe(33); // stops early, no recursion
  });

  it('base64: canonical standard base64 only', () => {
    for (const ok of ['', 'AA==', 'AAA=', 'AAAA', Buffer.from('hello world').toString('base64')])
      expect(isStandardBase64(ok), ok).toBe(true);
    for (const bad of ['A', 'AA=', 'AB==', 'A===', '-_-_', 'AA AA==', 'AAAA\n', '====', 'AA==AAAA'])
      expect(isStandardBase64(bad), bad).toBe(false);
  });
});
