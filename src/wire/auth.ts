// zitadel.auth.v1.AuthService: UpdateMyProfile, GetMyUser and Healthz ({} to anyone, no token
// needed, as ZITADEL answers it); every other method answers UNIMPLEMENTED.
import type { ServiceImpl } from '@connectrpc/connect';
import { AuthService } from '@zitadel/proto/zitadel/auth_pb.js';
import { GenderSchema } from '@zitadel/proto/zitadel/user_pb.js';
import { detailsV1, sentEnum, opt } from './convert.ts';
import { unary, type WireDeps } from './context.ts';
import { userV1 } from './users-v1.ts';

export function authService(wire: WireDeps): Partial<ServiceImpl<typeof AuthService>> {
  return {
    updateMyProfile: unary(wire, 'UpdateMyProfile', async (ctx, req, ops) => ({
      details: detailsV1(
        await ops.updateMyProfile(ctx, {
          firstName: req.firstName,
          lastName: req.lastName,
          nickName: opt(req.nickName),
          displayName: req.displayName,
          preferredLanguage: opt(req.preferredLanguage),
          gender: sentEnum(GenderSchema, req.gender),
        }),
      ),
    })),
    getMyUser: unary(wire, 'GetMyUser', async (ctx, _req, ops) => ({ user: userV1(await ops.me(ctx)) })),
    // Not through unary: no context is built, so neither a missing or bad token nor the org headers count.
    healthz: async () => ({}),
  };
}
