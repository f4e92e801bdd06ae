// Authentication, permissions and the acting organization end to end over HTTP
// (DESIGN.md sections 6 and 7, SPEC.md Authentication and x-service-orgid), on the embedded stores.
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  AddOrgMemberDocument,
  AddOrganizationDocument,
  MeDocument,
  RegisterU2FDocument,
  SetEmailDocument,
  SetHumanPasswordDocument,
  UpdateHumanPhoneDocument,
  UpdateHumanProfileDocument,
  UpdateMyProfileDocument,
  UserDocument,
  VerifyEmailDocument,
  VerifyPhoneDocument,
} from './generated/graphql.ts';
import { startGateway, type Response, type TestGateway } from './support/gateway.ts';
import { createLocalTokenSigner } from '../src/auth/tokens.ts';
import { loadOrCreateLocalKey, LOCAL_KEY_ALG } from '../src/auth/local-key.ts';
import { rolesOf, type Org } from '../src/model/orgs.ts';
import type { User } from '../src/model/users.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Ada', lastName: 'Lovelace' };

// DESIGN.md section 7, written out independently of src/errors.ts.
const expected = {
  INVALID_ARGUMENT: { grpcCode: 3, status: 400 },
  UNAUTHENTICATED: { grpcCode: 16, status: 401 },
  PERMISSION_DENIED: { grpcCode: 7, status: 403 },
  NOT_FOUND: { grpcCode: 5, status: 404 },
  ALREADY_EXISTS: { grpcCode: 6, status: 409 },
  FAILED_PRECONDITION: { grpcCode: 9, status: 409 },
} as const;
type Code = keyof typeof expected;

/**
 * The response failed with exactly one error of `code`: extensions and details as DESIGN.md
 * section 7 says, its status as extensions.httpStatus; the request executed, so HTTP 200.
 */
function expectError(res: Response<unknown>, code: Code, label = '') {
  const where = `${label}: ${res.text}`;
  expect(res.errors?.length, where).toBe(1);
  const err = res.errors![0]!;
  expect(err.extensions?.code, where).toBe(code);
  expect(err.extensions?.grpcCode, where).toBe(expected[code].grpcCode);
  expect(Array.isArray(err.extensions?.details), where).toBe(true);
  for (const d of err.extensions!.details!) expect(typeof d['@type'], where).toBe('string');
  expect(typeof err.message, where).toBe('string');
  expect(err.extensions?.httpStatus, where).toBe(expected[code].status);
  expect(res.status, where).toBe(200);
  // The single field of the operation carries no data.
  const data = (res.data ?? {}) as Record<string, unknown>;
  for (const v of Object.values(data)) expect(v, where).toBeNull();
  return err;
}

/** The code and httpStatus of the response's single error. */
function onlyCode(res: Response<unknown>) {
  expect(res.errors?.length, res.text).toBe(1);
  const { code, httpStatus } = res.errors![0]!.extensions ?? {};
  return { code, httpStatus };
}

