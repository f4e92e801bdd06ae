// The change lists of zitadel.management.v1.ManagementService (src/wire/changes.ts) over the
// history command: ListUserChanges over gRPC and Connect with ZITADEL's own client and over REST
// with fetch, newest first and oldest first, paged by sequence; editors; permissions;
// ListOrgChanges (the acting organization) and ListProjectChanges; no secret in any answer.
// On the embedded stores.
import { fromJson, toJsonString, type JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { type Change } from '@zitadel/proto/zitadel/change_pb.js';
import {
  ListOrgChangesResponseSchema,
  ListProjectChangesResponseSchema,
  ListUserChangesResponseSchema,
} from '@zitadel/proto/zitadel/management_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGE } from '../src/commands/history.ts';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { failure, violationsOf, wireTransport, zitadelClients } from './support/wire-clients.ts';

const PASSWORD = 'Secr3t!pass-for-changes';
let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

type Kind = 'grpc' | 'connect' | 'rest';
const KINDS: Kind[] = ['grpc', 'connect', 'rest'];

interface Query {
  sequence?: number;
  limit?: number;
  asc?: boolean;
}

describe('ListUserChanges, ListOrgChanges, ListProjectChanges (embedded stores)', () => {
  let gw: TestGateway;
  /** Every answer's JSON, scanned for secrets at the end. */
  const answers: string[] = [];
  /** Secrets sent or received along the way: none may appear in a change list. */
  const secrets: string[] = [PASSWORD];

  beforeAll(async () => {
    gw = await startGateway({ env: {} });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const clients = (token: string | null = gw.adminToken) => zitadelClients(wireTransport('grpc', gw.baseUrl, token));

  /** A user added through the API with a password and an email code, and its id. */
  async function addUser(orgId?: string): Promise<string> {
    const added = await clients().users.addHumanUser({
      username: unique('hist'),
      ...(orgId ? { organization: { org: { case: 'orgId', value: orgId } } } : {}),
      profile: { givenName: 'Ada', familyName: 'Lovelace' },
      email: { email: `${unique('h')}@example.com`, verification: { case: 'returnCode', value: {} } },
      passwordType: { case: 'password', value: { password: PASSWORD, changeRequired: false } },
    });
    secrets.push(added.emailCode!);
    return added.userId;
  }

  /** ListUserChanges over `kind`; a refusal as a ConnectError (REST: with its HTTP status). */
  async function userChanges(kind: Kind, userId: string, query: Query = {}, token: string | null = gw.adminToken): Promise<Change[]> {
    const body: JsonObject = { query: { ...query, ...(query.sequence !== undefined ? { sequence: String(query.sequence) } : {}) } };
    if (kind === 'rest') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(`${gw.baseUrl}/management/v1/users/${userId}/changes/_search`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      const text = await res.text();
      answers.push(text);
      if (!res.ok) {
        const err = JSON.parse(text) as { code: number; message: string };
        throw Object.assign(new ConnectError(err.message, err.code as Code), { status: res.status });
      }
      return fromJson(ListUserChangesResponseSchema, JSON.parse(text)).result;
    }
    const c = zitadelClients(wireTransport(kind === 'grpc' ? 'grpc' : 'connect', gw.baseUrl, token));
    const res = await c.mgmt.listUserChanges({
      userId,
      query: { sequence: BigInt(query.sequence ?? 0), limit: query.limit ?? 0, asc: query.asc ?? false },
    });
    answers.push(toJsonString(ListUserChangesResponseSchema, res));
    return res.result;
  }

  const sequences = (changes: Change[]) => changes.map((c) => Number(c.sequence));
  const admin = async () => (await gw.gateway.deps.store.load<User>('user', gw.adminId))!.state;

  describe.each(KINDS)('over %s', (kind) => {
    it('lists a new user, a profile change and a phone change newest first, with their editor and sequences', async () => {
      const userId = await addUser();
      await clients().mgmt.updateHumanProfile({ userId, firstName: 'Grace', lastName: 'Hopper', displayName: 'Amazing Grace' });
      await clients().mgmt.updateHumanPhone({ userId, phone: '+41791234567' });
      const changes = await userChanges(kind, userId);
      expect(changes.map((c) => c.eventType?.key)).toEqual(['user.phone.changed', 'user.profile.changed', 'user.added']);
      expect(changes[0]!.eventType!.localizedMessage).toBe('User phone changed');
      expect(sequences(changes)).toEqual([3, 2, 1]);
      const me = await admin();
      for (const c of changes) {
        expect(c.editorId).toBe(gw.adminId);
        expect(c.editorPreferredLoginName).toBe(me.username);
        expect(c.editorDisplayName).not.toBe('');
        expect(c.resourceOwnerId).toBe(gw.defaultOrgId);
        expect(c.editorAvatarUrl).toBe('');
        expect(Number(c.changeDate!.seconds)).toBeGreaterThan(0);
      }
      // The user itself may read its own history; the administrator who edited it is not a user it may read: no names.
      const own = await userChanges(kind, userId, {}, await gw.tokenFor(userId));
      expect(sequences(own)).toEqual([3, 2, 1]);
      expect(own.every((c) => c.editorId === gw.adminId && c.editorDisplayName === '' && c.editorPreferredLoginName === '')).toBe(true);
    });

    it('pages a longer history by sequence, newest first and oldest first', async () => {
      const userId = await addUser();
      for (let i = 0; i < 7; i++) await clients().mgmt.updateHumanProfile({ userId, firstName: `Ada${i}`, lastName: 'Lovelace' });
      // Newest first, below the sequence (0: from the newest, past the newest: from the newest).
      expect(sequences(await userChanges(kind, userId, { limit: 3 }))).toEqual([8, 7, 6]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, sequence: 6 }))).toEqual([5, 4, 3]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, sequence: 3 }))).toEqual([2, 1]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, sequence: 1 }))).toEqual([]);
      expect(sequences(await userChanges(kind, userId, { limit: 2, sequence: 1000 }))).toEqual([8, 7]);
      // Oldest first, above the sequence.
      expect(sequences(await userChanges(kind, userId, { limit: 3, asc: true }))).toEqual([1, 2, 3]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, asc: true, sequence: 3 }))).toEqual([4, 5, 6]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, asc: true, sequence: 6 }))).toEqual([7, 8]);
      expect(sequences(await userChanges(kind, userId, { limit: 3, asc: true, sequence: 8 }))).toEqual([]);
      // limit 0: the command's default page (20), more than this history.
      expect(sequences(await userChanges(kind, userId))).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
      expect(sequences(await userChanges(kind, userId, { asc: true }))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // Past the command's maximum: its INVALID_ARGUMENT, in the request's field name.
      for (const asc of [false, true]) {
        const err = await failure(userChanges(kind, userId, { limit: MAX_PAGE + 1, asc }));
        expect(err.code).toBe(Code.InvalidArgument);
        if (kind === 'rest') expect((err as ConnectError & { status: number }).status).toBe(400);
        else expect(violationsOf(err).map((v) => v.field)).toEqual(['query.limit']);
        expect(err.rawMessage).toContain('query.limit');
      }
      expect(sequences(await userChanges(kind, userId, { limit: MAX_PAGE }))).toHaveLength(8);
    });

    it('PERMISSION_DENIED for a user of another organization without roles; UNAUTHENTICATED without a token', async () => {
      const target = await addUser();
      const other = await clients().orgs.addOrganization({ name: unique('Changes other ') });
      const outsider = await addUser(other.organizationId);
      const denied = await failure(userChanges(kind, target, {}, await gw.tokenFor(outsider)));
      expect(denied.code).toBe(Code.PermissionDenied);
      if (kind === 'rest') expect((denied as ConnectError & { status: number }).status).toBe(403);
      // An id that does not exist is no different.
      expect((await failure(userChanges(kind, '999999999', {}, await gw.tokenFor(outsider)))).code).toBe(Code.PermissionDenied);
      const anonymous = await failure(userChanges(kind, target, {}, null));
      expect(anonymous.code).toBe(Code.Unauthenticated);
      if (kind === 'rest') expect((anonymous as ConnectError & { status: number }).status).toBe(401);
    });
  });

  it("ListOrgChanges lists the acting organization (the header, else the caller's own); PERMISSION_DENIED without a role there", async () => {
    const c = clients();
    const org = await c.orgs.addOrganization({ name: unique('Changes org ') });
    const member = await addUser(org.organizationId);
    await c.mgmt.addOrgMember({ userId: member, roles: ['ORG_OWNER'] }, { headers: { 'x-zitadel-orgid': org.organizationId } });
    const res = await c.mgmt.listOrgChanges({}, { headers: { 'x-zitadel-orgid': org.organizationId } });
    answers.push(toJsonString(ListOrgChangesResponseSchema, res));
    expect(res.result.map((e) => e.eventType?.key)).toEqual(['org.member.added', 'org.added']);
    expect(sequences(res.result)).toEqual([2, 1]);
    expect(res.result.every((e) => e.resourceOwnerId === org.organizationId && e.editorId === gw.adminId)).toBe(true);
    // Oldest first, one at a time.
    const first = await c.mgmt.listOrgChanges({ query: { asc: true, limit: 1 } }, { headers: { 'x-zitadel-orgid': org.organizationId } });
    expect(first.result.map((e) => e.eventType?.key)).toEqual(['org.added']);
    // Without the header: the member's own organization, over Connect too.
    const own = await zitadelClients(wireTransport('connect', gw.baseUrl, await gw.tokenFor(member))).mgmt.listOrgChanges({});
    expect(own.result.map((e) => e.eventType?.key)).toEqual(['org.member.added', 'org.added']);
    // The administrator's own organization has its history too.
    const home = await c.mgmt.listOrgChanges({});
    expect(home.result.at(-1)!.eventType!.key).toBe('org.added');
    expect(home.result.every((e) => e.resourceOwnerId === gw.defaultOrgId)).toBe(true);
    // A plain user of the new organization may not read the default one.
    const plain = await addUser(org.organizationId);
    const err = await failure(
      clients(await gw.tokenFor(plain)).mgmt.listOrgChanges({}, { headers: { 'x-zitadel-orgid': gw.defaultOrgId } }),
    );
    expect(err.code).toBe(Code.PermissionDenied);
  });

  it("ListProjectChanges lists a project's events; REST too", async () => {
    const c = clients();
    const { id: projectId } = await c.mgmt.addProject({ name: unique('Changes project ') });
    const res = await c.mgmt.listProjectChanges({ projectId });
    answers.push(toJsonString(ListProjectChangesResponseSchema, res));
    expect(res.result.map((e) => e.eventType?.key)).toEqual(['project.added']);
    expect(res.result[0]!).toMatchObject({ sequence: 1n, editorId: gw.adminId, resourceOwnerId: gw.defaultOrgId });
    const rest = await fetch(`${gw.baseUrl}/management/v1/projects/${projectId}/changes/_search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(rest.status).toBe(200);
    const json = (await rest.json()) as { result: { eventType: { key: string }; sequence: string }[] };
    expect(json.result.map((e) => [e.eventType.key, e.sequence])).toEqual([['project.added', '1']]);
    const outsider = await addUser((await c.orgs.addOrganization({ name: unique('Changes outsider ') })).organizationId);
    expect((await failure(clients(await gw.tokenFor(outsider)).mgmt.listProjectChanges({ projectId }))).code).toBe(Code.PermissionDenied);
  });

  it('no password, hash or code appears in any answer', async () => {
    expect(answers.length).toBeGreaterThan(10);
    const all = answers.join('\n');
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/\$2[aby]\$|\$argon2/); // no password hash
    expect(all.toLowerCase()).not.toContain('password');
  });
});
