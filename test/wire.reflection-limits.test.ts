// Server reflection is a bidi stream: one request at the edge that can carry any number of
// requests, each answered with up to 300 KB of descriptors (src/wire/reflection.ts). Each
// request after the first counts against the caller's rate limit, in the window of every other
// request; and one stream's answers stop at a few MB whatever the limit says (rate limit off).
// Over gRPC with connect-node's client, unauthenticated, as grpcurl calls it.
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { describe, expect, it } from 'vitest';
import { RetryInfoSchema } from '../src/proto/error-details.ts';
import { HealthService } from '../src/wire/health.ts';
import { ServerReflectionV1Service } from '../src/wire/reflection.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

interface Outcome {
  answers: any[];
  /** Bytes of file descriptors received. */
  bytes: number;
  error: ConnectError | undefined;
}

/** `requests` sent on one reflection stream, with no token; the answers until the stream ends. */
async function reflect(gw: TestGateway, requests: object[]): Promise<Outcome> {
  const client: any = createClient(ServerReflectionV1Service, createGrpcTransport({ baseUrl: gw.baseUrl }));
  async function* send() {
    for (const r of requests) yield { host: 'localhost', ...r };
  }
  const answers: any[] = [];
  let bytes = 0;
  try {
    for await (const res of client.serverReflectionInfo(send())) {
      answers.push(res);
      if (res.messageResponse.case === 'fileDescriptorResponse')
        for (const f of res.messageResponse.value.fileDescriptorProto) bytes += f.byteLength;
    }
    return { answers, bytes, error: undefined };
  } catch (err) {
    return { answers, bytes, error: ConnectError.from(err) };
  }
}

const list = { messageRequest: { case: 'listServices', value: '*' } };
const managementFile = { messageRequest: { case: 'fileByFilename', value: 'zitadel/management.proto' } };
const SERVICES = [
  'zitadel.auth.v1.AuthService',
  'zitadel.management.v1.ManagementService',
  'zitadel.user.v2.UserService',
  'zitadel.org.v2.OrganizationService',
  'zitadel.user.v2beta.UserService',
  'zitadel.org.v2beta.OrganizationService',
  'grpc.health.v1.Health',
  'grpc.reflection.v1.ServerReflection',
];

describe('server reflection streams', () => {
  it('each request on a stream counts against the rate limit: with 5 a minute per address, the sixth ends the stream, and the address is limited for other calls too', async () => {
    const gw = await startGateway({ env: { RATE_LIMIT_PER_IP_PER_MINUTE: '5' } });
    try {
      const outcome = await reflect(
        gw,
        Array.from({ length: 10 }, () => list),
      );
      expect(outcome.answers).toHaveLength(5);
      expect(outcome.error?.code).toBe(Code.ResourceExhausted);
      expect(outcome.error?.rawMessage).toContain('Too many requests: at most 5 a minute per client address');
      expect(outcome.error?.findDetails(RetryInfoSchema)).toHaveLength(1);
      // The same window: a unary call from this address is refused now.
      const health: any = createClient(HealthService, createGrpcTransport({ baseUrl: gw.baseUrl }));
      const refused = await health.check({}).then(
        () => undefined,
        (err: unknown) => ConnectError.from(err),
      );
      expect(refused?.code).toBe(Code.ResourceExhausted);
      const metrics = await (await fetch(`${gw.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/gateway_rate_limited_total\{scope="ip"\} [2-9]/);
    } finally {
      await gw.close();
    }
  });

  it('one stream’s answers stop at the stream cap even with the rate limit off; a client reading every file once stays well inside it', async () => {
    const gw = await startGateway({ env: { RATE_LIMIT_PER_IP_PER_MINUTE: '0' } });
    try {
      // Everything a client like grpcurl reads to describe every service: each file once.
      const all = await reflect(gw, [list, ...SERVICES.map((s) => ({ messageRequest: { case: 'fileContainingSymbol', value: s } }))]);
      expect(all.error).toBeUndefined();
      expect(all.answers).toHaveLength(1 + SERVICES.length);

      // The same 300 KB file asked for 100 times: 30 MB without the cap.
      const flood = await reflect(
        gw,
        Array.from({ length: 100 }, () => managementFile),
      );
      expect(flood.error?.code).toBe(Code.ResourceExhausted);
      const cap = Number(/at most (\d+) bytes/.exec(flood.error?.rawMessage ?? '')?.[1]);
      expect(flood.bytes).toBeLessThanOrEqual(cap);
      expect(flood.answers.length).toBeLessThan(100);
      // The cap is a few times what the whole description takes, no more.
      expect(cap).toBeGreaterThanOrEqual(2 * all.bytes);
      expect(cap).toBeLessThanOrEqual(8 * all.bytes);
      // A new stream starts afresh.
      expect((await reflect(gw, [managementFile])).answers).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });
});
