// The wire API with the real grpcurl binary (github.com/fullstorydev/grpcurl, installed by
// scripts/install-grpcurl.sh): server reflection (list, describe), grpc.health.v1.Health, and
// real calls that find their method through reflection alone. Under CI a missing grpcurl fails
// the suite; elsewhere the suite is skipped with a loud line saying so.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { User } from '../src/model/users.ts';
import { ServerReflectionV1AlphaService, ServerReflectionV1Service } from '../src/wire/reflection.ts';
import { AddHumanUserDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { ownRedis } from './support/own-redis.ts';
import { describeRequiring, describeWith } from './support/servers.ts';

/** grpcurl on PATH, else in $(go env GOPATH)/bin; an empty path and the reason when neither works. */
function findGrpcurl(): { bin: string; problem: string } {
  const candidates = ['grpcurl'];
  try {
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim().split(path.delimiter)[0];
    if (gopath) candidates.push(path.join(gopath, 'bin', 'grpcurl'));
  } catch {
    // no Go: PATH only
  }
  for (const bin of candidates) {
    if (bin !== 'grpcurl' && !existsSync(bin)) continue;
    try {
      execFileSync(bin, ['-version'], { stdio: 'pipe' });
      return { bin, problem: '' };
    } catch {
      // try the next one
    }
  }
  return { bin: '', problem: `grpcurl not found on PATH or in $(go env GOPATH)/bin (bash scripts/install-grpcurl.sh installs it)` };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function describeWithGrpcurl(name: string, fn: (grpcurl: string) => void): void {
  const { bin, problem } = findGrpcurl();
  describeRequiring(bin, problem, name, fn);
}

describeWithGrpcurl('wire API with grpcurl (reflection, health, calls)', (grpcurlBin) => {
  let gw: TestGateway;
  let addr: string;

  beforeAll(async () => {
    gw = await startGateway();
    addr = new URL(gw.baseUrl).host; // 127.0.0.1:<port>
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** Runs grpcurl (asynchronously: the gateway answers in this process) and logs what it printed. */
  function grpcurl(...args: string[]): Promise<Run> {
    const full = ['-plaintext', ...args];
    return new Promise((resolve) => {
      execFile(grpcurlBin, full, { timeout: 20_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        const shown = full.map((a) => (a.startsWith('authorization:') ? 'authorization: Bearer <token>' : a)).join(' ');
        console.log(`$ grpcurl ${shown}\n(exit ${code})\n${stdout}${stderr ? `stderr:\n${stderr}` : ''}`);
        resolve({ code, stdout, stderr });
      });
    });
  }

  it('list shows the ZITADEL services (v2beta too), health and reflection', async () => {
    const run = await grpcurl(addr, 'list');
    expect(run.code).toBe(0);
    const services = run.stdout.trim().split('\n');
    expect(services).toEqual(
      expect.arrayContaining([
        'zitadel.auth.v1.AuthService',
        'zitadel.management.v1.ManagementService',
        'zitadel.user.v2.UserService',
        'zitadel.org.v2.OrganizationService',
        'zitadel.user.v2beta.UserService',
        'zitadel.org.v2beta.OrganizationService',
        'grpc.health.v1.Health',
        'grpc.reflection.v1.ServerReflection',
      ]),
    );
    const methods = await grpcurl(addr, 'list', 'zitadel.management.v1.ManagementService');
    expect(methods.code).toBe(0);
    expect(methods.stdout).toContain('zitadel.management.v1.ManagementService.UpdateHumanProfile');
  });

  it('describe resolves a method and its messages with every dependency file', async () => {
    const method = await grpcurl(addr, 'describe', 'zitadel.management.v1.ManagementService.UpdateHumanProfile');
    expect(method.code).toBe(0);
    expect(method.stdout).toContain('is a method:');
    expect(method.stdout).toMatch(
      /rpc UpdateHumanProfile \( \.zitadel\.management\.v1\.UpdateHumanProfileRequest \) returns \( \.zitadel\.management\.v1\.UpdateHumanProfileResponse \)/,
    );
    const message = await grpcurl(addr, 'describe', 'zitadel.management.v1.UpdateHumanProfileResponse');
    expect(message.code).toBe(0);
    expect(message.stdout).toContain('.zitadel.v1.ObjectDetails details = 1;');
    const unknown = await grpcurl(addr, 'describe', 'zitadel.NoSuchThing');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not found/i);
  });

  it('grpc.health.v1.Health/Check answers SERVING, and NOT_FOUND for an unknown service', async () => {
    const overall = await grpcurl(addr, 'grpc.health.v1.Health/Check');
    expect(overall.code).toBe(0);
    expect(JSON.parse(overall.stdout)).toEqual({ status: 'SERVING' });
    const one = await grpcurl('-d', '{"service": "zitadel.management.v1.ManagementService"}', addr, 'grpc.health.v1.Health/Check');
    expect(JSON.parse(one.stdout)).toEqual({ status: 'SERVING' });
    const watch = await grpcurl('-d', '{"service": "zitadel.user.v2.UserService"}', addr, 'grpc.health.v1.Health/Watch');
    expect(watch.code).toBe(0);
    expect(JSON.parse(watch.stdout)).toEqual({ status: 'SERVING' });
    const unknown = await grpcurl('-d', '{"service": "no.such.Service"}', addr, 'grpc.health.v1.Health/Check');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('Code: NotFound');
  });

  // Redis is one of the readiness checks of GET /ready (the embedded event store cannot be taken down from outside).
  describeWith('redis', 'health follows readiness', () => {
    let redis: Awaited<ReturnType<typeof ownRedis>>;
    let withRedis: TestGateway;
    let redisAddr: string;
    beforeAll(async () => {
      redis = await ownRedis(inject('redisServerBin'));
      withRedis = await startGateway({ env: { REDIS_URL: redis.url, CODE_HMAC_KEY: 'grpcurl-test' } });
      redisAddr = new URL(withRedis.baseUrl).host;
    });
    afterAll(async () => {
      await withRedis?.close();
      await redis?.close();
    });

    const status = async (service = '') => {
      const run = await grpcurl('-d', JSON.stringify({ service }), redisAddr, 'grpc.health.v1.Health/Check');
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout).status as string;
    };

    it('Check answers NOT_SERVING while Redis is down (GET /ready 503), SERVING once it is back', async () => {
      expect(await status()).toBe('SERVING');
      await redis.down();
      try {
        expect((await fetch(`${withRedis.baseUrl}/ready`)).status).toBe(503);
        expect(await status()).toBe('NOT_SERVING');
        expect(await status('zitadel.user.v2.UserService')).toBe('NOT_SERVING');
      } finally {
        await redis.up();
      }
      // The Redis client reconnects with backoff: wait (bounded) for /ready to say so.
      let ready = 0;
      for (let i = 0; i < 100 && ready !== 200; i++) {
        ready = (await fetch(`${withRedis.baseUrl}/ready`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready).toBe(200);
      expect(await status()).toBe('SERVING');
    });
  });

  it('UpdateHumanProfile called through reflection alone changes the stored user', async () => {
    const added = await gw.send(AddHumanUserDocument, {
      input: { profile: { firstName: 'Grpc', lastName: 'Curl' }, email: { email: 'grpcurl@example.com', returnCode: true } },
    });
    const userId = added.data!.addHumanUser.userId;
    const before = (await gw.gateway.deps.store.load<User>('user', userId))!;

    const run = await grpcurl(
      '-H',
      `authorization: Bearer ${gw.adminToken}`,
      '-d',
      JSON.stringify({ userId, firstName: 'Changed', lastName: 'ByGrpcurl', displayName: 'Changed By Grpcurl' }),
      addr,
      'zitadel.management.v1.ManagementService/UpdateHumanProfile',
    );
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout);
    const after = (await gw.gateway.deps.store.load<User>('user', userId))!;
    expect(after.sequence).toBeGreaterThan(before.sequence);
    // proto3 JSON: uint64 as a string.
    expect(answer.details.sequence).toBe(String(after.sequence));
    expect(answer.details.resourceOwner).toBe(after.resourceOwner);
    expect(after.state.profile).toMatchObject({ firstName: 'Changed', lastName: 'ByGrpcurl', displayName: 'Changed By Grpcurl' });
  });

  it('a bad token answers Unauthenticated', async () => {
    const run = await grpcurl(
      '-H',
      'authorization: Bearer not-a-valid-token',
      '-d',
      JSON.stringify({ userId: gw.adminId, firstName: 'No', lastName: 'Way' }),
      addr,
      'zitadel.management.v1.ManagementService/UpdateHumanProfile',
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('Code: Unauthenticated');
  });
});

// The reflection protocol's details grpcurl does not show: v1alpha as v1, each file once per
// stream, extensions, and error responses. Over gRPC (HTTP/2) with connect-node's own client.
describe('wire API server reflection (v1 and v1alpha, connect-node gRPC client)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function exchange(version: 'v1' | 'v1alpha', requests: object[]): Promise<any[]> {
    const client: any = createClient(
      version === 'v1' ? ServerReflectionV1Service : ServerReflectionV1AlphaService,
      createGrpcTransport({ baseUrl: gw.baseUrl }),
    );
    async function* send() {
      for (const r of requests) yield { host: 'localhost', ...r };
    }
    const out: any[] = [];
    for await (const res of client.serverReflectionInfo(send())) out.push(res);
    return out;
  }
  const fileNames = (res: any): string[] =>
    res.messageResponse.value.fileDescriptorProto.map((b: Uint8Array) => fromBinary(FileDescriptorProtoSchema, b).name);

  for (const version of ['v1', 'v1alpha'] as const) {
    it(`${version}: list_services, then a symbol's file with its dependencies, each file once per stream`, async () => {
      const [list, first, second, again] = await exchange(version, [
        { messageRequest: { case: 'listServices', value: '*' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'zitadel.management.v1.ManagementService.UpdateHumanProfile' } },
        { messageRequest: { case: 'fileContainingSymbol', value: 'zitadel.auth.v1.AuthService' } },
        { messageRequest: { case: 'fileByFilename', value: 'zitadel/management.proto' } },
      ]);
      expect(list.validHost).toBe('localhost');
      expect(list.originalRequest.messageRequest).toEqual({ case: 'listServices', value: '*' });
      expect(list.messageResponse.value.service.map((s: any) => s.name).sort()).toEqual(
        [
          'grpc.health.v1.Health',
          'grpc.reflection.v1.ServerReflection',
          'grpc.reflection.v1alpha.ServerReflection',
          'zitadel.auth.v1.AuthService',
          'zitadel.management.v1.ManagementService',
          'zitadel.org.v2.OrganizationService',
          'zitadel.user.v2.UserService',
          'zitadel.org.v2beta.OrganizationService',
          'zitadel.user.v2beta.UserService',
        ].sort(),
      );
      const firstFiles = fileNames(first);
      expect(firstFiles[0]).toBe('zitadel/management.proto');
      expect(firstFiles).toEqual(
        expect.arrayContaining(['zitadel/object.proto', 'google/api/annotations.proto', 'google/protobuf/descriptor.proto']),
      );
      expect(new Set(firstFiles).size).toBe(firstFiles.length);
      // auth.proto shares most of its imports with management.proto: only what is new comes along.
      const secondFiles = fileNames(second);
      expect(secondFiles[0]).toBe('zitadel/auth.proto');
      for (const name of secondFiles.slice(1)) expect(firstFiles).not.toContain(name);
      // The requested file always comes, its dependencies not again.
      expect(fileNames(again)).toEqual(['zitadel/management.proto']);
    });
  }

  it('extensions: all numbers of a type and the file of one; NOT_FOUND error responses for unknown names', async () => {
    const [numbers, file, noFile, noSymbol, noType, noExtension] = await exchange('v1', [
      { messageRequest: { case: 'allExtensionNumbersOfType', value: 'google.protobuf.MethodOptions' } },
      {
        messageRequest: {
          case: 'fileContainingExtension',
          value: { containingType: 'google.protobuf.MethodOptions', extensionNumber: 72295728 },
        },
      },
      { messageRequest: { case: 'fileByFilename', value: 'no/such.proto' } },
      { messageRequest: { case: 'fileContainingSymbol', value: 'zitadel.NoSuchThing' } },
      { messageRequest: { case: 'allExtensionNumbersOfType', value: 'zitadel.NoSuchMessage' } },
      {
        messageRequest: { case: 'fileContainingExtension', value: { containingType: 'google.protobuf.MethodOptions', extensionNumber: 1 } },
      },
    ]);
    expect(numbers.messageResponse.case).toBe('allExtensionNumbersResponse');
    expect(numbers.messageResponse.value.baseTypeName).toBe('google.protobuf.MethodOptions');
    expect(numbers.messageResponse.value.extensionNumber).toContain(72295728); // google.api.http
    expect(fileNames(file)[0]).toBe('google/api/annotations.proto');
    for (const res of [noFile, noSymbol, noType, noExtension]) {
      expect(res.messageResponse.case).toBe('errorResponse');
      expect(res.messageResponse.value.errorCode).toBe(5); // NOT_FOUND
    }
  });
});
