// What the upstream answers, as the GraphQL client of a gateway in upstream mode gets it
// (src/upstream/errors.ts): the same code, gRPC code and message as the embedded mode's for the
// same request, with ZITADEL's ErrorDetail id kept; and the mapping itself, table by table, on
// real ConnectErrors carrying their details as they come off the wire (type and bytes).
import { create, toBinary, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalTokenSigner } from '../src/auth/tokens.ts';
import { loadConfig } from '../src/config.ts';
import { AppError, BAD_REQUEST_TYPE } from '../src/errors.ts';
import { BadRequestSchema, RetryInfoSchema } from '../src/proto/error-details.ts';
import { ERROR_DETAIL_TYPE, fromUpstream, inputFieldPath, type FieldRenames } from '../src/upstream/errors.ts';
import { spawnGateway, type ChildGateway } from './support/child-gateway.ts';
import { freePort, readResponse } from './support/net.ts';
import { TEST_DEFAULTS } from './support/test-defaults.ts';
import { startFront, type Front } from './support/upstream-front.ts';

const ADD_USER = `mutation($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }`;
const UPDATE_PROFILE = `mutation($input: UpdateHumanProfileInput!) { updateHumanProfile(input: $input) { details { sequence } } }`;
const VERIFY_EMAIL = `mutation($input: VerifyEmailInput!) { verifyEmail(input: $input) { details { sequence } } }`;
const RESEND_EMAIL = `mutation($input: ResendEmailCodeInput!) { resendEmailCode(input: $input) { details { sequence } } }`;
const ME = `query { me { id } }`;

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const newUser = (username: string, isVerified = true) => ({
  username,
  profile: { firstName: 'Ada', lastName: 'Lovelace' },
  email: { email: `${username}@example.com`, ...(isVerified ? { isVerified: true } : {}) },
});

type Body = { message: string; extensions: { code: string; grpcCode: number; details?: any[]; [k: string]: unknown } };

async function post(url: string, query: string, variables: unknown, token: string | null): Promise<{ status: number; error: Body }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const answer = await readResponse(res);
  const errors = answer.json?.errors;
  if (!errors || errors.length !== 1) throw new Error(`expected one error, got ${answer.text}`);
  return { status: answer.status, error: errors[0] };
}

/** The details without ZITADEL's ErrorDetail (the wire's, which the embedded GraphQL face does not give) and RetryInfo's delay. */
const comparable = (details: any[] = []) =>
  details.filter((d) => d['@type'] !== ERROR_DETAIL_TYPE).map((d) => (d.retryDelay ? { ...d, retryDelay: 'some' } : d));

