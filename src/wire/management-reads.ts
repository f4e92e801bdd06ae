// zitadel.management.v1.ManagementService reads of what a user, an organization and a project
// hold, over the operations' reads (their permissions and refusals: a user or project the
// caller may not read is NOT_FOUND like a missing one), and Healthz:
// - ListUserMetadata, ListHumanLinkedIDPs, ListHumanAuthFactors: the user of the acting
//   organization (ops.user, as GetUserByID), its metadata, identity provider links and U2F
//   tokens. Metadata carries the user's details (the state keeps no sequence per key); a link's
//   idp_name and idp_type are left empty (the link holds the provider's id only).
// - GetMyOrg: the organization of x-zitadel-orgid / x-service-orgid, else the caller's own.
// - ListApps: the project's SAML applications; saml_config holds metadata_url when the app was
//   added from a URL, and no metadata when it was added as XML (the document stays in the
//   project's event, not in what is read: src/model/projects.ts).
// - Healthz: {} to anyone, no token needed, as ZITADEL answers it.
// Lists honour ListQuery.offset and limit (0: all) in the order things were added; asc is
// ignored. The `queries` filters are refused with INVALID_ARGUMENT, not dropped silently.
import type { ServiceImpl } from '@connectrpc/connect';
import { timestampNow } from '@bufbuild/protobuf/wkt';
import { AppStateSchema } from '@zitadel/proto/zitadel/app_pb.js';
import { ListAppsRequestSchema, ListUserMetadataRequestSchema, type ManagementService } from '@zitadel/proto/zitadel/management_pb.js';
import { OrgStateSchema } from '@zitadel/proto/zitadel/org_pb.js';
import { AuthFactorStateSchema } from '@zitadel/proto/zitadel/user_pb.js';
import { notFound } from '../errors.ts';
import type { CommandContext, Operations } from '../operations.ts';
import type { Org } from '../model/orgs.ts';
import type { Project, SAMLApp } from '../model/projects.ts';
import type { Snapshot } from '../store/port.ts';
import { unary, type WireDeps } from './context.ts';
import { detailsV1, enumNumber, refuseUnsupported, snapshotDetails } from './convert.ts';

const unsupported = {
  listUserMetadata: refuseUnsupported(ListUserMetadataRequestSchema, ['queries']),
  listApps: refuseUnsupported(ListAppsRequestSchema, ['queries']),
};

type ListQuery = { offset: bigint; limit: number } | undefined;

/** One page of `items` as ListQuery asks (offset, then at most limit; limit 0: the rest), with zitadel.v1.ListDetails. */
function page<T>(items: T[], query: ListQuery) {
  const offset = Number(query?.offset ?? 0n);
  const limit = query?.limit ?? 0;
  return {
    items: items.slice(offset, limit > 0 ? offset + limit : undefined),
    details: { totalResult: BigInt(items.length), viewTimestamp: timestampNow() },
  };
}

/** The user of the acting organization, as management GetUserByID reads it; NOT_FOUND when there is none the caller may read. */
async function userOf(ops: Operations, ctx: CommandContext, id: string) {
  const user = await ops.user(ctx, id);
  if (!user) throw notFound('User');
  return user;
}

/** A SAML application as zitadel.app.v1.App. */
function appV1(project: Snapshot<Project>, app: SAMLApp) {
  return {
    id: app.id,
    details: detailsV1({
      sequence: app.sequence,
      creationDate: app.creationDate,
      changeDate: app.changeDate,
      resourceOwner: project.resourceOwner,
    }),
    state: enumNumber(AppStateSchema, 'APP_STATE_ACTIVE'),
    name: app.name,
    config: {
      case: 'samlConfig' as const,
      value: { metadata: app.metadataUrl ? { case: 'metadataUrl' as const, value: app.metadataUrl } : { case: undefined } },
    },
  };
}

/** An organization as zitadel.org.v1.Org. */
const orgV1 = (org: Snapshot<Org>) => ({
  id: org.id,
  details: detailsV1(snapshotDetails(org)),
  state: enumNumber(OrgStateSchema, 'ORG_STATE_ACTIVE'),
  name: org.state.name,
  primaryDomain: org.state.domain,
});

export function managementReads(wire: WireDeps): Partial<ServiceImpl<typeof ManagementService>> {
  return {
    listUserMetadata: unary(wire, 'ListUserMetadata', async (ctx, req, ops) => {
      unsupported.listUserMetadata(req);
      const user = await userOf(ops, ctx, req.id);
      const details = detailsV1(snapshotDetails(user));
      const { items, details: list } = page(user.state.metadata, req.query);
      return { details: list, result: items.map((m) => ({ key: m.key, value: new Uint8Array(Buffer.from(m.value, 'base64')), details })) };
    }),

    listHumanLinkedIDPs: unary(wire, 'ListHumanLinkedIDPs', async (ctx, req, ops) => {
      const user = await userOf(ops, ctx, req.userId);
      const { items, details } = page(user.state.idpLinks, req.query);
      return {
        details,
        result: items.map((l) => ({
          userId: user.id,
          idpId: l.idpId,
          idpName: '',
          providedUserId: l.userId,
          providedUserName: l.userName,
        })),
      };
    }),

    listHumanAuthFactors: unary(wire, 'ListHumanAuthFactors', async (ctx, req, ops) => {
      const user = await userOf(ops, ctx, req.userId);
      return {
        result: user.state.u2fTokens.map((t) => ({
          state: enumNumber(
            AuthFactorStateSchema,
            t.state === 'U2F_STATE_READY' ? 'AUTH_FACTOR_STATE_READY' : 'AUTH_FACTOR_STATE_NOT_READY',
          ),
          type: { case: 'u2f' as const, value: { id: t.id, name: t.name ?? '' } },
        })),
      };
    }),

    getMyOrg: unary(wire, 'GetMyOrg', async (ctx, _req, ops) => {
      const id = ctx.orgHeader ?? (await ops.me(ctx)).resourceOwner;
      const org = await ops.organization(ctx, id);
      if (!org) throw notFound('Organization');
      return { org: orgV1(org) };
    }),

    listApps: unary(wire, 'ListApps', async (ctx, req, ops) => {
      unsupported.listApps(req);
      const project = await ops.project(ctx, req.projectId);
      if (!project) throw notFound('Project');
      const { items, details } = page(project.state.apps, req.query);
      return { details, result: items.map((app) => appV1(project, app)) };
    }),

    healthz: async () => ({}),
  };
}
