// zitadel.org.v2.OrganizationService: AddOrganization; every other method answers UNIMPLEMENTED.
import type { ServiceImpl } from '@connectrpc/connect';
import { OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import * as orgs from '../commands/orgs.ts';
import { detailsV2 } from './convert.ts';
import { unary, type WireDeps } from './context.ts';

export function organizationService(wire: WireDeps): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    addOrganization: unary(wire, 'AddOrganization', async (ctx, req) => {
      const { orgId, details } = await orgs.addOrganization(ctx, { name: req.name });
      return { organizationId: orgId, details: detailsV2(details) };
    }),
  };
}