describe('upstream mode: the upstream’s errors reach the GraphQL client as the embedded mode gives them', () => {
  let embedded: ChildGateway;
  let front: Front;
  let down: Front;
  let tokenFor: (userId: string) => Promise<string>;
  let existing: string;
  let verifiedId: string;
  /** Users with an email code pending: one for the embedded gateway's resends, one for the front's. */
  const pending: Record<'embedded' | 'front', string> = { embedded: '', front: '' };

  beforeAll(async () => {
    embedded = await spawnGateway({ env: { RESEND_LIMIT_PER_HOUR: '1' } });
    front = await startFront(embedded, embedded.base);
    down = await startFront(embedded, `http://127.0.0.1:${await freePort()}`);
    const signer = createLocalTokenSigner(loadConfig({ ...TEST_DEFAULTS, DATA_DIR: embedded.dataDir }));
    tokenFor = (id) => signer.sign(id);
    existing = unique('exists');
    const added = await embedded.post({ query: ADD_USER, variables: { input: newUser(existing) } });
    verifiedId = added.json.data.addHumanUser.userId;
    for (const side of ['embedded', 'front'] as const) {
      const user = await embedded.post({ query: ADD_USER, variables: { input: newUser(unique('pending'), false) } });
      expect(user.json.errors, user.text).toBeUndefined();
      pending[side] = user.json.data.addHumanUser.userId;
    }
  });
  afterAll(async () => {
    await front?.close();
    await down?.close();
    await embedded?.stop();
  });

  type Side = 'embedded' | 'front';
  type Row = {
    name: string;
    code: string;
    grpcCode: number;
    /** The request, for one side; `before` runs first on that side (e.g. the resend the limit allows). */
    request: (side: Side) => Promise<{ query: string; variables: unknown; token: string | null; before?: () => Promise<unknown> }>;
    /** The id of ZITADEL's ErrorDetail the front keeps (the upstream's wire face gives one for this error). */
    detailId?: RegExp;
    /** The front refuses it itself: no call reaches the upstream (else: at least one did). */
    noCall?: boolean;
  };
  const admin = () => embedded.adminToken;
  const rows: Row[] = [
    // Not a JWT: an opaque token, which only the upstream can judge (forwarded, refused there).
    {
      name: 'a garbage token',
      code: 'UNAUTHENTICATED',
      grpcCode: 16,
      detailId: /./,
      request: async () => ({ query: ME, variables: {}, token: 'garbage' }),
    },
    {
      name: 'no token',
      code: 'UNAUTHENTICATED',
      grpcCode: 16,
      noCall: true,
      request: async () => ({ query: ME, variables: {}, token: null }),
    },
    {
      name: 'a user without roles adding a user',
      code: 'PERMISSION_DENIED',
      grpcCode: 7,
      detailId: /./,
      request: async () => ({ query: ADD_USER, variables: { input: newUser(unique('denied')) }, token: await tokenFor(verifiedId) }),
    },
    {
      name: 'a user that does not exist',
      code: 'NOT_FOUND',
      grpcCode: 5,
      detailId: /./,
      request: async () => ({
        query: UPDATE_PROFILE,
        variables: { input: { userId: '999999999999999999', firstName: 'No', lastName: 'One' } },
        token: admin(),
      }),
    },
    {
      name: 'a duplicate username',
      code: 'ALREADY_EXISTS',
      grpcCode: 6,
      detailId: /./,
      request: async () => ({ query: ADD_USER, variables: { input: newUser(existing) }, token: admin() }),
    },
    {
      name: 'verifyEmail with no code pending',
      code: 'FAILED_PRECONDITION',
      grpcCode: 9,
      detailId: /./,
      request: async () => ({
        query: VERIFY_EMAIL,
        variables: { input: { userId: verifiedId, verificationCode: 'ABCDEF' } },
        token: admin(),
      }),
    },
    {
      name: 'resendEmailCode over RESEND_LIMIT_PER_HOUR',
      code: 'RESOURCE_EXHAUSTED',
      grpcCode: 8,
      detailId: /./,
      request: async (side) => {
        const variables = { input: { userId: pending[side] } };
        const url = side === 'embedded' ? embedded.url : front.url;
        return { query: RESEND_EMAIL, variables, token: admin(), before: () => fetchOk(url, RESEND_EMAIL, variables, admin()) };
      },
    },
    // None found that the front's rules (the commands' own) pass and the upstream refuses: the front refuses it, with no call.
    {
      name: 'an email the input rules refuse',
      code: 'INVALID_ARGUMENT',
      grpcCode: 3,
      noCall: true,
      request: async () => ({
        query: ADD_USER,
        variables: { input: { ...newUser(unique('bad')), email: { email: 'not an email' } } },
        token: admin(),
      }),
    },
  ];

  for (const row of rows)
    it(`${row.code}: ${row.name}`, async () => {
      const answers: Record<Side, { status: number; error: Body }> = {} as any;
      const callsBefore = await front.calls('');
      for (const side of ['embedded', 'front'] as const) {
        const { query, variables, token, before } = await row.request(side);
        await before?.();
        answers[side] = await post(side === 'embedded' ? embedded.url : front.url, query, variables, token);
      }
      const [want, got] = [answers.embedded, answers.front];
      expect(want.error.extensions).toMatchObject({ code: row.code, grpcCode: row.grpcCode });
      expect(got.error.extensions).toMatchObject({ code: row.code, grpcCode: row.grpcCode });
      expect(got.error.message).toBe(want.error.message);
      expect(got.status).toBe(want.status);
      // Both 200 (executed requests): the REST status the failure maps to is in the body.
      expect(got.error.extensions.httpStatus).toBe(want.error.extensions.httpStatus);
      expect(comparable(got.error.extensions.details)).toEqual(comparable(want.error.extensions.details));
      if (row.code === 'RESOURCE_EXHAUSTED')
        expect(got.error.extensions.details).toContainEqual(
          expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.RetryInfo' }),
        );
      if (row.detailId)
        expect(got.error.extensions.details).toContainEqual(
          expect.objectContaining({ '@type': ERROR_DETAIL_TYPE, id: expect.stringMatching(row.detailId) }),
        );
      if (row.code === 'INVALID_ARGUMENT')
        expect(got.error.extensions.details).toContainEqual({
          '@type': BAD_REQUEST_TYPE,
          fieldViolations: [expect.objectContaining({ field: 'input.email.email' })],
        });
      if (row.noCall) expect(await front.calls('')).toBe(callsBefore);
      else expect(await front.calls('')).toBeGreaterThan(callsBefore);
    });

  it('UNAVAILABLE: nothing listens where the upstream should be', async () => {
    const { status, error } = await post(down.url, ADD_USER, { input: newUser(unique('down')) }, embedded.adminToken);
    expect(error.extensions).toMatchObject({ code: 'UNAVAILABLE', grpcCode: 14 });
    expect(status).toBe(200);
    expect(error.extensions.httpStatus).toBe(503);
    expect(error.message).toBe('The connection to the upstream failed, try again');
  });
});

