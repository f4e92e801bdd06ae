// zitadel.management.v1.ManagementService: the user, IDP, project and member methods the
// gateway serves, their reads and change lists (src/wire/changes.ts), and the reads of
// src/wire/management-reads.ts (ListUserMetadata, ListHumanLinkedIDPs, ListHumanAuthFactors,
// GetMyOrg, ListApps, Healthz); every other method answers UNIMPLEMENTED. The organization is
// the x-zitadel-orgid / x-service-orgid header, else the caller's own (the commands decide).
import type { ServiceImpl } from '@connectrpc/connect';
import { IDPOwnerTypeSchema, IDPStateSchema, OIDCMappingFieldSchema } from '@zitadel/proto/zitadel/idp_pb.js';
import {
  AddOrgOIDCIDPRequestSchema,
  AddProjectRequestSchema,
  AddSAMLAppRequestSchema,
  ManagementService,
} from '@zitadel/proto/zitadel/management_pb.js';
import { ProjectStateSchema } from '@zitadel/proto/zitadel/project_pb.js';
import { GenderSchema } from '@zitadel/proto/zitadel/user_pb.js';
import { notFound } from '../errors.ts';
import type { IdentityProvider } from '../model/idps.ts';
import type { Snapshot } from '../store/port.ts';
import { base64, detailsV1, sentEnum, enumNumber, opt, refuseUnsupported, snapshotDetails } from './convert.ts';
import { listOrgChanges, listProjectChanges, listUserChanges } from './changes.ts';
import { unary, type WireDeps } from './context.ts';
import { listUsersV1 } from './list-users.ts';
import { managementReads } from './management-reads.ts';
import { userV1 } from './users-v1.ts';

// Request fields without a place in the commands; every other field of the implemented methods is mapped.
const unsupported = {
  addOrgOIDCIDP: refuseUnsupported(AddOrgOIDCIDPRequestSchema, ['styling_type', 'auto_register']),
  addProject: refuseUnsupported(AddProjectRequestSchema, [
    'project_role_assertion',
    'project_role_check',
    'has_project_check',
    'private_labeling_setting',
  ]),
  addSAMLApp: refuseUnsupported(AddSAMLAppRequestSchema, ['login_version']),
};

