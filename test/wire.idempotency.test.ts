// Idempotency-Key on the wire API (src/wire/idempotency.ts over the core GraphQL uses,
// src/http/idempotency-core.ts), with ZITADEL's clients over gRPC, gRPC-web and Connect and
// plain fetch for REST: a retry gets the first answer (message or error) again, on any
// transport, marked `idempotency-replayed: true`; another request with the key, a malformed
// key, no caller, concurrent duplicates, a key shared with GraphQL. On the embedded stores and
// on MongoDB-wire + Redis (where the stored records are also read for secrets in clear).
import { create, toJson } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextValues, createHandlerContext, type CallOptions, type HandlerContext } from '@connectrpc/connect';
import { ManagementService, UpdateHumanProfileResponseSchema } from '@zitadel/proto/zitadel/management_pb.js';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../src/errors.ts';
import { createIdempotency, createMemoryIdempotencyStore, type IdempotencyStore } from '../src/http/idempotency-core.ts';
import { newRequestState } from '../src/http/request-state.ts';
import { createLogger } from '../src/log.ts';
import { BadRequestSchema, type BadRequest } from '../src/proto/error-details.ts';
import { requestStateKey } from '../src/wire/context.ts';
import { withIdempotency } from '../src/wire/idempotency.ts';
import { UpdateHumanProfileDocument } from './generated/graphql.ts';
import { onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { failure, wireTransport, zitadelClients, type WireKind } from './support/wire-clients.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;

/** Call options with the key, collecting the response headers. */
function keyed(key: string) {
  const seen: { header?: Headers; trailer?: Headers } = {};
  const options: CallOptions = {
    headers: { 'idempotency-key': key },
    onHeader: (h) => (seen.header = h),
    onTrailer: (t) => (seen.trailer = t),
  };
  return { options, replayed: () => seen.header?.get('idempotency-replayed') ?? null };
}

const replayedError = (err: ConnectError) => err.metadata.get('idempotency-replayed');
const errorDetail = (err: ConnectError) => err.findDetails(ErrorDetailSchema);
const fieldsOf = (err: ConnectError) =>
  err
    .findDetails(BadRequestSchema)
    .flatMap((d) => (d as unknown as BadRequest).fieldViolations.map((v) => v.field))
    .sort();

function idempotencySuite(name: string, env: () => Record<string, string>, redisUrl?: () => string) {
  describe(name, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: env() });
    });
    afterAll(async () => gw?.close());

    const clients = (kind: WireKind = 'grpc', token: string | null = gw.adminToken) =>
      zitadelClients(wireTransport(kind, gw.baseUrl, token));

    /** A new user (no key), to update. */
    async function newUser(firstName = 'Idem'): Promise<string> {
      const added = await clients().users.addHumanUser({
        profile: { givenName: firstName, familyName: 'Potent' },
        email: { email: `${unique('idem')}@example.com`, verification: { case: 'isVerified', value: true } },
      });
      return added.userId;
    }
    const sequenceOf = async (userId: string) => (await clients().users.getUserByID({ userId })).details!.sequence;

    async function outcomes(): Promise<Record<string, number>> {
      const metric = await gw.gateway.metrics.registry.getSingleMetric('gateway_idempotency_total')!.get();
      return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
    }
    const delta = (before: Record<string, number>, after: Record<string, number>) =>
      Object.fromEntries(
        Object.keys(after)
          .map((k) => [k, after[k]! - (before[k] ?? 0)])
          .filter(([, v]) => v !== 0),
      );

    /** PUT /management/v1/users/{id}/profile with plain fetch. */
    async function restProfile(userId: string, body: Record<string, unknown>, key: string) {
      const res = await fetch(`${gw.baseUrl}/management/v1/users/${userId}/profile`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.adminToken}`, 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    }

    it('over gRPC, UpdateHumanProfile twice with one key: the first answer again, replayed, and the user written once', async () => {
      const userId = await newUser();
      const before = await sequenceOf(userId);
      const key = unique('key-');
      const outcomesBefore = await outcomes();
      const request = { userId, firstName: 'Grace', lastName: 'Hopper', displayName: 'Amazing Grace', gender: 1 };

      const one = keyed(key);
      const first = await clients().mgmt.updateHumanProfile(request, one.options);
      expect(one.replayed()).toBeNull();
      expect(first.details!.sequence).toBe(before + 1n);

      const two = keyed(key);
      const again = await clients().mgmt.updateHumanProfile(request, two.options);
      expect(two.replayed()).toBe('true');
      expect(again).toEqual(first);

      expect(await sequenceOf(userId)).toBe(before + 1n);
      expect(delta(outcomesBefore, await outcomes())).toEqual({ stored: 1, replayed: 1 });
    });

    it('the retry may switch transport: over Connect-JSON, gRPC-web and REST it is the same request, replayed', async () => {
      const userId = await newUser();
      const before = await sequenceOf(userId);
      const key = unique('key-');
      const request = { userId, firstName: 'Ada', lastName: 'Lovelace', nickName: 'enchantress', gender: 1 };
      const first = await clients('grpc').mgmt.updateHumanProfile(request, keyed(key).options);

      for (const kind of ['connect-json', 'grpc-web', 'connect'] as const) {
        const retry = keyed(key);
        const again = await clients(kind).mgmt.updateHumanProfile(request, retry.options);
        expect(retry.replayed(), kind).toBe('true');
        expect(again, kind).toEqual(first);
      }

      // The same message as JSON, the user id in the path, the fields in another order.
      const rest = await restProfile(
        userId,
        { gender: 'GENDER_FEMALE', nickName: 'enchantress', lastName: 'Lovelace', firstName: 'Ada' },
        key,
      );
      expect(rest.status, JSON.stringify(rest.body)).toBe(200);
      expect(rest.body).toEqual(toJson(UpdateHumanProfileResponseSchema, first));

      expect(await sequenceOf(userId)).toBe(before + 1n);
    });

    it('a REST replay carries idempotency-replayed: true', async () => {
      const userId = await newUser();
      const key = unique('key-');
      const body = { firstName: 'Rest', lastName: 'Header' };
      expect((await restProfile(userId, body, key)).status).toBe(200);
      const again = await restProfile(userId, body, key);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
    });

    it('the same key with another request is FAILED_PRECONDITION, with the details of every wire error, and writes nothing', async () => {
      const userId = await newUser();
      const key = unique('key-');
      await clients().mgmt.updateHumanProfile({ userId, firstName: 'First', lastName: 'Body' }, keyed(key).options);
      const written = await sequenceOf(userId);

      const other = await failure(clients().mgmt.updateHumanProfile({ userId, firstName: 'Other', lastName: 'Body' }, keyed(key).options));
      expect(other.code).toBe(Code.FailedPrecondition);
      expect(other.rawMessage).toMatch(/^This Idempotency-Key was already used with another request\. \(FAILED_PRECONDITION-\w+\)$/);
      expect(errorDetail(other)[0]?.id).toMatch(/^FAILED_PRECONDITION-/);
      expect(replayedError(other)).toBeNull();

      // Another method with that key is another request too.
      const otherMethod = await failure(
        clients().mgmt.updateHumanPhone({ userId, phone: '+41791234567', isPhoneVerified: true }, keyed(key).options),
      );
      expect(otherMethod.code).toBe(Code.FailedPrecondition);

      const rest = await restProfile(userId, { firstName: 'Rest', lastName: 'Body' }, key);
      expect(rest.status).toBe(409); // FAILED_PRECONDITION, as SPEC.md lists it
      expect(rest.body.code).toBe(Code.FailedPrecondition);

      expect(await sequenceOf(userId)).toBe(written);
      expect((await clients().users.getUserByID({ userId })).user!.type.value).toMatchObject({ profile: { givenName: 'First' } });
    });

    it('an error answer is kept and replayed as the same error (code, message, details), on another transport too', async () => {
      const key = unique('key-');
      const missing = { userId: '999999999', firstName: 'No', lastName: 'One' };
      const first = await failure(clients('grpc').mgmt.updateHumanProfile(missing, keyed(key).options));
      expect(first.code).toBe(Code.NotFound);
      expect(replayedError(first)).toBeNull();
      for (const kind of ['grpc', 'connect', 'connect-json', 'grpc-web'] as const) {
        const again = await failure(clients(kind).mgmt.updateHumanProfile(missing, keyed(key).options));
        expect(again.code, kind).toBe(Code.NotFound);
        expect(again.rawMessage, kind).toBe(first.rawMessage);
        expect(errorDetail(again), kind).toEqual(errorDetail(first));
        expect(replayedError(again), kind).toBe('true');
      }

      // Field violations (google.rpc.BadRequest) come back as they went out.
      const userId = await newUser();
      const badKey = unique('key-');
      const bad = { userId, firstName: ' ', lastName: '' };
      const invalid = await failure(clients().mgmt.updateHumanProfile(bad, keyed(badKey).options));
      expect(invalid.code).toBe(Code.InvalidArgument);
      expect(fieldsOf(invalid).length).toBeGreaterThan(0);
      const invalidAgain = await failure(clients('connect-json').mgmt.updateHumanProfile(bad, keyed(badKey).options));
      expect(replayedError(invalidAgain)).toBe('true');
      expect(invalidAgain.rawMessage).toBe(invalid.rawMessage);
      expect(fieldsOf(invalidAgain)).toEqual(fieldsOf(invalid));
      expect(errorDetail(invalidAgain)).toEqual(errorDetail(invalid));
    });

    it('a malformed key is INVALID_ARGUMENT naming Idempotency-Key; 255 visible characters are a key', async () => {
      const userId = await newUser();
      const before = await sequenceOf(userId);
      for (const key of ['k'.repeat(256), 'two words', 'ünïcode']) {
        const err = await failure(clients().mgmt.updateHumanProfile({ userId, firstName: 'Long', lastName: 'Key' }, keyed(key).options));
        expect(err.code, key).toBe(Code.InvalidArgument);
        expect(fieldsOf(err), key).toEqual(['Idempotency-Key']);
        expect(errorDetail(err)[0]?.id, key).toMatch(/^INVALID_ARGUMENT-/);
      }
      expect(await sequenceOf(userId)).toBe(before);
      const longest = await clients().mgmt.updateHumanProfile(
        { userId, firstName: 'Long', lastName: 'Key' },
        keyed(unique('k').padEnd(255, '~')).options,
      );
      expect(longest.details!.sequence).toBe(before + 1n);
    });

    it('reads are not kept: a Get method with a key runs each time', async () => {
      const userId = await newUser();
      const key = unique('key-');
      const one = keyed(key);
      const first = await clients().users.getUserByID({ userId }, one.options);
      await clients().mgmt.updateHumanProfile({ userId, firstName: 'Read', lastName: 'Again' });
      const two = keyed(key);
      const second = await clients().users.getUserByID({ userId }, two.options);
      expect(one.replayed()).toBeNull();
      expect(two.replayed()).toBeNull();
      expect(second.details!.sequence).toBe(first.details!.sequence + 1n);
    });

    it('so are lists: ListUsers with a key runs each time and sees a user added in between', async () => {
      const key = unique('key-');
      const one = keyed(key);
      const first = await clients().users.listUsers({ query: { limit: 1 } }, one.options);
      await newUser('Listed');
      const two = keyed(key);
      const second = await clients().users.listUsers({ query: { limit: 1 } }, two.options);
      expect(one.replayed()).toBeNull();
      expect(two.replayed()).toBeNull();
      expect(second.details!.totalResult).toBe(first.details!.totalResult + 1n);
    });

    it('without a token there is no caller: the header is ignored (UNAUTHENTICATED each time)', async () => {
      const key = unique('key-');
      const request = { userId: gw.adminId, firstName: 'Anon', lastName: 'Ymous' };
      const outcomesBefore = await outcomes();
      for (let i = 0; i < 2; i++) {
        const err = await failure(clients('grpc', null).mgmt.updateHumanProfile(request, keyed(key).options));
        expect(err.code).toBe(Code.Unauthenticated);
        expect(replayedError(err)).toBeNull();
      }
      // Not even a malformed key is looked at.
      const long = await failure(clients('grpc', null).mgmt.updateHumanProfile(request, keyed('k'.repeat(300)).options));
      expect(long.code).toBe(Code.Unauthenticated);
      expect(delta(outcomesBefore, await outcomes())).toEqual({});
    });

    it('concurrent calls with one key: one write, and every call gets the same answer', async () => {
      const userId = await newUser();
      const before = await sequenceOf(userId);
      const key = unique('key-');
      const outcomesBefore = await outcomes();
      const request = { userId, firstName: 'Race', lastName: 'Condition' };
      const calls = (['grpc', 'grpc', 'connect', 'connect-json', 'grpc-web', 'grpc'] as const).map((kind) => {
        const k = keyed(key);
        return clients(kind)
          .mgmt.updateHumanProfile(request, k.options)
          .then((res) => ({ res, replayed: k.replayed() }));
      });
      const answers = await Promise.all(calls);
      for (const a of answers) expect(a.res).toEqual(answers[0]!.res);
      expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(answers.length - 1);
      expect(await sequenceOf(userId)).toBe(before + 1n);
      expect(delta(outcomesBefore, await outcomes())).toEqual({ stored: 1, replayed: answers.length - 1 });
    });

    it('one key names one request: a GraphQL mutation and a wire call with the same key and caller conflict', async () => {
      const userId = await newUser();
      const input = { userId, firstName: 'Graph', lastName: 'Q' };

      const key = unique('shared-');
      const graph = await gw.send(UpdateHumanProfileDocument, { input }, { headers: { 'idempotency-key': key } });
      expect(graph.status, graph.text).toBe(200);
      const written = await sequenceOf(userId);
      const wire = await failure(clients().mgmt.updateHumanProfile(input, keyed(key).options));
      expect(wire.code).toBe(Code.FailedPrecondition);
      expect(wire.rawMessage).toMatch(/Idempotency-Key was already used/);
      expect(await sequenceOf(userId)).toBe(written);

      const key2 = unique('shared-');
      const input2 = { userId, firstName: 'Wire', lastName: 'First' };
      await clients().mgmt.updateHumanProfile(input2, keyed(key2).options);
      const afterWire = await sequenceOf(userId);
      const graph2 = await gw.send(UpdateHumanProfileDocument, { input: input2 }, { headers: { 'idempotency-key': key2 } });
      expect(graph2.status).toBe(409);
      expect(onlyError(graph2).extensions?.code).toBe('FAILED_PRECONDITION');
      expect(await sequenceOf(userId)).toBe(afterWire);
    });

    if (redisUrl) {
      it('no idempotency record in Redis holds the request or the answer in clear', async () => {
        const key = unique('secret-');
        const firstName = unique('Clearname');
        const email = `${unique('coded')}@example.com`;
        const added = await clients().users.addHumanUser(
          {
            profile: { givenName: firstName, familyName: 'Secret' },
            email: { email, verification: { case: 'returnCode', value: {} } },
          },
          keyed(key).options,
        );
        expect(added.emailCode).toMatch(/\S/);
        const userId = await newUser();
        const newName = unique('Newname');
        const profileKey = unique('secret-');
        await clients().mgmt.updateHumanProfile({ userId, firstName: newName, lastName: 'Secret' }, keyed(profileKey).options);

        const records = await everythingInRedis(redisUrl(), '*idem:*');
        expect(records).toMatch(/idem:/);
        expect(holdsCode(records, added.emailCode!)).toBe(false);
        for (const clear of [added.userId, firstName, email, newName, userId, key, profileKey]) expect(records, clear).not.toContain(clear);
      });

      it("a SetHumanPassword body's password is in no Redis key or value", async () => {
        const userId = await newUser();
        const password = `Idem-${unique('pw')}-1!`;
        const res = await clients().mgmt.setHumanPassword({ userId, password, noChangeRequired: true }, keyed(unique('pw-')).options);
        expect(res.details).toBeDefined();
        const dump = await everythingInRedis(redisUrl());
        expect(dump).toMatch(/idem:/);
        expect(dump).not.toContain(password);
        expect(dump).not.toContain(Buffer.from(password).toString('base64'));
      });
    }
  });
}

describe('the wire methods on their own: a store that is down, a first call that is still running', () => {
  const method = ManagementService.method.updateHumanProfile;
  const logger = createLogger('silent');
  const message = create(method.input, { userId: '1', firstName: 'A', lastName: 'B' });
  const context = (key: string) =>
    createHandlerContext({
      service: ManagementService,
      method,
      protocolName: 'grpc',
      requestMethod: 'POST',
      url: 'http://gateway/zitadel.management.v1.ManagementService/UpdateHumanProfile',
      requestHeader: new Headers({ 'content-type': 'application/grpc', 'idempotency-key': key }),
      contextValues: createContextValues().set(requestStateKey, {
        ...newRequestState(null, 'test'),
        caller: 'caller-1',
        authChecked: true,
      }),
    });
  const wrapped = (idempotency: ReturnType<typeof createIdempotency>, run: () => Promise<unknown>) =>
    withIdempotency({ updateHumanProfile: (_req: unknown, _ctx: HandlerContext) => run() }, { idempotency, logger }).updateHumanProfile;

  it('the store cannot be reached: UNAVAILABLE, and the method does not run', async () => {
    const down: IdempotencyStore = {
      claim: async () => {
        throw new UnavailableError('redis down');
      },
      complete: async () => {},
      release: async () => {},
      close: async () => {},
    };
    let runs = 0;
    const call = wrapped(createIdempotency({ store: down, secret: 's', ttlSeconds: 60 }), async () => (runs++, create(method.output, {})));
    const err = await failure(call(message, context('k-down')) as Promise<never>);
    expect(err.code).toBe(Code.Unavailable);
    expect(errorDetail(err)[0]?.id).toMatch(/^UNAVAILABLE-/);
    expect(runs).toBe(0);
  });

  it('a duplicate of a call still running waits for it, then is FAILED_PRECONDITION "still in progress"', async () => {
    const outcomes: string[] = [];
    const idempotency = createIdempotency({
      store: createMemoryIdempotencyStore(),
      secret: 's',
      ttlSeconds: 60,
      waitMs: 100,
      onOutcome: (o) => outcomes.push(o),
    });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let runs = 0;
    const call = wrapped(idempotency, async () => {
      runs++;
      await held;
      return create(method.output, {});
    });
    const first = call(message, context('k-slow'));
    const second = await failure(call(message, context('k-slow')) as Promise<never>);
    expect(second.code).toBe(Code.FailedPrecondition);
    expect(second.rawMessage).toMatch(/still in progress; retry later/);
    release();
    await first;
    expect(runs).toBe(1);
    expect(outcomes).toEqual(['in_progress', 'stored']);
  });
});

idempotencySuite('wire idempotency keys on the embedded stores (in memory)', () => ({}));

describeWith('mongo', 'wire idempotency keys on MongoDB-wire', (mongoUrl) => {
  describeWith('redis', 'and Redis', (redisUrl) => {
    idempotencySuite(
      'the same suite',
      () => ({
        MONGODB_URL: mongoUrl,
        MONGODB_DB: `wire_idem_${Date.now()}_${seq++}`,
        REDIS_URL: redisUrl,
        CODE_HMAC_KEY: 'wire-idempotency-test-key',
      }),
      () => redisUrl,
    );
  });
});