function expectOk<T>(res: Response<T>, label = ''): T {
  expect(res.errors, `${label}: ${res.text}`).toBeUndefined();
  expect(res.status, label).toBe(200);
  return res.data!;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('permissions end to end on the embedded stores', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  const store = () => gw.gateway.deps.store;
  const userSeq = async (id: string) => (await store().load<User>('user', id))?.sequence ?? null;
  const orgSeq = async (id: string) => (await store().load<Org>('org', id))?.sequence ?? null;
  const stored = async (id: string) => (await store().load<User>('user', id))!;

  interface Created {
    userId: string;
    emailCode: string;
    phoneCode: string;
  }
  /** A user (by the admin unless `token`), with its email and phone codes returned. */
  const addUser = async (orgId?: string, extra: Record<string, unknown> = {}): Promise<Created> => {
    const res = await gw.send(AddHumanUserDocument, {
      input: {
        profile,
        email: { email: `${unique('u')}@example.com`, returnCode: true },
        phone: { phone: '+41 79 123 45 67', returnCode: true },
        ...(orgId ? { organisation: { orgId } } : {}),
        ...extra,
      } as any,
    });
    const data = expectOk(res, 'addUser');
    const { userId, emailCode, phoneCode } = data.addHumanUser;
    return { userId, emailCode: emailCode!, phoneCode: phoneCode! };
  };
  const addOrg = async (name = unique('Org ')) => {
    const res = await gw.send(AddOrganizationDocument, { input: { name } });
    return expectOk(res, 'addOrg').addOrganization.orgId;
  };
  const grant = async (orgId: string, userId: string, roles: string[]) => {
    expectOk(await gw.send(AddOrgMemberDocument, { input: { userId, roles } }, { orgId }), `grant ${roles}`);
  };

  type Opts = { token?: string | null; orgId?: string; headers?: Record<string, string> };
  interface Target extends Created {
    newUserId: string;
    orgName: string;
  }
  /**
   * Every operation of DESIGN.md section 6 aimed at `t`, with inputs that pass
   * every input rule, so that only authentication or permission can stop it.
   */
  const everyOperation = (t: Target): [string, (o: Opts) => Promise<Response<any>>][] => [
    [
      'updateMyProfile',
      (o) =>
        gw.send(UpdateMyProfileDocument, { input: { firstName: 'Mallory', lastName: 'Evil', nickName: 'm', displayName: 'Mallory' } }, o),
    ],
    [
      'updateHumanProfile',
      (o) => gw.send(UpdateHumanProfileDocument, { input: { userId: t.userId, firstName: 'Mallory', lastName: 'Evil' } }, o),
    ],
    [
      'addHumanUser',
      (o) =>
        gw.send(
          AddHumanUserDocument,
          { input: { userId: t.newUserId, profile, email: { email: `${t.newUserId}@example.com`, isVerified: true } } },
          o,
        ),
    ],
    [
      'setEmail',
      (o) => gw.send(SetEmailDocument, { input: { userId: t.userId, email: `${unique('evil')}@example.com`, isVerified: true } }, o),
    ],
    [
      'updateHumanPhone',
      (o) => gw.send(UpdateHumanPhoneDocument, { input: { userId: t.userId, phone: '+41 79 999 88 77', isPhoneVerified: true } }, o),
    ],
    ['setHumanPassword', (o) => gw.send(SetHumanPasswordDocument, { input: { userId: t.userId, password: 'Ev1l!passw0rd' } }, o)],
    ['addOrganization', (o) => gw.send(AddOrganizationDocument, { input: { name: t.orgName } }, o)],
    ['addOrgMember', (o) => gw.send(AddOrgMemberDocument, { input: { userId: t.userId, roles: ['ORG_OWNER'] } }, o)],
    ['verifyEmail', (o) => gw.send(VerifyEmailDocument, { input: { userId: t.userId, verificationCode: t.emailCode } }, o)],
    ['verifyPhone', (o) => gw.send(VerifyPhoneDocument, { input: { userId: t.userId, verificationCode: t.phoneCode } }, o)],
    ['me', (o) => gw.send(MeDocument, {}, o)],
    ['user', (o) => gw.send(UserDocument, { id: t.userId }, o)],
  ];

  /** What any of the operations above could have written. */
  const footprint = async (t: Target, extraUsers: string[] = []) => ({
    target: await userSeq(t.userId),
    admin: await userSeq(gw.adminId),
    extra: await Promise.all(extraUsers.map(userSeq)),
    defaultOrg: await orgSeq(gw.defaultOrgId),
    newUser: await userSeq(t.newUserId),
    orgNameClaim: await store().lookup(`orgName:${t.orgName.toLowerCase()}`),
  });

  const newTarget = async (orgId?: string): Promise<Target> => ({
    ...(await addUser(orgId)),
    newUserId: unique('never-'),
    orgName: unique('Never Org '),
  });

  describe('1. authentication, on every operation', () => {
    let target: Target;
    beforeAll(async () => {
      target = await newTarget();
    });

    /** Runs every operation with `opts` and expects UNAUTHENTICATED and no write. */
    const allUnauthenticated = async (opts: Opts, what: string) => {
      const before = await footprint(target);
      expect(before.newUser).toBeNull();
      expect(before.orgNameClaim).toBeNull();
      for (const [name, run] of everyOperation(target)) {
        expectError(await run(opts), 'UNAUTHENTICATED', `${what} / ${name}`);
      }
      expect(await footprint(target)).toEqual(before);
    };

    it('no Authorization header', async () => {
      await allUnauthenticated({ token: null }, 'no token');
    });

    it('an expired token of an existing user, signed with the gateway key', async () => {
      const expired = await createLocalTokenSigner(gw.config).sign(target.userId, -120);
      await allUnauthenticated({ token: expired }, 'expired');
    });

    it('a token with the right claims signed by another key (same kid, same alg)', async () => {
      const { kid } = await loadOrCreateLocalKey(gw.config.dataDir);
      const { privateKey } = await generateKeyPair(LOCAL_KEY_ALG);
      const forged = await new SignJWT({})
        .setProtectedHeader({ alg: LOCAL_KEY_ALG, kid, typ: 'JWT' })
        .setIssuer(gw.config.jwtIssuer)
        .setAudience(gw.config.jwtAudience)
        .setSubject(target.userId)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
      await allUnauthenticated({ token: forged }, 'other key');
      // the same for the instance administrator: a forged admin token grants nothing
      const forgedAdmin = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(gw.config.jwtIssuer)
        .setAudience(gw.config.jwtAudience)
        .setSubject(gw.adminId)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
      await allUnauthenticated({ token: forgedAdmin }, 'forged admin');
    });

    it('a token with alg none', async () => {
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: gw.config.jwtIssuer, aud: gw.config.jwtAudience, sub: gw.adminId, iat: now, exp: now + 3600 };
      await allUnauthenticated({ token: `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.` }, 'alg none');
    });

    it('a token signed with HS256 (algorithm confusion)', async () => {
      const hs = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(gw.config.jwtIssuer)
        .setAudience(gw.config.jwtAudience)
        .setSubject(gw.adminId)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('a-shared-secret-of-thirty-two-bytes!!'));
      await allUnauthenticated({ token: hs }, 'HS256');
    });

    it('the gateway key with the wrong issuer or audience', async () => {
      const { privateKey, kid } = await loadOrCreateLocalKey(gw.config.dataDir);
      const sign = (iss: string, aud: string) =>
        new SignJWT({})
          .setProtectedHeader({ alg: LOCAL_KEY_ALG, kid })
          .setIssuer(iss)
          .setAudience(aud)
          .setSubject(target.userId)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(privateKey);
      await allUnauthenticated({ token: await sign('someone-else', gw.config.jwtAudience) }, 'wrong issuer');
      await allUnauthenticated({ token: await sign(gw.config.jwtIssuer, 'another-service') }, 'wrong audience');
    });

    it('garbage bearer values and other schemes', async () => {
      await allUnauthenticated({ token: 'not-a-jwt' }, 'garbage');
      await allUnauthenticated({ token: 'a.b.c' }, 'three garbage parts');
      await allUnauthenticated({ token: null, headers: { authorization: 'Bearer ' } }, 'empty bearer');
      await allUnauthenticated({ token: null, headers: { authorization: 'Bearer {"sub":"x"}' } }, 'json bearer');
      await allUnauthenticated({ token: null, headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }, 'basic');
    });

    it('a valid token for a user id that does not exist', async () => {
      const ghost = unique('ghost-');
      await allUnauthenticated({ token: await gw.tokenFor(ghost) }, 'ghost');
      expect(await userSeq(ghost)).toBeNull();
    });

    it('a token accepted once is refused after it expires (the verification cache re-checks exp)', async () => {
      // Lives long enough for the first request to be answered on a loaded machine, then ends.
      const token = await createLocalTokenSigner(gw.config).sign(target.userId, 6);
      const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
      expect(expectOk(await gw.send(MeDocument, {}, { token })).me.id).toBe(target.userId);
      await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
      expectError(await gw.send(MeDocument, {}, { token }), 'UNAUTHENTICATED', 'expired after a cached success');
    });

    it('UNAUTHENTICATED wins over a missing target or a missing organization', async () => {
      const opts = { token: null };
      expectError(
        await gw.send(UpdateHumanProfileDocument, { input: { userId: 'nobody', firstName: 'A', lastName: 'B' } }, opts),
        'UNAUTHENTICATED',
      );
      expectError(await gw.send(SetEmailDocument, { input: { userId: 'nobody', email: 'a@example.com' } }, opts), 'UNAUTHENTICATED');
      expectError(await gw.send(VerifyPhoneDocument, { input: { userId: 'nobody', verificationCode: 'ABCDEF' } }, opts), 'UNAUTHENTICATED');
      expectError(
        await gw.send(
          UpdateHumanPhoneDocument,
          { input: { userId: target.userId, phone: '+41791112233' } },
          { token: null, orgId: 'no-such-org' },
        ),
        'UNAUTHENTICATED',
      );
    });

    it('the target was untouched: its codes still verify and its profile is unchanged', async () => {
      expectOk(await gw.send(VerifyEmailDocument, { input: { userId: target.userId, verificationCode: target.emailCode } }));
      expectOk(await gw.send(VerifyPhoneDocument, { input: { userId: target.userId, verificationCode: target.phoneCode } }));
      const state = (await stored(target.userId)).state;
      expect(state.profile.firstName).toBe('Ada');
      expect(state.phone).toEqual({ phone: '+41791234567', isVerified: true });
      expect(state.passwordHash).toBeNull();
    });
  });

  describe('2. lacking the role', () => {
    it('a plain user (no roles) gets PERMISSION_DENIED on every operation that needs a permission, and nothing is written', async () => {
      const plain = await addUser();
      const token = await gw.tokenFor(plain.userId);
      const target = await newTarget();
      const before = await footprint(target, [plain.userId]);
      const denied = [
        'updateHumanProfile',
        'addHumanUser',
        'setEmail',
        'updateHumanPhone',
        'setHumanPassword',
        'addOrganization',
        'addOrgMember',
        'verifyEmail',
        'verifyPhone',
      ];
      const ops = new Map(everyOperation(target));
      for (const name of denied) expectError(await ops.get(name)!({ token }), 'PERMISSION_DENIED', `plain / ${name}`);
      // setEmail without isVerified is still someone else's email
      expectError(
        await gw.send(
          SetEmailDocument,
          { input: { userId: target.userId, email: `${unique('x')}@example.com`, returnCode: true } },
          { token },
        ),
        'PERMISSION_DENIED',
      );
      // a plain user granting itself a role
      expectError(
        await gw.send(AddOrgMemberDocument, { input: { userId: plain.userId, roles: ['ORG_OWNER'] } }, { token }),
        'PERMISSION_DENIED',
      );
      expect(await footprint(target, [plain.userId])).toEqual(before);
      // the codes were not consumed by the refused attempts
      expectOk(await gw.send(VerifyEmailDocument, { input: { userId: target.userId, verificationCode: target.emailCode } }));
      expectOk(await gw.send(VerifyPhoneDocument, { input: { userId: target.userId, verificationCode: target.phoneCode } }));
    });

    it('the permission is checked before input rules that need I/O (no probing of ids)', async () => {
      const plain = await addUser();
      const token = await gw.tokenFor(plain.userId);
      const taken = await addUser();
      // a missing target user, a taken userId, an unknown IDP: all PERMISSION_DENIED for a caller without the role
      expectError(
        await gw.send(UpdateHumanProfileDocument, { input: { userId: unique('nobody-'), firstName: 'A', lastName: 'B' } }, { token }),
        'PERMISSION_DENIED',
        'missing user',
      );
      expectError(
        await gw.send(SetHumanPasswordDocument, { input: { userId: unique('nobody-'), password: 'Str0ng!pass' } }, { token }),
        'PERMISSION_DENIED',
        'missing user',
      );
      expectError(
        await gw.send(AddHumanUserDocument, { input: { userId: taken.userId, profile, email: { email: 'a@example.com' } } }, { token }),
        'PERMISSION_DENIED',
        'taken id',
      );
      expectError(
        await gw.send(
          AddHumanUserDocument,
          { input: { profile, email: { email: 'a@example.com' }, idpLinks: [{ idpId: 'no-such-idp', userId: 'x', userName: 'x' }] } },
          { token },
        ),
        'PERMISSION_DENIED',
        'unknown idp',
      );
      expectError(
        await gw.send(AddOrgMemberDocument, { input: { userId: unique('nobody-'), roles: ['ORG_OWNER'] } }, { token }),
        'PERMISSION_DENIED',
        'missing member',
      );
    });

    describe('role by role (DESIGN.md section 6)', () => {
      let orgId: string;
      beforeAll(async () => {
        orgId = await addOrg();
      });

      /** The user.write operations on a fresh target of the org; expect all allowed or all denied. */
      const userWriteOps = async (o: Opts, allowed: boolean, role: string) => {
        const t = await newTarget(orgId);
        const before = await footprint(t);
        const runs: [string, () => Promise<Response<any>>, (data: any) => any][] = [
          [
            'addHumanUser',
            () =>
              gw.send(
                AddHumanUserDocument,
                { input: { userId: t.newUserId, profile, email: { email: `${t.newUserId}@example.com`, isVerified: true } } },
                o,
              ),
            (d) => d.addHumanUser.details,
          ],
          [
            'verifyEmail',
            () => gw.send(VerifyEmailDocument, { input: { userId: t.userId, verificationCode: t.emailCode } }, o),
            (d) => d.verifyEmail.details,
          ],
          [
            'verifyPhone',
            () => gw.send(VerifyPhoneDocument, { input: { userId: t.userId, verificationCode: t.phoneCode } }, o),
            (d) => d.verifyPhone.details,
          ],
          [
            'updateHumanProfile',
            () => gw.send(UpdateHumanProfileDocument, { input: { userId: t.userId, firstName: 'Changed', lastName: role } }, o),
            (d) => d.updateHumanProfile.details,
          ],
          [
            'updateHumanPhone',
            () => gw.send(UpdateHumanPhoneDocument, { input: { userId: t.userId, phone: '+41 79 555 44 33' } }, o),
            (d) => d.updateHumanPhone.details,
          ],
          [
            'setHumanPassword',
            () => gw.send(SetHumanPasswordDocument, { input: { userId: t.userId, password: 'Str0ng!pass' } }, o),
            (d) => d.setHumanPassword.details,
          ],
          // user.write may mark an email verified
          [
            'setEmail',
            () => gw.send(SetEmailDocument, { input: { userId: t.userId, email: `${unique('set')}@example.com`, isVerified: true } }, o),
            (d) => d.setEmail.details,
          ],
        ];
        for (const [name, run, details] of runs) {
          const res = await run();
          if (allowed) expect(details(expectOk(res, `${role} / ${name}`)).resourceOwner, `${role} / ${name}`).toBe(orgId);
          else expectError(res, 'PERMISSION_DENIED', `${role} / ${name}`);
        }
        if (allowed) {
          expect((await stored(t.newUserId)).resourceOwner).toBe(orgId);
          const s = (await stored(t.userId)).state;
          expect(s.profile.firstName).toBe('Changed');
          expect(s.email.isVerified).toBe(true);
          expect(s.passwordHash).not.toBeNull();
        } else {
          expect(await footprint(t)).toEqual(before);
        }
      };

      /** addOrgMember and addOrganization. */
      const adminOps = async (o: Opts, memberWrite: boolean, role: string) => {
        const someone = await addUser(orgId);
        const before = await orgSeq(orgId);
        const res = await gw.send(AddOrgMemberDocument, { input: { userId: someone.userId, roles: ['ORG_PROJECT_CREATOR'] } }, o);
        if (memberWrite) {
          expect(expectOk(res, `${role} / addOrgMember`).addOrgMember.details.resourceOwner).toBe(orgId);
          expect(rolesOf((await store().load<Org>('org', orgId))!.state, someone.userId)).toEqual(['ORG_PROJECT_CREATOR']);
        } else {
          expectError(res, 'PERMISSION_DENIED', `${role} / addOrgMember`);
          expect(await orgSeq(orgId)).toBe(before);
        }
        const name = unique('Denied ');
        expectError(await gw.send(AddOrganizationDocument, { input: { name } }, o), 'PERMISSION_DENIED', `${role} / addOrganization`);
        expect(await store().lookup(`orgName:${name.toLowerCase()}`)).toBeNull();
      };

      const cases = [
        ['ORG_USER_MANAGER', true, false],
        ['ORG_SETTINGS_MANAGER', false, false],
        ['ORG_PROJECT_CREATOR', false, false],
        ['ORG_OWNER', true, true],
      ] as const;
      it.each(cases)('%s: user.write %s, org.member.write %s, never addOrganization', async (role, userWrite, memberWrite) => {
        const member = await addUser(orgId);
        await grant(orgId, member.userId, [role]);
        const token = await gw.tokenFor(member.userId);
        await userWriteOps({ token }, userWrite, role);
        await adminOps({ token }, memberWrite, role);
      });

      it('roles add up: ORG_SETTINGS_MANAGER + ORG_USER_MANAGER may do the user.write operations', async () => {
        const member = await addUser(orgId);
        await grant(orgId, member.userId, ['ORG_SETTINGS_MANAGER']);
        await grant(orgId, member.userId, ['ORG_USER_MANAGER']);
        await userWriteOps({ token: await gw.tokenFor(member.userId) }, true, 'settings+users');
      });

      it('a role granted by an ORG_OWNER takes effect', async () => {
        const owner = await addUser(orgId);
        await grant(orgId, owner.userId, ['ORG_OWNER']);
        const newbie = await addUser(orgId);
        const t = await addUser(orgId);
        const newbieToken = await gw.tokenFor(newbie.userId);
        expectError(
          await gw.send(UpdateHumanProfileDocument, { input: { userId: t.userId, firstName: 'X', lastName: 'Y' } }, { token: newbieToken }),
          'PERMISSION_DENIED',
        );
        expectOk(
          await gw.send(
            AddOrgMemberDocument,
            { input: { userId: newbie.userId, roles: ['ORG_USER_MANAGER'] } },
            { token: await gw.tokenFor(owner.userId) },
          ),
        );
        expectOk(
          await gw.send(UpdateHumanProfileDocument, { input: { userId: t.userId, firstName: 'X', lastName: 'Y' } }, { token: newbieToken }),
        );
      });

      it('IAM_OWNER may do everything in any organization (with x-service-orgid), and addOrganization', async () => {
        await userWriteOps({ orgId }, true, 'IAM_OWNER');
        const someone = await addUser(orgId);
        const member = await gw.send(AddOrgMemberDocument, { input: { userId: someone.userId, roles: ['ORG_OWNER'] } }, { orgId });
        expect(expectOk(member).addOrgMember.details.resourceOwner).toBe(orgId);
        const name = unique('Allowed ');
        const created = expectOk(await gw.send(AddOrganizationDocument, { input: { name } })).addOrganization;
        expect(created.details.resourceOwner).toBe(created.orgId);
        expect((await store().lookup(`orgName:${name.toLowerCase()}`))?.aggregateId).toBe(created.orgId);
      });
    });
  });

  describe('3. which organization an operation acts in', () => {
    let orgA: string;
    let orgB: string;
    let ownerA: Created;
    let tokenA: string;
    let userA: Created;
    let userB: Created;
    beforeAll(async () => {
      orgA = await addOrg(unique('Alpha '));
      orgB = await addOrg(unique('Beta '));
      ownerA = await addUser(orgA);
      await grant(orgA, ownerA.userId, ['ORG_OWNER']);
      tokenA = await gw.tokenFor(ownerA.userId);
      userA = await addUser(orgA);
      userB = await addUser(orgB);
    });

    const headerOps = (userId: string, tag: string): [string, (o: Opts) => Promise<Response<any>>, (d: any) => any][] => [
      [
        'updateHumanProfile',
        (o) => gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'Cross', lastName: unique(tag) } }, o),
        (d) => d.updateHumanProfile.details,
      ],
      [
        'updateHumanPhone',
        (o) =>
          gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: `+41 79 ${100 + (seq++ % 800)} 22 33`, isPhoneVerified: true } }, o),
        (d) => d.updateHumanPhone.details,
      ],
      [
        'setHumanPassword',
        (o) => gw.send(SetHumanPasswordDocument, { input: { userId, password: 'Cr0ss!pass' } }, o),
        (d) => d.setHumanPassword.details,
      ],
    ];

    it('with no header an ORG_OWNER acts in its own organization', async () => {
      for (const [name, run, details] of headerOps(userA.userId, 'own')) {
        const d = details(expectOk(await run({ token: tokenA }), name));
        expect(d.resourceOwner, name).toBe(orgA);
        expect(d.creationDate, name).not.toBeNull();
      }
      const created = expectOk(
        await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `${unique('a')}@example.com` } } }, { token: tokenA }),
      ).addHumanUser;
      expect(created.details.resourceOwner).toBe(orgA);
      expect((await stored(created.userId)).resourceOwner).toBe(orgA);
    });

    it('a user of another organization is NOT_FOUND in the acting one', async () => {
      const before = await userSeq(userB.userId);
      for (const [name, run] of headerOps(userB.userId, 'nf')) {
        expectError(await run({ token: tokenA }), 'NOT_FOUND', `owner A, no header / ${name}`);
        expectError(await run({ token: tokenA, orgId: orgA }), 'NOT_FOUND', `owner A, header A / ${name}`);
        // the instance administrator acts in its own (default) organization without the header
        expectError(await run({}), 'NOT_FOUND', `admin, no header / ${name}`);
      }
      for (const [name, run] of headerOps(unique('nobody-'), 'nf')) {
        expectError(await run({ token: tokenA }), 'NOT_FOUND', `owner A, missing user / ${name}`);
      }
      expect(await userSeq(userB.userId)).toBe(before);
    });

    it('x-service-orgid naming an organization where the caller holds no role: PERMISSION_DENIED', async () => {
      const beforeB = await userSeq(userB.userId);
      const beforeA = await userSeq(userA.userId);
      const beforeOrgB = await orgSeq(orgB);
      for (const [name, run] of headerOps(userB.userId, 'pd')) {
        expectError(await run({ token: tokenA, orgId: orgB }), 'PERMISSION_DENIED', `owner A, header B / ${name}`);
      }
      for (const [name, run] of headerOps(userA.userId, 'pd')) {
        expectError(await run({ token: tokenA, orgId: orgB }), 'PERMISSION_DENIED', `owner A, header B, user of A / ${name}`);
      }
      const newId = unique('never-');
      expectError(
        await gw.send(
          AddHumanUserDocument,
          { input: { userId: newId, profile, email: { email: 'b@example.com' } } },
          { token: tokenA, orgId: orgB },
        ),
        'PERMISSION_DENIED',
        'addHumanUser header B',
      );
      expectError(
        await gw.send(AddOrgMemberDocument, { input: { userId: ownerA.userId, roles: ['ORG_OWNER'] } }, { token: tokenA, orgId: orgB }),
        'PERMISSION_DENIED',
        'addOrgMember header B',
      );
      expectError(await gw.send(UserDocument, { id: userB.userId }, { token: tokenA, orgId: orgB }), 'PERMISSION_DENIED', 'user header B');
      expect(await userSeq(userB.userId)).toBe(beforeB);
      expect(await userSeq(userA.userId)).toBe(beforeA);
      expect(await orgSeq(orgB)).toBe(beforeOrgB);
      expect(await userSeq(newId)).toBeNull();
      expect(rolesOf((await store().load<Org>('org', orgB))!.state, ownerA.userId)).toEqual([]);
    });

    it('the instance administrator with x-service-orgid: B acts in B', async () => {
      for (const [name, run, details] of headerOps(userB.userId, 'iam')) {
        const d = details(expectOk(await run({ orgId: orgB }), name));
        expect(d.resourceOwner, name).toBe(orgB);
        expect(d.creationDate, name).not.toBeNull();
      }
      expect((await stored(userB.userId)).state.passwordHash).not.toBeNull();
      const created = expectOk(
        await gw.send(AddHumanUserDocument, { input: { profile, email: { email: `${unique('b')}@example.com` } } }, { orgId: orgB }),
      ).addHumanUser;
      expect(created.details.resourceOwner).toBe(orgB);
      expect((await stored(created.userId)).resourceOwner).toBe(orgB);
    });

    it('x-service-orgid naming an organization that does not exist: PERMISSION_DENIED (not NOT_FOUND), even for IAM_OWNER', async () => {
      const before = await Promise.all([userA, userB].map((u) => userSeq(u.userId)));
      for (const [who, token] of [
        ['owner A', () => tokenA],
        ['admin', () => gw.adminToken],
      ] as const) {
        const o = { token: token(), orgId: unique('no-such-org-') };
        for (const userId of [userA.userId, userB.userId, unique('nobody-')]) {
          for (const [name, run] of headerOps(userId, 'ghost')) expectError(await run(o), 'PERMISSION_DENIED', `${who} / ${name}`);
        }
        const newId = unique('never-');
        expectError(
          await gw.send(AddHumanUserDocument, { input: { userId: newId, profile, email: { email: 'g@example.com' } } }, o),
          'PERMISSION_DENIED',
          `${who} / addHumanUser`,
        );
        expect(await userSeq(newId)).toBeNull();
        expectError(
          await gw.send(AddOrgMemberDocument, { input: { userId: userA.userId, roles: ['ORG_OWNER'] } }, o),
          'PERMISSION_DENIED',
          `${who} / addOrgMember`,
        );
        expect(await orgSeq(o.orgId)).toBeNull();
        expectError(await gw.send(UserDocument, { id: userA.userId }, o), 'PERMISSION_DENIED', `${who} / user`);
      }
      expect(await Promise.all([userA, userB].map((u) => userSeq(u.userId)))).toEqual(before);
    });

    it('addHumanUser: organisation first, then the header, then the caller’s organization', async () => {
      const domainA = (await store().load<Org>('org', orgA))!.state.domain;
      const domainB = (await store().load<Org>('org', orgB))!.state.domain;
      expect(domainA).toBeTruthy();
      const add = (organisation: Record<string, string> | undefined, o: Opts) => {
        const userId = unique('org-');
        return gw
          .send(
            AddHumanUserDocument,
            { input: { userId, profile, email: { email: `${userId}@example.com` }, ...(organisation ? { organisation } : {}) } },
            o,
          )
          .then((res) => ({ res, userId }));
      };
      const denied = async (organisation: Record<string, string> | undefined, o: Opts, label: string) => {
        const { res, userId } = await add(organisation, o);
        expectError(res, 'PERMISSION_DENIED', label);
        expect(await userSeq(userId), label).toBeNull();
      };
      const createdIn = async (organisation: Record<string, string> | undefined, o: Opts, orgId: string, label: string) => {
        const { res, userId } = await add(organisation, o);
        expect(expectOk(res, label).addHumanUser.details.resourceOwner, label).toBe(orgId);
        expect((await stored(userId)).resourceOwner, label).toBe(orgId);
      };

      await denied({ orgId: orgB }, { token: tokenA }, 'owner A, organisation.orgId B');
      await denied({ orgDomain: domainB }, { token: tokenA }, 'owner A, organisation.orgDomain B');
      await denied({ orgId: unique('no-such-org-') }, { token: tokenA }, 'owner A, unknown orgId');
      await denied({ orgId: unique('no-such-org-') }, {}, 'admin, unknown orgId');
      await denied({ orgDomain: `${unique('nowhere')}.example` }, {}, 'admin, unknown orgDomain');
      await createdIn({ orgDomain: domainA }, { token: tokenA }, orgA, 'owner A, orgDomain A');
      await createdIn({ orgId: orgA }, { token: tokenA }, orgA, 'owner A, orgId A');
      // organisation wins over the header, both ways
      await createdIn({ orgId: orgA }, { token: tokenA, orgId: orgB }, orgA, 'owner A, orgId A, header B');
      await createdIn({ orgDomain: domainA }, { token: tokenA, orgId: orgB }, orgA, 'owner A, orgDomain A, header B');
      await denied({ orgId: orgB }, { token: tokenA, orgId: orgA }, 'owner A, orgId B, header A');
      await createdIn({ orgDomain: domainB }, { orgId: orgA }, orgB, 'admin, orgDomain B, header A');
      await createdIn(undefined, { orgId: orgB }, orgB, 'admin, header B');
    });

    it('setEmail, verifyEmail and verifyPhone find the user anywhere and check the permission in its organization', async () => {
      const target = await addUser(orgB);
      const before = await userSeq(target.userId);
      const email = () => `${unique('cross')}@example.com`;
      for (const o of [{ token: tokenA }, { token: tokenA, orgId: orgA }, { token: tokenA, orgId: orgB }] as Opts[]) {
        const label = `owner A, header ${o.orgId ?? 'none'}`;
        expectError(
          await gw.send(SetEmailDocument, { input: { userId: target.userId, email: email(), returnCode: true } }, o),
          'PERMISSION_DENIED',
          `${label} / setEmail`,
        );
        expectError(
          await gw.send(VerifyEmailDocument, { input: { userId: target.userId, verificationCode: target.emailCode } }, o),
          'PERMISSION_DENIED',
          `${label} / verifyEmail`,
        );
        expectError(
          await gw.send(VerifyPhoneDocument, { input: { userId: target.userId, verificationCode: target.phoneCode } }, o),
          'PERMISSION_DENIED',
          `${label} / verifyPhone`,
        );
      }
      expect(await userSeq(target.userId)).toBe(before);

      for (const o of [{ token: tokenA }, {}] as Opts[]) {
        const nobody = unique('nobody-');
        expectError(await gw.send(SetEmailDocument, { input: { userId: nobody, email: email() } }, o), 'NOT_FOUND', 'setEmail nobody');
        expectError(
          await gw.send(VerifyEmailDocument, { input: { userId: nobody, verificationCode: 'ABC123' } }, o),
          'NOT_FOUND',
          'verifyEmail nobody',
        );
        expectError(
          await gw.send(VerifyPhoneDocument, { input: { userId: nobody, verificationCode: 'ABC123' } }, o),
          'NOT_FOUND',
          'verifyPhone nobody',
        );
      }

      // The user's own organization decides, whatever the header says.
      const own = await addUser(orgA);
      const o = { token: tokenA, orgId: orgB };
      expect(
        expectOk(await gw.send(VerifyEmailDocument, { input: { userId: own.userId, verificationCode: own.emailCode } }, o)).verifyEmail
          .details.resourceOwner,
      ).toBe(orgA);
      expect(
        expectOk(await gw.send(VerifyPhoneDocument, { input: { userId: own.userId, verificationCode: own.phoneCode } }, o)).verifyPhone
          .details.resourceOwner,
      ).toBe(orgA);
      expect(
        expectOk(await gw.send(SetEmailDocument, { input: { userId: own.userId, email: email(), isVerified: true } }, o)).setEmail.details
          .resourceOwner,
      ).toBe(orgA);

      // The administrator reaches the user of B with no header; the refused attempts left the codes valid.
      expect(
        expectOk(await gw.send(VerifyEmailDocument, { input: { userId: target.userId, verificationCode: target.emailCode } })).verifyEmail
          .details.resourceOwner,
      ).toBe(orgB);
      expect(
        expectOk(await gw.send(VerifyPhoneDocument, { input: { userId: target.userId, verificationCode: target.phoneCode } })).verifyPhone
          .details.resourceOwner,
      ).toBe(orgB);
      expect(
        expectOk(await gw.send(SetEmailDocument, { input: { userId: target.userId, email: email(), returnCode: true } })).setEmail.details
          .resourceOwner,
      ).toBe(orgB);
    });

    it('addOrgMember acts in the acting organization only', async () => {
      const someone = await addUser(orgA);
      const res = await gw.send(
        AddOrgMemberDocument,
        { input: { userId: someone.userId, roles: ['ORG_USER_MANAGER'] } },
        { token: tokenA },
      );
      expect(expectOk(res).addOrgMember.details.resourceOwner).toBe(orgA);
      expect(rolesOf((await store().load<Org>('org', orgA))!.state, someone.userId)).toEqual(['ORG_USER_MANAGER']);
      expect(rolesOf((await store().load<Org>('org', orgB))!.state, someone.userId)).toEqual([]);
      expect(rolesOf((await store().load<Org>('org', gw.defaultOrgId))!.state, someone.userId)).toEqual([]);
    });
  });

  describe('4. the caller itself', () => {
    it('updateMyProfile: a plain user changes itself and nobody else', async () => {
      const plain = await addUser();
      const other = await addUser();
      const token = await gw.tokenFor(plain.userId);
      const before = { plain: await userSeq(plain.userId), other: await userSeq(other.userId), admin: await userSeq(gw.adminId) };
      const input = { firstName: 'Self', lastName: 'Made', nickName: 'me', displayName: 'Self Made' };
      const d = expectOk(await gw.send(UpdateMyProfileDocument, { input }, { token })).updateMyProfile.details;
      expect(d.resourceOwner).toBe(gw.defaultOrgId);
      expect(Number(d.sequence)).toBe(before.plain! + 1);
      expect((await stored(plain.userId)).state.profile).toMatchObject(input);
      expect(await userSeq(other.userId)).toBe(before.other);
      expect(await userSeq(gw.adminId)).toBe(before.admin);

      // a header naming another organization does not redirect it: still the caller, still nobody else
      const orgC = await addOrg();
      const again = { ...input, firstName: 'Still' };
      expect(
        expectOk(await gw.send(UpdateMyProfileDocument, { input: again }, { token, orgId: orgC })).updateMyProfile.details.resourceOwner,
      ).toBe(gw.defaultOrgId);
      expect((await stored(plain.userId)).state.profile.firstName).toBe('Still');
      expect(await userSeq(other.userId)).toBe(before.other);
    });

    it('a plain user may change its own email and verify its own codes, but neither mark the email verified nor take its code', async () => {
      const plain = await addUser();
      const token = await gw.tokenFor(plain.userId);
      expect(
        expectOk(await gw.send(VerifyPhoneDocument, { input: { userId: plain.userId, verificationCode: plain.phoneCode } }, { token }))
          .verifyPhone.details.resourceOwner,
      ).toBe(gw.defaultOrgId);
      expect((await stored(plain.userId)).state.phone?.isVerified).toBe(true);
      expectOk(await gw.send(VerifyEmailDocument, { input: { userId: plain.userId, verificationCode: plain.emailCode } }, { token }));
      expect((await stored(plain.userId)).state.email.isVerified).toBe(true);

      const newEmail = `${unique('mine')}@example.com`;
      const set = expectOk(await gw.send(SetEmailDocument, { input: { userId: plain.userId, email: newEmail } }, { token })).setEmail;
      expect(set.details.resourceOwner).toBe(gw.defaultOrgId);
      expect(set.verificationCode).toBeNull();
      expect((await stored(plain.userId)).state.email).toEqual({ email: newEmail, isVerified: false });

      // Either would verify an address without proving the mailbox.
      const before = await userSeq(plain.userId);
      expectError(
        await gw.send(
          SetEmailDocument,
          { input: { userId: plain.userId, email: `${unique('mine')}@example.com`, isVerified: true } },
          { token },
        ),
        'PERMISSION_DENIED',
        'self isVerified',
      );
      expectError(
        await gw.send(
          SetEmailDocument,
          { input: { userId: plain.userId, email: `${unique('mine')}@example.com`, returnCode: true } },
          { token },
        ),
        'PERMISSION_DENIED',
        'self returnCode',
      );
      expect(await userSeq(plain.userId)).toBe(before);
      expect((await stored(plain.userId)).state.email).toEqual({ email: newEmail, isVerified: false });
    });

    it('a plain user may not use the user.write operations on itself', async () => {
      const plain = await addUser();
      const token = await gw.tokenFor(plain.userId);
      const before = await userSeq(plain.userId);
      expectError(
        await gw.send(UpdateHumanProfileDocument, { input: { userId: plain.userId, firstName: 'A', lastName: 'B' } }, { token }),
        'PERMISSION_DENIED',
        'updateHumanProfile self',
      );
      expectError(
        await gw.send(
          UpdateHumanPhoneDocument,
          { input: { userId: plain.userId, phone: '+41791112233', isPhoneVerified: true } },
          { token },
        ),
        'PERMISSION_DENIED',
        'updateHumanPhone self',
      );
      expectError(
        await gw.send(SetHumanPasswordDocument, { input: { userId: plain.userId, password: 'Str0ng!pass' } }, { token }),
        'PERMISSION_DENIED',
        'setHumanPassword self',
      );
      expect(await userSeq(plain.userId)).toBe(before);
    });

    it('a user holding user.write in its organization may mark its own email verified', async () => {
      const orgId = await addOrg();
      const manager = await addUser(orgId);
      await grant(orgId, manager.userId, ['ORG_USER_MANAGER']);
      const token = await gw.tokenFor(manager.userId);
      const email = `${unique('mgr')}@example.com`;
      expectOk(await gw.send(SetEmailDocument, { input: { userId: manager.userId, email, isVerified: true } }, { token }));
      expect((await stored(manager.userId)).state.email).toEqual({ email, isVerified: true });
    });
  });

  describe('5. the user query', () => {
    let orgId: string;
    let plain: Created;
    let colleague: Created;
    beforeAll(async () => {
      orgId = await addOrg();
      plain = await addUser(orgId);
      colleague = await addUser(orgId);
    });

    it('self: the user, for anyone', async () => {
      const token = await gw.tokenFor(plain.userId);
      expect(expectOk(await gw.send(UserDocument, { id: plain.userId }, { token })).user?.id).toBe(plain.userId);
      expect(expectOk(await gw.send(MeDocument, {}, { token })).me.id).toBe(plain.userId);
    });

    it.each(['ORG_OWNER', 'ORG_USER_MANAGER', 'ORG_USER_VIEWER'])(
      'a member holding %s (user.read) reads the users of its organization',
      async (role) => {
        const member = await addUser(orgId);
        await grant(orgId, member.userId, [role]);
        const token = await gw.tokenFor(member.userId);
        const user = expectOk(await gw.send(UserDocument, { id: colleague.userId }, { token })).user;
        expect(user?.id).toBe(colleague.userId);
        expect(user?.resourceOwner).toBe(orgId);
      },
    );

    it.each(['ORG_SETTINGS_MANAGER', 'ORG_PROJECT_CREATOR'])(
      'a member holding %s (no user.read) reads no other user: PERMISSION_DENIED, as for an unknown id',
      async (role) => {
        const member = await addUser(orgId);
        await grant(orgId, member.userId, [role]);
        const token = await gw.tokenFor(member.userId);
        expectError(await gw.send(UserDocument, { id: colleague.userId }, { token }), 'PERMISSION_DENIED', `${role} reads colleague`);
        expectError(await gw.send(UserDocument, { id: unique('nobody-') }, { token }), 'PERMISSION_DENIED', `${role} reads unknown`);
        expect(expectOk(await gw.send(UserDocument, { id: member.userId }, { token })).user?.id).toBe(member.userId);
      },
    );

    it('a user of another organization, or of none, is null', async () => {
      const owner = await addUser(orgId);
      await grant(orgId, owner.userId, ['ORG_OWNER']);
      const token = await gw.tokenFor(owner.userId);
      const elsewhere = await addUser();
      expect(expectOk(await gw.send(UserDocument, { id: elsewhere.userId }, { token })).user).toBeNull();
      expect(expectOk(await gw.send(UserDocument, { id: unique('nobody-') }, { token })).user).toBeNull();
      // the administrator acts in the default organization without the header, in orgId with it
      expect(expectOk(await gw.send(UserDocument, { id: colleague.userId })).user).toBeNull();
      expect(expectOk(await gw.send(UserDocument, { id: colleague.userId }, { orgId })).user?.id).toBe(colleague.userId);
    });

    it('a plain user asking for another user of its organization: PERMISSION_DENIED', async () => {
      const token = await gw.tokenFor(plain.userId);
      expectError(await gw.send(UserDocument, { id: colleague.userId }, { token }), 'PERMISSION_DENIED', 'plain reads colleague');
    });
  });

  describe('6. the error body and the HTTP status (DESIGN.md section 7)', () => {
    it('401, 403, 404, 409 and 400 each carry code, grpcCode, details and httpStatus, answered with HTTP 200', async () => {
      const u = await addUser();
      const plainToken = await gw.tokenFor(u.userId);
      const unauth = expectError(await gw.send(MeDocument, {}, { token: null }), 'UNAUTHENTICATED');
      expect(unauth.extensions!.details).toEqual([]);
      expectError(await gw.send(AddOrganizationDocument, { input: { name: unique('X ') } }, { token: plainToken }), 'PERMISSION_DENIED');
      expectError(await gw.send(SetHumanPasswordDocument, { input: { userId: unique('nobody-'), password: 'Str0ng!pass' } }), 'NOT_FOUND');
      expectError(
        await gw.send(AddHumanUserDocument, { input: { userId: u.userId, profile, email: { email: 'dup@example.com' } } }),
        'ALREADY_EXISTS',
      );
      const p = { userId: u.userId, firstName: 'Same', lastName: 'Profile' };
      expectOk(await gw.send(UpdateHumanProfileDocument, { input: p }));
      expectError(await gw.send(UpdateHumanProfileDocument, { input: p }), 'FAILED_PRECONDITION');
      const bad = expectError(
        await gw.send(UpdateHumanPhoneDocument, { input: { userId: u.userId, phone: 'not a phone' } }),
        'INVALID_ARGUMENT',
      );
      const violations = bad.extensions!.details!.flatMap((d: any) => d.fieldViolations ?? []).map((v: any) => v.field);
      expect(
        violations.some((f: string) => f.endsWith('phone')),
        JSON.stringify(bad),
      ).toBe(true);
      const wrongCode = expectError(
        await gw.send(VerifyEmailDocument, {
          input: { userId: u.userId, verificationCode: u.emailCode === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ' },
        }),
        'INVALID_ARGUMENT',
      );
      expect(wrongCode.extensions!.details![0]['@type']).toContain('BadRequest');
    });

    it('on application/graphql-response+json: 401 without a valid token, 400 for an invalid document, 200 for a failed field', async () => {
      const accept = { accept: 'application/graphql-response+json' };
      const media = (res: Response<unknown>) => res.headers.get('content-type')?.split(';')[0];
      const anonymous = await gw.send(MeDocument, {}, { token: null, headers: accept });
      expect(anonymous.status, anonymous.text).toBe(401);
      expect(media(anonymous)).toBe('application/graphql-response+json');
      expect(onlyCode(anonymous)).toEqual({ code: 'UNAUTHENTICATED', httpStatus: 401 });
      const invalid = await gw.raw({ query: '{ me { noSuchField } }' }, accept);
      expect(invalid.status, invalid.text).toBe(400);
      expect(invalid.data).toBeUndefined();
      expect(onlyCode(invalid)).toEqual({ code: 'INVALID_ARGUMENT', httpStatus: 400 });
      const u = await addUser();
      const duplicate = await gw.send(
        AddHumanUserDocument,
        { input: { userId: u.userId, profile, email: { email: 'dup@example.com' } } },
        { headers: accept },
      );
      expect(duplicate.status, duplicate.text).toBe(200);
      expect(duplicate.data?.addHumanUser ?? null).toBeNull();
      expect(onlyCode(duplicate)).toEqual({ code: 'ALREADY_EXISTS', httpStatus: 409 });
      // The same invalid document on application/json: 200, as every request that was read.
      const invalidJson = await gw.raw({ query: '{ me { noSuchField } }' });
      expect(invalidJson.status, invalidJson.text).toBe(200);
      expect(onlyCode(invalidJson)).toEqual({ code: 'INVALID_ARGUMENT', httpStatus: 400 });
    });

    it('no stack, driver message or token text reaches the client on an authentication failure', async () => {
      const res = await gw.send(MeDocument, {}, { token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' });
      const err = expectError(res, 'UNAUTHENTICATED');
      expect(res.text).not.toMatch(/\bat .*\.ts:\d+/);
      expect(err.extensions).not.toHaveProperty('stacktrace');
      expect(err.extensions).not.toHaveProperty('originalError');
    });
  });

  describe('7. no escalation through another account (DESIGN.md section 6)', () => {
    /** The operations that change another user, aimed at `userId`, each with an input every rule accepts. */
    const changes = (userId: string, orgId?: string): [string, (token: string) => Promise<Response<any>>][] => [
      [
        'setHumanPassword',
        (token) =>
          gw.send(SetHumanPasswordDocument, { input: { userId, password: 'Takeover-1!', noChangeRequired: true } }, { token, orgId }),
      ],
      [
        'setEmail',
        (token) => gw.send(SetEmailDocument, { input: { userId, email: `${unique('mallory')}@example.com`, isVerified: true } }, { token }),
      ],
      [
        'updateHumanPhone',
        (token) =>
          gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: '+41 79 666 66 66', isPhoneVerified: true } }, { token, orgId }),
      ],
      [
        'updateHumanProfile',
        (token) =>
          gw.send(UpdateHumanProfileDocument, { input: { userId, firstName: 'Mallory', lastName: unique('Evil') } }, { token, orgId }),
      ],
      ['registerU2F', (token) => gw.send(RegisterU2FDocument, { input: { userId } }, { token })],
    ];
    const managerOf = async (orgId: string, roles = ['ORG_USER_MANAGER']) => {
      const m = await addUser(orgId === gw.defaultOrgId ? undefined : orgId);
      await grant(orgId, m.userId, roles);
      return { ...m, token: await gw.tokenFor(m.userId) };
    };

    async function denied(target: string, token: string, label: string) {
      const before = await stored(target);
      for (const [name, run] of changes(target)) expectError(await run(token), 'PERMISSION_DENIED', `${label}: ${name}`);
      const after = await stored(target);
      expect(after.sequence, `${label}: nothing written`).toBe(before.sequence);
      expect(after.state).toEqual(before.state);
    }
    /** user.credential.write (registerU2F) belongs to owners, not to user managers. */
    async function allowed(
      target: string,
      token: string,
      label: string,
      { credentials = true, orgId = undefined as string | undefined } = {},
    ) {
      for (const [name, run] of changes(target, orgId)) {
        if (name === 'registerU2F' && !credentials) continue;
        expectOk(await run(token), `${label}: ${name}`);
      }
      expect((await stored(target)).state.passwordHash, label).not.toBeNull();
    }

    it('an ORG_USER_MANAGER of the default organization cannot take over the IAM_OWNER: PERMISSION_DENIED, nothing written', async () => {
      const manager = await managerOf(gw.defaultOrgId);
      await denied(gw.adminId, manager.token, 'user manager on IAM_OWNER');
    });

    it('nor an ORG_OWNER of the same organization, nor a user who is ORG_OWNER of another organization', async () => {
      const orgA = await addOrg();
      const orgB = await addOrg();
      const manager = await managerOf(orgA);
      const owner = await managerOf(orgA, ['ORG_OWNER']);
      await denied(owner.userId, manager.token, 'user manager on ORG_OWNER of its org');
      // a user of A who owns B: A's manager (and A's owner) hold nothing in B
      const ownerOfB = await addUser(orgA);
      await grant(orgB, ownerOfB.userId, ['ORG_OWNER']);
      await denied(ownerOfB.userId, manager.token, 'user manager of A on owner of B');
      await denied(ownerOfB.userId, owner.token, 'owner of A on owner of B');
      // and nobody but an IAM_OWNER may change the IAM_OWNER, not even the owner of its organization
      await denied(gw.adminId, (await managerOf(gw.defaultOrgId, ['ORG_OWNER'])).token, 'ORG_OWNER on IAM_OWNER');
    });

    it('a user manager still manages ordinary users and other user managers; an owner manages managers; the IAM_OWNER everyone', async () => {
      const orgA = await addOrg();
      const manager = await managerOf(orgA);
      const owner = await managerOf(orgA, ['ORG_OWNER']);
      await allowed((await addUser(orgA)).userId, manager.token, 'user manager on a plain user', { credentials: false });
      await allowed((await managerOf(orgA)).userId, manager.token, 'user manager on a user manager', { credentials: false });
      await allowed(
        (await managerOf(orgA, ['ORG_SETTINGS_MANAGER', 'ORG_USER_MANAGER'])).userId,
        owner.token,
        'owner on a settings manager',
      );
      await allowed(owner.userId, gw.adminToken, 'IAM_OWNER on an owner', { orgId: orgA });
      // a user can still change itself whatever it holds
      expectOk(
        await gw.send(
          SetEmailDocument,
          { input: { userId: owner.userId, email: `${unique('self')}@example.com`, returnCode: true } },
          { token: owner.token },
        ),
        'self',
      );
    });

    it('granting a role is recorded on the user before the grant, and a grant that changes nothing writes nothing', async () => {
      const orgA = await addOrg();
      const someone = await addUser(orgA);
      await grant(orgA, someone.userId, ['ORG_USER_MANAGER']);
      expect((await stored(someone.userId)).state.memberOf).toEqual([orgA]);
      const before = { user: await userSeq(someone.userId), org: await orgSeq(orgA) };
      expectError(
        await gw.send(AddOrgMemberDocument, { input: { userId: someone.userId, roles: ['ORG_USER_MANAGER'] } }, { orgId: orgA }),
        'FAILED_PRECONDITION',
      );
      expect({ user: await userSeq(someone.userId), org: await orgSeq(orgA) }).toEqual(before);
    });
  });
});
