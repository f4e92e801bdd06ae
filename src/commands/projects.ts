// Use cases of the project aggregate: create a project, add a SAML application, read a project.
import { alreadyExists, invalid, notFound, permissionDenied } from '../errors.ts';
import { rolesOf, type Org } from '../model/orgs.ts';
import { projectClaims, projectEvent, sameAppName, type Project } from '../model/projects.ts';
import { parseSamlMetadataOffLoop } from '../model/saml-metadata.ts';
import { FetchRefusedError, guardedFetch, type GuardOptions } from '../net/guarded-fetch.ts';
import type { Snapshot } from '../store/port.ts';
import { actingOrg, authenticate, can, permissionReads, requireIn } from './access.ts';
import { detailsOf, load, type CommandContext, type Details } from './context.ts';
import { projectInputRules, type AddProjectInput, type AddSAMLAppInput } from './project-inputs.ts';
import { write } from './runner.ts';
import { command } from './command.ts';

export const addProject = command(
  (c) => projectInputRules(c).addProject,
  async function addProject(ctx, input: AddProjectInput): Promise<{ projectId: string; details: Details }> {
    const caller = await authenticate(ctx, permissionReads(ctx));
    const org = await actingOrg(ctx, caller);
    await requireIn(ctx, caller, org, 'project.write');
    const name = input.name.trim();
    const projectId = ctx.deps.newId();
    const { snapshot } = await write(
      ctx,
      'project',
      projectId,
      (current) => {
        if (current) throw alreadyExists(`Project ${projectId}`);
        return {
          ...projectEvent.added(name),
          resourceOwner: org.id,
          claims: [projectClaims.name(org.id, name)],
        };
      },
      { isNew: true },
    ).catch((err) => {
      throw err?.code === 'ALREADY_EXISTS' ? alreadyExists(`A project named "${name}" in this organization`) : err;
    });
    return { projectId, details: detailsOf(snapshot, true) };
  },
);

/** A project of the acting organization; one elsewhere is NOT_FOUND here. */
async function projectInOrg(ctx: CommandContext, org: Snapshot<Org>, projectId: string): Promise<Snapshot<Project>> {
  const project = await load<Project>(ctx, 'project', projectId);
  if (!project || project.resourceOwner !== org.id) throw notFound('Project');
  return project;
}

/** The metadata bytes: decoded from metadataXml, or fetched from metadataUrl under the address guard. */
async function metadataBytes(ctx: CommandContext, input: AddSAMLAppInput): Promise<{ bytes: Buffer; field: string; url: string | null }> {
  if (input.metadataXml) return { bytes: Buffer.from(input.metadataXml, 'base64'), field: 'input.metadataXml', url: null };
  const url = input.metadataUrl!.trim();
  const { allowPrivateAddresses, timeoutMs, maxBytes } = ctx.deps.config.samlMetadata;
  const options: GuardOptions = { allowPrivateAddresses, timeoutMs, maxBytes };
  try {
    const fetched = await guardedFetch(url, options);
    return { bytes: fetched.body, field: 'input.metadataUrl', url };
  } catch (err) {
    if (err instanceof FetchRefusedError) throw invalid('input.metadataUrl', `the metadata could not be fetched: ${err.reason}`);
    throw err;
  }
}

export interface AddSAMLAppResult {
  appId: string;
  details: Details;
}

export const addSAMLApp = command(
  (c) => projectInputRules(c).addSAMLApp,
  async function addSAMLApp(ctx, input: AddSAMLAppInput): Promise<AddSAMLAppResult> {
    const { deps } = ctx;
    const caller = await authenticate(ctx, { ...permissionReads(ctx), project: [input.projectId] });
    const org = await actingOrg(ctx, caller);
    await requireIn(ctx, caller, org, 'project.app.write');
    const project = await projectInOrg(ctx, org, input.projectId);
    const name = input.name.trim();
    const nameTaken = (p: Project) => p.apps.some((a) => sameAppName(a.name, name));
    // Before any fetch: a taken name costs no outbound request.
    if (nameTaken(project.state)) throw alreadyExists(`An application named "${name}" in this project`);

    const { bytes, field, url } = await metadataBytes(ctx, input);
    const parsed = await parseSamlMetadataOffLoop(bytes, { maxBytes: deps.config.samlMetadata.maxBytes });
    if (!parsed.ok) throw invalid(field, `the SAML metadata ${parsed.reason}`);
    const { entityId } = parsed;
    const entityTaken = alreadyExists(`A SAML application with the entityID ${entityId}`);
    // A friendlier early answer; the claim at append is what actually decides.
    const holder = await deps.store.lookup(projectClaims.entityId(entityId));
    if (holder && (await holdsEntityId(ctx, holder.aggregateId, entityId))) throw entityTaken;

    const appId = deps.newId();
    const { snapshot } = await write(ctx, 'project', project.id, (current) => {
      if (!current || current.resourceOwner !== org.id) throw notFound('Project');
      if (nameTaken(current.state)) throw alreadyExists(`An application named "${name}" in this project`);
      return {
        ...projectEvent.samlAppAdded({ appId, name, entityId, metadataUrl: url, metadataXml: bytes.toString('base64') }),
        resourceOwner: current.resourceOwner,
        claims: [projectClaims.entityId(entityId)],
      };
    }).catch((err) => {
      throw err?.code === 'ALREADY_EXISTS' && /^samlEntityId\b/.test(err.message) ? entityTaken : err;
    });
    return { appId, details: detailsOf(snapshot, true) };
  },
);

async function holdsEntityId(ctx: CommandContext, projectId: string, entityId: string): Promise<boolean> {
  const project = await load<Project>(ctx, 'project', projectId);
  return !!project?.state.apps.some((a) => a.entityId === entityId);
}

/**
 * A project of the acting organization, for anyone holding a role there (or an
 * instance role); null when it is not in that organization, PERMISSION_DENIED
 * for a caller with no role there.
 */
export async function project(ctx: CommandContext, id: string): Promise<Snapshot<Project> | null> {
  const caller = await authenticate(ctx, { ...permissionReads(ctx), project: [id] });
  const org = await actingOrg(ctx, caller);
  const anyRole = rolesOf(org.state, caller.id).length > 0;
  if (!anyRole && !(await can(ctx, caller, org, 'project.write'))) throw permissionDenied();
  const found = await load<Project>(ctx, 'project', id);
  if (!found || found.resourceOwner !== org.id) return null;
  return found;
}
