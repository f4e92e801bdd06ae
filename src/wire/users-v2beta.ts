// zitadel.user.v2beta.UserService (the service @zitadel/node's createUserClient and the Python
// SDK's users API call): the methods the v2 UserService serves (users-v2.ts), on the v2beta
// messages, which are the v2 ones renamed (twin-service.ts checks that at start). The one
// difference in what they carry: v2beta's HumanUser has no mfa_init_skipped (the gateway leaves
// it empty in v2 anyway). Every other method answers UNIMPLEMENTED.
import type { ServiceImpl } from '@connectrpc/connect';
import { UserService } from '@zitadel/proto/zitadel/user/v2/user_service_pb.js';
import { UserService as UserServiceV2beta } from '@zitadel/proto/zitadel/user/v2beta/user_service_pb.js';
import type { WireDeps } from './context.ts';
import { twinService } from './twin-service.ts';
import { userService } from './users-v2.ts';

export const userServiceV2beta = (wire: WireDeps): Partial<ServiceImpl<typeof UserServiceV2beta>> =>
  twinService(UserService, UserServiceV2beta, userService(wire));
