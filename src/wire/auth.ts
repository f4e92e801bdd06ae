// zitadel.auth.v1.AuthService: UpdateMyProfile and GetMyUser; every other method answers UNIMPLEMENTED.
import type { ServiceImpl } from '@connectrpc/connect';
import { AuthService } from '@zitadel/proto/zitadel/auth_pb.js';
import { GenderSchema } from '@zitadel/proto/zitadel/user_pb.js';
import * as reads from '../commands/reads.ts';
import * as users from '../commands/users.ts';
import { detailsV1, enumName, opt } from './convert.ts';
import { unary, type WireDeps } from './context.ts';
import { userV1 } from './users-v1.ts';

export function authService(wire: WireDeps): Partial<ServiceImpl<typeof AuthService>> {
  return {
    updateMyProfile: unary(wire, 'UpdateMyProfile', async (ctx, req) => ({
      details: detailsV1(
        await users.updateMyProfile(ctx, {
          firstName: req.firstName,
          lastName: req.lastName,
          nickName: opt(req.nickName),
          displayName: req.displayName,
          preferredLanguage: opt(req.preferredLanguage),
          gender: enumName(GenderSchema, req.gender),
        }),
      ),
    })),
    getMyUser: unary(wire, 'GetMyUser', async (ctx) => ({ user: userV1(await reads.me(ctx)) })),
  };
}
