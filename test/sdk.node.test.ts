// ZITADEL's Node SDK (@zitadel/node 3.0.28 from npm), unchanged, against a gateway: gRPC over h2c
// with nice-grpc on @grpc/grpc-js, authenticated by its createAccessTokenInterceptor. Its helpers
// createAuthClient and createManagementClient (v1), its generated v2 user service definition
// (no helper: a client made with nice-grpc, as a user does), and createUserClient and
// createOrganizationClient, which speak the v2beta services. The SDK imports @bufbuild/protobuf
// without declaring it: the project has it anyway (a user must add it).
//
// Error texts arrive as grpc-go writes grpc-message, so grpc-js shows "Invalid input: first_name:
// ..." (it showed "Invalid input%3A first_name%3A ..." before), and a service the gateway does
// not serve is UNIMPLEMENTED with the gateway's text (before: "Received HTTP status code 404").
//
// The v2beta cases need the v2beta services (zitadel.user.v2beta.UserService,
// zitadel.org.v2beta.OrganizationService), which another branch adds.
import {
  createAccessTokenInterceptor,
  createAuthClient,
  createManagementClient,
  createOrganizationClient,
  createSessionClient,
  createUserClient,
} from '@zitadel/node/dist/api/index.js';
import { UserServiceDefinition as UserServiceV2 } from '@zitadel/node/dist/api/generated/zitadel/user/v2/user_service.js';
import { TextQueryMethod as TextQueryMethodV1 } from '@zitadel/node/dist/api/generated/zitadel/object.js';
import { ClientError, createChannel, createClientFactory, Metadata, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

/** The error a call failed with (a call that succeeds fails the test). */
async function failure(call: Promise<unknown>): Promise<ClientError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ClientError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('ZITADEL’s Node SDK (@zitadel/node 3.0.28) over gRPC (h2c)', () => {
  let gw: TestGateway;
  let auth: ReturnType<typeof createAuthClient>;
  let management: ReturnType<typeof createManagementClient>;
  let usersV2: ReturnType<typeof v2Client>;
  const run = `n${Date.now().toString(36)}`;
  const storedUser = async (id: string) => (await gw.gateway.deps.store.load<User>('user', id))!;

  /** The v2 user service: the SDK has its definition but no helper for it; nice-grpc makes the client, as createUserClient does for v2beta. */
  const v2Client = (token: string) =>
    createClientFactory().use(createAccessTokenInterceptor(token)).create(UserServiceV2, createChannel(gw.baseUrl));

  beforeAll(async () => {
    gw = await startGateway();
    const token = createAccessTokenInterceptor(gw.adminToken);
    auth = createAuthClient(gw.baseUrl, token);
    management = createManagementClient(gw.baseUrl, token);
    usersV2 = v2Client(gw.adminToken);
  });
  afterAll(async () => gw?.close());

  it('v1: GetMyUser; UpdateHumanProfile, SetHumanPassword and GetUserByID in the organization of x-zitadel-orgid; ListUsers by ids', async () => {
    const me = await auth.getMyUser({});
    expect(me.user?.id).toBe(gw.adminId);
    const orgId = me.user!.details!.resourceOwner;
    const inOrg = { metadata: Metadata({ 'x-zitadel-orgid': orgId }) };

    const added = await usersV2.addHumanUser({
      username: `node-v1-${run}`,
      organization: { orgId },
      profile: { givenName: 'Ada', familyName: 'Lovelace' },
      email: { email: `ada-v1-${run}@example.com`, isVerified: true },
    });
    const profile = await management.updateHumanProfile(
      { userId: added.userId, firstName: 'Augusta', lastName: 'King', displayName: 'Ada King' },
      inOrg,
    );
    expect(profile.details?.sequence.toString()).toBe('2');
    const password = await management.setHumanPassword({ userId: added.userId, password: 'Secr3t!pass', noChangeRequired: true }, inOrg);
    expect(password.details?.sequence.toString()).toBe('3');

    const user = (await management.getUserByID({ id: added.userId }, inOrg)).user!;
    expect({ userName: user.userName, first: user.human?.profile?.firstName, display: user.human?.profile?.displayName }).toEqual({
      userName: `node-v1-${run}`,
      first: 'Augusta',
      display: 'Ada King',
    });
    const stored = await storedUser(added.userId);
    expect({ first: stored.state.profile.firstName, sequence: stored.sequence, hashed: stored.state.passwordHash !== null }).toEqual({
      first: 'Augusta',
      sequence: 3,
      hashed: true,
    });

    const listed = await management.listUsers(
      { queries: [{ inUserIdsQuery: { userIds: [added.userId, gw.adminId, 'no-such-user'] } }], sortingColumn: 1, query: { asc: true } },
      inOrg,
    );
    expect(listed.result.map((u) => u.id).sort()).toEqual([added.userId, gw.adminId].sort());
    const suffix = await management.listUsers(
      {
        queries: [
          { userNameQuery: { userName: `-V1-${run.toUpperCase()}`, method: TextQueryMethodV1.TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE } },
        ],
      },
      inOrg,
    );
    expect(suffix.result.map((u) => u.id)).toEqual([added.userId]);
  });

  it('v2: AddHumanUser, GetUserByID, ListUsers with in_user_ids_query', async () => {
    const orgId = (await auth.getMyUser({})).user!.details!.resourceOwner;
    const added = await usersV2.addHumanUser({
      username: `node-v2-${run}`,
      organization: { orgId },
      profile: { givenName: 'Grace', familyName: 'Hopper' },
      email: { email: `grace-v2-${run}@example.com`, returnCode: {} },
    });
    expect(added.emailCode).toMatch(/^[A-Z0-9]{6}$/);
    const user = (await usersV2.getUserByID({ userId: added.userId })).user!;
    expect({ username: user.username, email: user.human?.email }).toEqual({
      username: `node-v2-${run}`,
      email: { email: `grace-v2-${run}@example.com`, isVerified: false },
    });
    const listed = await usersV2.listUsers({
      queries: [{ organizationIdQuery: { organizationId: orgId } }, { inUserIdsQuery: { userIds: [added.userId] } }],
    });
    expect(listed.result.map((u) => u.userId)).toEqual([added.userId]);
    expect(listed.details?.totalResult.toString()).toBe('1');
  });

  it('the refusals: NOT_FOUND, INVALID_ARGUMENT with its text as the gateway wrote it (no %3A), UNAUTHENTICATED', async () => {
    expect((await failure(usersV2.getUserByID({ userId: `no-such-user-${run}` }))).code).toBe(Status.NOT_FOUND);
    const invalid = await failure(management.updateHumanProfile({ userId: gw.adminId, firstName: '', lastName: 'Admin' }));
    expect(invalid.code).toBe(Status.INVALID_ARGUMENT);
    expect(invalid.details).toMatch(/^Invalid input: first_name: must not be empty \(INVALID_ARGUMENT-\w+\)$/);
    const anonymous = createAuthClient(gw.baseUrl, createAccessTokenInterceptor('not-a-token'));
    const unauthenticated = await failure(anonymous.getMyUser({}));
    expect({ code: unauthenticated.code, details: unauthenticated.details }).toMatchObject({
      code: Status.UNAUTHENTICATED,
      details: expect.stringMatching(/^Invalid token \(UNAUTHENTICATED-\w+\)$/),
    });
  });

  it('a service the gateway does not serve (createSessionClient): UNIMPLEMENTED with the gateway’s text, not an HTTP 404', async () => {
    const sessions = createSessionClient(gw.baseUrl, createAccessTokenInterceptor(gw.adminToken));
    const err = await failure(sessions.listSessions({}));
    expect({ code: err.code, details: err.details }).toEqual({
      code: Status.UNIMPLEMENTED,
      details: 'unknown service zitadel.session.v2beta.SessionService',
    });
  });

  // Needs the v2beta services (another branch).
  describe('createUserClient and createOrganizationClient (v2beta)', () => {
    it('CreateOrganization, then AddHumanUser, SetEmail, VerifyEmail, GetUserByID and ListUsers in it', async () => {
      const orgs = createOrganizationClient(gw.baseUrl, createAccessTokenInterceptor(gw.adminToken));
      const users = createUserClient(gw.baseUrl, createAccessTokenInterceptor(gw.adminToken));
      const org = await orgs.createOrganization({ name: `Node SDK ${run}` });
      expect(org.id).toMatch(/^\d+$/);
      const added = await users.addHumanUser({
        username: `node-beta-${run}`,
        organization: { orgId: org.id },
        profile: { givenName: 'Katherine', familyName: 'Johnson' },
        email: { email: `kj-${run}@example.com`, returnCode: {} },
      });
      const changed = await users.setEmail({ userId: added.userId, email: `kj.new-${run}@example.com`, returnCode: {} });
      expect(changed.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
      await users.verifyEmail({ userId: added.userId, verificationCode: changed.verificationCode! });
      const user = (await users.getUserByID({ userId: added.userId })).user!;
      expect(user.human?.email).toEqual({ email: `kj.new-${run}@example.com`, isVerified: true });
      expect(user.details?.resourceOwner).toBe(org.id);
      const listed = await users.listUsers({
        queries: [{ organizationIdQuery: { organizationId: org.id } }, { inUserIdsQuery: { userIds: [added.userId, 'no-such-user'] } }],
      });
      expect(listed.result.map((u) => u.userId)).toEqual([added.userId]);
      expect((await storedUser(added.userId)).state.email).toMatchObject({ email: `kj.new-${run}@example.com`, isVerified: true });
    });

    it('the refusals: NOT_FOUND, INVALID_ARGUMENT naming the field, UNAUTHENTICATED', async () => {
      const users = createUserClient(gw.baseUrl, createAccessTokenInterceptor(gw.adminToken));
      expect((await failure(users.getUserByID({ userId: `no-such-user-${run}` }))).code).toBe(Status.NOT_FOUND);
      const invalid = await failure(
        users.addHumanUser({ profile: { givenName: '', familyName: 'X' }, email: { email: `x-${run}@example.com` } }),
      );
      expect({ code: invalid.code, details: invalid.details }).toMatchObject({
        code: Status.INVALID_ARGUMENT,
        details: expect.stringMatching(/^Invalid input: profile\.given_name: must not be empty/),
      });
      const anonymous = createUserClient(gw.baseUrl, createAccessTokenInterceptor('not-a-token'));
      expect((await failure(anonymous.getUserByID({ userId: gw.adminId }))).code).toBe(Status.UNAUTHENTICATED);
    });
  });
});
