// grpc.health.v1.Health (grpc/grpc-proto grpc/health/v1/health.proto) as a descriptor built in
// code, as src/proto/error-details.ts does for google.rpc.BadRequest: no installed package carries it.
// Check answers SERVING for "" and for each wire service while the gateway's readiness checks
// pass (the same as GET /ready: the stores answer and no drain is under way), NOT_SERVING
// otherwise, and NOT_FOUND for any other name. Watch answers the current status once and ends
// the stream (SERVICE_UNKNOWN for an unknown name, as the protocol asks, instead of an error):
// a stream held open would keep a request in flight through the gateway's drain.
import { create, createFileRegistry, type DescMessage, type DescService } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';

const { OPTIONAL } = FieldDescriptorProto_Label;
const { STRING, ENUM } = FieldDescriptorProto_Type;

export const healthFile = create(FileDescriptorProtoSchema, {
  name: 'grpc/health/v1/health.proto',
  package: 'grpc.health.v1',
  syntax: 'proto3',
  messageType: [
    {
      name: 'HealthCheckRequest',
      field: [{ name: 'service', jsonName: 'service', number: 1, label: OPTIONAL, type: STRING }],
    },
    {
      name: 'HealthCheckResponse',
      field: [
        {
          name: 'status',
          jsonName: 'status',
          number: 1,
          label: OPTIONAL,
          type: ENUM,
          typeName: '.grpc.health.v1.HealthCheckResponse.ServingStatus',
        },
      ],
      enumType: [
        {
          name: 'ServingStatus',
          value: [
            { name: 'UNKNOWN', number: 0 },
            { name: 'SERVING', number: 1 },
            { name: 'NOT_SERVING', number: 2 },
            { name: 'SERVICE_UNKNOWN', number: 3 },
          ],
        },
      ],
    },
  ],
  service: [
    {
      name: 'Health',
      method: [
        { name: 'Check', inputType: '.grpc.health.v1.HealthCheckRequest', outputType: '.grpc.health.v1.HealthCheckResponse' },
        {
          name: 'Watch',
          inputType: '.grpc.health.v1.HealthCheckRequest',
          outputType: '.grpc.health.v1.HealthCheckResponse',
          serverStreaming: true,
        },
      ],
    },
  ],
  options: {
    csharpNamespace: 'Grpc.Health.V1',
    goPackage: 'google.golang.org/grpc/health/grpc_health_v1',
    javaMultipleFiles: true,
    javaOuterClassname: 'HealthProto',
    javaPackage: 'io.grpc.health.v1',
  },
});

const registry = createFileRegistry(healthFile, () => undefined);

export const HealthService: DescService = registry.getService('grpc.health.v1.Health')!;
export const HealthCheckRequestSchema: DescMessage = registry.getMessage('grpc.health.v1.HealthCheckRequest')!;
export const HealthCheckResponseSchema: DescMessage = registry.getMessage('grpc.health.v1.HealthCheckResponse')!;
/** The file as the reflection service hands it out. */
export const healthDescFile = registry.getFile(healthFile.name)!;

export const ServingStatus = {
  UNKNOWN: 0,
  SERVING: 1,
  NOT_SERVING: 2,
  SERVICE_UNKNOWN: 3,
} as const;
export type ServingStatus = (typeof ServingStatus)[keyof typeof ServingStatus];

export interface HealthOptions {
  /** The service names with a status ("" is always one). */
  services: readonly string[];
  /** True while the gateway is ready (src/http/health.ts readiness: stores up, not draining). */
  ready(): Promise<boolean>;
}

/** The Health service's implementation for connect-node's router. */
export function healthService({ services, ready }: HealthOptions) {
  const known = new Set(['', ...services]);
  const status = async (service: string) =>
    !known.has(service)
      ? ServingStatus.SERVICE_UNKNOWN
      : (await ready().catch(() => false))
        ? ServingStatus.SERVING
        : ServingStatus.NOT_SERVING;
  const answer = (s: ServingStatus) => create(HealthCheckResponseSchema, { status: s } as never);
  return {
    async check(req: { service: string }) {
      const s = await status(req.service);
      if (s === ServingStatus.SERVICE_UNKNOWN) throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      return answer(s);
    },
    async *watch(req: { service: string }) {
      yield answer(await status(req.service));
    },
  };
}
