// zitadel.org.v2.OrganizationService: AddOrganization; every other method answers UNIMPLEMENTED.
import type { ServiceImpl } from '@connectrpc/connect';
import { AddOrganizationRequestSchema, OrganizationService } from '@zitadel/proto/zitadel/org/v2/org_service_pb.js';
import { detailsV2, refuseUnsupported } from './convert.ts';
import { unary, type WireDeps } from './context.ts';

/** The command takes a name only: no chosen id, no admins (add them with AddOrgMember afterwards). */
const addOrganizationUnsupported = refuseUnsupported(AddOrganizationRequestSchema, ['admins', 'org_id']);

export function organizationService(wire: WireDeps): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    addOrganization: unary(wire, 'AddOrganization', async (ctx, req, ops) => {
      addOrganizationUnsupported(req);
      const { orgId, details } = await ops.addOrganization(ctx, { name: req.name });
      return { organizationId: orgId, details: detailsV2(details) };
    }),
  };
}
