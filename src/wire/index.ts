// The wire API (docs/architecture.md): ZITADEL's services from the @zitadel/proto descriptors,
// served by connect-node over gRPC, gRPC-web and Connect beside /graphql. Thin: each method
// maps its request to a command input and the result to its response (src/wire/*.ts).
// Protobuf descriptors: @zitadel/proto (MIT), generated from ZITADEL's .proto files (Apache-2.0).
import { createContextValues } from '@connectrpc/connect';
import { AuthService } from '@zitadel/proto/zitadel/auth_pb.js';
import { ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { OrganizationService as OrganizationServiceV2beta } from '@zitadel/proto/zitadel/org/v2beta/org_service_pb.js';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { UserService as UserServiceV2beta } from '@zitadel/proto/zitadel/user/v2beta/user_service_pb.js';
import { authService } from './auth.ts';
import { requestFacts, requestStateKey, type WireDeps } from './context.ts';
import { HealthService, healthService } from './health.ts';
import { withIdempotency } from './idempotency.ts';
import { managementService } from './management.ts';
import { organizationService } from './orgs-v2.ts';
import { organizationServiceV2beta } from './orgs-v2beta.ts';
import { codeName, toConnectError } from './errors.ts';
import {
  REFLECTION_SERVICES,
  ServerReflectionV1AlphaService,
  ServerReflectionV1Service,
  reflectionService,
  type StreamLimits,
} from './reflection.ts';
import { restService, type RestService } from './rest.ts';
import { createRpcAdapter } from './rpc-adapter.ts';
import { userService } from './users-v2.ts';
import { userServiceV2beta } from './users-v2beta.ts';
import type { NodeHandler } from './node-handler.ts';

export type { WireDeps } from './context.ts';

/** ZITADEL's services the gateway serves; v2beta beside v2, for the SDKs that still call it (@zitadel/node, Python). */
export const WIRE_SERVICES = [
  AuthService,
  ManagementService,
  UserService,
  OrganizationService,
  UserServiceV2beta,
  OrganizationServiceV2beta,
] as const;

/** Beside them over RPC only: grpc.health.v1.Health and server reflection (v1 and v1alpha), for grpcurl and probes. */
const ALL_SERVICES = [...WIRE_SERVICES, HealthService, ...REFLECTION_SERVICES];

const PREFIXES = ALL_SERVICES.map((s) => `/${s.typeName}/`);

/** True for a request path of one of the RPC services (`/zitadel.auth.v1.AuthService/GetMyUser`, `/grpc.health.v1.Health/Check`). */
export const isWirePath = (path: string) => PREFIXES.some((p) => path.startsWith(p));

export interface WireOptions extends WireDeps {
  /** Largest request message accepted (the gateway's body cap). */
  readMaxBytes: number;
  /** Readiness for grpc.health.v1.Health (src/http/health.ts readiness: stores up, not draining); default: the event store answers a ping. */
  ready?: () => Promise<boolean>;
}

/** The services and their implementations, for every face that serves them (RPC here, REST in rest-route.ts). */
export const wireServices = (wire: WireDeps): RestService[] => [
  restService(AuthService, withIdempotency(authService(wire), wire)),
  restService(ManagementService, withIdempotency(managementService(wire), wire)),
  restService(UserService, withIdempotency(userService(wire), wire)),
  restService(OrganizationService, withIdempotency(organizationService(wire), wire)),
  restService(UserServiceV2beta, withIdempotency(userServiceV2beta(wire), wire)),
  restService(OrganizationServiceV2beta, withIdempotency(organizationServiceV2beta(wire), wire)),
];

/** One node handler for the services, health and reflection: gRPC (HTTP/2), gRPC-web and Connect. */
export function createWireHandler(options: WireOptions): NodeHandler {
  const { readMaxBytes, ready = () => options.deps.store.ping().then(() => true), ...wire } = options;
  // Each request on a reflection stream after the first counts against the caller's rate limit (reflection.ts).
  const reflectionLimits: StreamLimits = {
    async countAnother(context) {
      const state = context.values.get(requestStateKey);
      const refused = await state?.countAnother?.();
      if (!refused) return undefined;
      state!.errorCodes.push(refused.code);
      return toConnectError(refused, wire.logger, { method: 'ServerReflectionInfo', requestId: state!.requestId });
    },
    onTooMuch: (context, error) => context.values.get(requestStateKey)?.errorCodes.push(codeName(error)),
  };
  return createRpcAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    readMaxBytes,
    interceptors: [requestFacts],
    logger: wire.logger,
    contextValues: (state) => createContextValues().set(requestStateKey, state),
    routes(router) {
      for (const { service, impl } of wireServices(wire)) router.service(service, impl);
      router.service(HealthService, healthService({ services: WIRE_SERVICES.map((s) => s.typeName), ready }) as never);
      router.service(ServerReflectionV1Service, reflectionService(ALL_SERVICES, 'v1', reflectionLimits) as never);
      router.service(ServerReflectionV1AlphaService, reflectionService(ALL_SERVICES, 'v1alpha', reflectionLimits) as never);
    },
  });
}
