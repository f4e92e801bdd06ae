// ZITADEL's own service clients (@zitadel/client) over connect-node's transports, with a
// bearer token: how the wire tests talk to the gateway, the way a ZITADEL user would.
// @zitadel/client has no v2beta factories: those clients are connect's createClient on the
// v2beta descriptors, as @zitadel/client builds its own.
import { ConnectError, createClient, type Interceptor, type Transport } from '@connectrpc/connect';
import { BadRequestSchema, type BadRequest } from '../../src/proto/error-details.ts';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { createAuthServiceClient, createManagementServiceClient } from '@zitadel/client/v1';
import { createOrganizationServiceClient, createUserServiceClient } from '@zitadel/client/v2';
import { OrganizationService as OrganizationServiceV2beta } from '@zitadel/proto/zitadel/org/v2beta/org_service_pb.js';
import { UserService as UserServiceV2beta } from '@zitadel/proto/zitadel/user/v2beta/user_service_pb.js';

export type WireKind = 'grpc' | 'grpc-web' | 'connect' | 'connect-json';
export const WIRE_KINDS: WireKind[] = ['grpc', 'grpc-web', 'connect', 'connect-json'];

export const bearer =
  (token: string | null): Interceptor =>
  (next) =>
  async (req) => {
    if (token) req.header.set('authorization', `Bearer ${token}`);
    return next(req);
  };

/** gRPC over HTTP/2 (always); gRPC-web and Connect (binary or JSON) over HTTP/1.1. */
export function wireTransport(kind: WireKind, baseUrl: string, token: string | null): Transport {
  const interceptors = [bearer(token)];
  switch (kind) {
    case 'grpc':
      return createGrpcTransport({ baseUrl, interceptors });
    case 'grpc-web':
      return createGrpcWebTransport({ baseUrl, httpVersion: '1.1', interceptors });
    case 'connect':
      return createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: true, interceptors });
    case 'connect-json':
      return createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: false, interceptors });
  }
}

export const zitadelClients = (t: Transport) => ({
  auth: createAuthServiceClient(t),
  mgmt: createManagementServiceClient(t),
  users: createUserServiceClient(t),
  orgs: createOrganizationServiceClient(t),
  usersV2beta: createClient(UserServiceV2beta, t),
  orgsV2beta: createClient(OrganizationServiceV2beta, t),
});

/** The ConnectError a call fails with (a call that succeeds fails the test). */
export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('expected the call to fail');
}

/** The field violations of an error's google.rpc.BadRequest details. */
export const violationsOf = (err: ConnectError) =>
  err.findDetails(BadRequestSchema).flatMap((d) => (d as unknown as BadRequest).fieldViolations);
