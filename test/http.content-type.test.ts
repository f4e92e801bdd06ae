// docs/graphql.md: a POST to /graphql is application/json. Every other request media type,
// application/graphql included, is refused with 415 and executes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readResponse } from './support/net.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { isJsonRequest } from '../src/graphql/content-type.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const addUser = (username: string) =>
  `mutation { addHumanUser(input: { username: "${username}", profile: { firstName: "C", lastName: "T" }, email: { email: "${username}@example.com", isVerified: true } }) { userId } }`;

describe('request media type', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  const post = async (body: string, contentType: string) =>
    readResponse(
      await fetch(gw.url, { method: 'POST', headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': contentType }, body }),
    );
  const holder = (username: string) => gw.gateway.deps.store.lookup(`username:${username.toLowerCase()}`);

  it('application/graphql (and other preflighted types) get 415 with INVALID_ARGUMENT, and nothing is executed', async () => {
    for (const type of [
      'application/graphql',
      'application/graphql; charset=utf-8',
      'application/xml',
      'application/json; charset=latin1',
    ]) {
      const username = unique('ct');
      const body = type.startsWith('application/graphql') ? addUser(username) : JSON.stringify({ query: addUser(username) });
      const res = await post(body, type);
      expect(res.status, type).toBe(415);
      expect(res.headers.get('accept')).toBe('application/json');
      // The status in the response and as extensions.httpStatus, as on every answer.
      expect(res.json.errors[0].extensions).toEqual({ code: 'INVALID_ARGUMENT', grpcCode: 3, details: [], httpStatus: 415 });
      expect(await holder(username), type).toBeNull();
    }
  });

  it('application/json, with or without a UTF-8 charset, is executed', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"']) {
      const username = unique('ok');
      const res = await post(JSON.stringify({ query: addUser(username) }), type);
      expect(res.status, type).toBe(200);
      expect(res.json.data.addHumanUser.userId).toMatch(/^\d+$/);
      expect(await holder(username)).not.toBeNull();
    }
  });

  it('reads the media type strictly', () => {
    expect(isJsonRequest(null)).toBe(false);
    expect(isJsonRequest('application/jsonx')).toBe(false);
    expect(isJsonRequest('application/json; boundary=x')).toBe(false);
    expect(isJsonRequest('application/json ;charset=utf-8')).toBe(true);
  });
});