async function fetchOk(url: string, query: string, variables: unknown, token: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const answer = await readResponse(res);
  expect(answer.json?.errors, answer.text).toBeUndefined();
}

/** A ConnectError as connect's clients build one from an answer: its details as they came, type name and bytes. */
function withDetails(message: string, code: Code, details: { type: string; value: Uint8Array }[]): ConnectError {
  const err = new ConnectError(message, code);
  err.details.push(...details);
  return err;
}

/** A detail as it comes off the wire: its type name and its bytes. */
const wire = (schema: DescMessage, init: Record<string, unknown>) => ({
  type: schema.typeName,
  value: toBinary(schema, create(schema, init as never)),
});

describe('inputFieldPath: the wire’s field paths as the GraphQL input’s', () => {
  const ADD: FieldRenames = {
    organisation: 'organization',
    'profile.firstName': 'profile.given_name',
    'profile.lastName': 'profile.family_name',
  };
  const cases: [string, FieldRenames, string][] = [
    ['user_id', {}, 'input.userId'],
    ['email.email', {}, 'input.email.email'],
    ['metadata[0].key', {}, 'input.metadata.0.key'],
    ['idp_links[12].user_name', {}, 'input.idpLinks.12.userName'],
    ['profile.given_name', ADD, 'input.profile.firstName'],
    ['profile.family_name', ADD, 'input.profile.lastName'],
    ['profile.nick_name', ADD, 'input.profile.nickName'],
    ['organization', ADD, 'input.organisation'],
    ['organization.org_id', ADD, 'input.organisation.orgId'],
    ['organizations', ADD, 'input.organizations'],
    ['x.y.z', { a: 'x', 'a.b': 'x.y' }, 'input.a.b.z'],
    ['x[2].y', { a: 'x' }, 'input.a.2.y'],
  ];
  it.each(cases)('%s (renames %j) -> %s', (wirePath, renames, expected) => {
    expect(inputFieldPath(wirePath, renames)).toBe(expected);
  });
});

