// zitadel.org.v2beta.OrganizationService (the service @zitadel/node's createOrganizationClient
// calls): CreateOrganization, v2beta's AddOrganization. Its messages are not v2's (the new id in
// `id`, the creation date alone instead of Details, admins as a oneof of created or assigned),
// so it has a mapping of its own onto the same command. Every other method answers UNIMPLEMENTED.
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { CreateOrganizationRequestSchema, OrganizationService } from '@zitadel/proto/zitadel/org/v2beta/org_service_pb.js';
import { refuseUnsupported } from './convert.ts';
import { unary, type WireDeps } from './context.ts';

/** As v2's AddOrganization: the command takes a name only, no chosen id, no admins (add them with AddOrgMember afterwards). */
const createOrganizationUnsupported = refuseUnsupported(CreateOrganizationRequestSchema, ['admins', 'id']);

export function organizationServiceV2beta(wire: WireDeps): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    createOrganization: unary(wire, 'CreateOrganization', async (ctx, req, ops) => {
      createOrganizationUnsupported(req);
      const { orgId, details } = await ops.addOrganization(ctx, { name: req.name });
      return { id: orgId, creationDate: timestampFromDate(details.creationDate ?? details.changeDate), organizationAdmins: [] };
    }),
  };
}