export function managementService(wire: WireDeps): Partial<ServiceImpl<typeof ManagementService>> {
  return {
    ...managementReads(wire),
    updateHumanProfile: unary(wire, 'UpdateHumanProfile', async (ctx, req, ops) => ({
      details: detailsV1(
        await ops.updateHumanProfile(ctx, {
          userId: req.userId,
          firstName: req.firstName,
          lastName: req.lastName,
          nickName: opt(req.nickName),
          displayName: opt(req.displayName),
          preferredLanguage: opt(req.preferredLanguage),
          gender: sentEnum(GenderSchema, req.gender),
        }),
      ),
    })),

    updateHumanPhone: unary(wire, 'UpdateHumanPhone', async (ctx, req, ops) => ({
      details: detailsV1(await ops.updateHumanPhone(ctx, { userId: req.userId, phone: req.phone, isPhoneVerified: req.isPhoneVerified })),
    })),

    setHumanPassword: unary(wire, 'SetHumanPassword', async (ctx, req, ops) => ({
      details: detailsV1(
        await ops.setHumanPassword(ctx, { userId: req.userId, password: req.password, noChangeRequired: req.noChangeRequired }),
      ),
    })),

    addOrgOIDCIDP: unary(wire, 'AddOrgOIDCIDP', async (ctx, req, ops) => {
      unsupported.addOrgOIDCIDP(req);
      const { idpId, details } = await ops.addOIDCIdentityProvider(ctx, {
        name: req.name,
        issuer: req.issuer,
        clientId: req.clientId,
        clientSecret: req.clientSecret,
        scopes: req.scopes,
        displayNameMapping: sentEnum(OIDCMappingFieldSchema, req.displayNameMapping),
        usernameMapping: sentEnum(OIDCMappingFieldSchema, req.usernameMapping),
      });
      return { idpId, details: detailsV1(details) };
    }),

    updateOrgIDPOIDCConfig: unary(wire, 'UpdateOrgIDPOIDCConfig', async (ctx, req, ops) => ({
      details: detailsV1(
        await ops.updateOIDCIdentityProvider(ctx, {
          idpId: req.idpId,
          issuer: req.issuer,
          clientId: req.clientId,
          clientSecret: opt(req.clientSecret),
          scopes: req.scopes,
          displayNameMapping: sentEnum(OIDCMappingFieldSchema, req.displayNameMapping),
          usernameMapping: sentEnum(OIDCMappingFieldSchema, req.usernameMapping),
        }),
      ),
    })),

    addProject: unary(wire, 'AddProject', async (ctx, req, ops) => {
      unsupported.addProject(req);
      const { projectId, details } = await ops.addProject(ctx, { name: req.name });
      return { id: projectId, details: detailsV1(details) };
    }),

    addSAMLApp: unary(wire, 'AddSAMLApp', async (ctx, req, ops) => {
      unsupported.addSAMLApp(req);
      const { appId, details } = await ops.addSAMLApp(ctx, {
        projectId: req.projectId,
        name: req.name,
        metadataXml: req.metadata.case === 'metadataXml' ? base64(req.metadata.value) : undefined,
        metadataUrl: req.metadata.case === 'metadataUrl' ? req.metadata.value : undefined,
      });
      return { appId, details: detailsV1(details) };
    }),

    addOrgMember: unary(wire, 'AddOrgMember', async (ctx, req, ops) => ({
      details: detailsV1(await ops.addOrgMember(ctx, { userId: req.userId, roles: req.roles })),
    })),

    getUserByID: unary(wire, 'GetUserByID', async (ctx, req, ops) => {
      const user = await ops.user(ctx, req.id);
      if (!user) throw notFound('User');
      return { user: userV1(user) };
    }),

    listUsers: unary(wire, 'ListUsers', listUsersV1),
    listUserChanges: listUserChanges(wire),
    listOrgChanges: listOrgChanges(wire),
    listProjectChanges: listProjectChanges(wire),

    getOrgIDPByID: unary(wire, 'GetOrgIDPByID', async (ctx, req, ops) => {
      const idp = await ops.identityProvider(ctx, req.id);
      if (!idp) throw notFound('Identity provider');
      return { idp: idpV1(idp) };
    }),

    getProjectByID: unary(wire, 'GetProjectByID', async (ctx, req, ops) => {
      const project = await ops.project(ctx, req.id);
      if (!project) throw notFound('Project');
      return {
        project: {
          id: project.id,
          details: detailsV1(snapshotDetails(project)),
          name: project.state.name,
          state: enumNumber(ProjectStateSchema, 'PROJECT_STATE_ACTIVE'),
        },
      };
    }),
  };
}

/** An OIDC identity provider of the organization as zitadel.idp.v1.IDP. */
function idpV1(idp: Snapshot<IdentityProvider>) {
  return {
    id: idp.id,
    details: detailsV1(snapshotDetails(idp)),
    state: enumNumber(IDPStateSchema, 'IDP_STATE_ACTIVE'),
    name: idp.state.name,
    owner: enumNumber(IDPOwnerTypeSchema, 'IDP_OWNER_TYPE_ORG'),
    config: {
      case: 'oidcConfig' as const,
      value: {
        clientId: idp.state.clientId,
        issuer: idp.state.issuer,
        scopes: idp.state.scopes,
        displayNameMapping: enumNumber(OIDCMappingFieldSchema, idp.state.displayNameMapping),
        usernameMapping: enumNumber(OIDCMappingFieldSchema, idp.state.usernameMapping),
      },
    },
  };
}