describe('fromUpstream: a ConnectError with its details as the embedded mode’s error', () => {
  const detail = (id: string, message: string) => wire(ErrorDetailSchema, { id, message });
  const cases: {
    name: string;
    err: ConnectError;
    renames?: FieldRenames;
    code: string;
    message: string;
    details: unknown[];
  }[] = [
    {
      name: 'NOT_FOUND, the " (ID)" ZITADEL appends cut, the ErrorDetail kept',
      err: withDetails('User not found (NOT_FOUND-u1)', Code.NotFound, [detail('NOT_FOUND-u1', 'User not found')]),
      code: 'NOT_FOUND',
      message: 'User not found',
      details: [{ '@type': ERROR_DETAIL_TYPE, id: 'NOT_FOUND-u1', message: 'User not found' }],
    },
    {
      name: 'a message that does not end with its id is left as it is',
      err: withDetails('Errors.User.AlreadyExists', Code.AlreadyExists, [detail('COMMAND-x', 'Errors.User.AlreadyExists')]),
      code: 'ALREADY_EXISTS',
      message: 'Errors.User.AlreadyExists',
      details: [{ '@type': ERROR_DETAIL_TYPE, id: 'COMMAND-x', message: 'Errors.User.AlreadyExists' }],
    },
    {
      name: 'INVALID_ARGUMENT: field violations at the input’s paths, the message rebuilt from them',
      err: withDetails('Invalid input: profile.given_name: must not be empty', Code.InvalidArgument, [
        wire(BadRequestSchema, {
          fieldViolations: [
            { field: 'profile.given_name', description: 'must not be empty' },
            { field: 'metadata[1].key', description: 'too long' },
          ],
        }),
        detail('INVALID-1', 'Invalid input'),
      ]),
      renames: { 'profile.firstName': 'profile.given_name' },
      code: 'INVALID_ARGUMENT',
      message: 'Invalid input: input.profile.firstName: must not be empty; input.metadata.1.key: too long',
      details: [
        {
          '@type': BAD_REQUEST_TYPE,
          fieldViolations: [
            { field: 'input.profile.firstName', description: 'must not be empty' },
            { field: 'input.metadata.1.key', description: 'too long' },
          ],
        },
        { '@type': ERROR_DETAIL_TYPE, id: 'INVALID-1', message: 'Invalid input' },
      ],
    },
    {
      name: 'RESOURCE_EXHAUSTED keeps RetryInfo',
      err: withDetails('Too many codes sent', Code.ResourceExhausted, [
        wire(RetryInfoSchema, { retryDelay: { seconds: 3600n, nanos: 0 } }),
      ]),
      code: 'RESOURCE_EXHAUSTED',
      message: 'Too many codes sent',
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3600s' }],
    },
    {
      name: 'ABORTED answered by the upstream (a conflict) as FAILED_PRECONDITION',
      err: new ConnectError('Errors.Concurrent', Code.Aborted),
      code: 'FAILED_PRECONDITION',
      message: 'Errors.Concurrent',
      details: [],
    },
    {
      name: 'OUT_OF_RANGE as INVALID_ARGUMENT',
      err: new ConnectError('page too far', Code.OutOfRange),
      code: 'INVALID_ARGUMENT',
      message: 'page too far',
      details: [],
    },
    {
      name: 'DEADLINE_EXCEEDED as UNAVAILABLE, in the gateway’s words',
      err: new ConnectError('the operation timed out', Code.DeadlineExceeded),
      code: 'UNAVAILABLE',
      message: 'The upstream did not answer in time (ZITADEL_TIMEOUT_MS); a change may or may not have been made',
      details: [],
    },
    {
      name: 'UNAVAILABLE',
      err: new ConnectError('ZITADEL is starting', Code.Unavailable),
      code: 'UNAVAILABLE',
      message: 'ZITADEL is starting',
      details: [],
    },
    {
      name: 'UNAUTHENTICATED',
      err: new ConnectError('token invalid', Code.Unauthenticated),
      code: 'UNAUTHENTICATED',
      message: 'token invalid',
      details: [],
    },
    {
      name: 'PERMISSION_DENIED',
      err: new ConnectError('No matching permissions found', Code.PermissionDenied),
      code: 'PERMISSION_DENIED',
      message: 'No matching permissions found',
      details: [],
    },
  ];
  it.each(cases)('$name', ({ err, renames, code, message, details }) => {
    const mapped = fromUpstream(err, renames);
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ code, message });
    expect((mapped as AppError).details).toEqual(details);
  });

  it.each([Code.Internal, Code.Unknown, Code.Unimplemented, Code.DataLoss])(
    '%s: the gateway’s own INTERNAL (a plain Error naming the code and the ErrorDetail id)',
    (code) => {
      const mapped = fromUpstream(withDetails('boom', code, [detail('INTERNAL-9', 'boom')]));
      expect(mapped).not.toBeInstanceOf(AppError);
      expect((mapped as Error).message).toBe(`upstream answered ${Code[code]}: boom (INTERNAL-9)`);
    },
  );

  it('what is not a ConnectError is left as it is', () => {
    const err = new TypeError('not a call error');
    expect(fromUpstream(err)).toBe(err);
  });
});
