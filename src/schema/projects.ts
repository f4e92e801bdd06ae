// GraphQL surface of projects and SAML applications: inputs, payloads, the Project and SAMLApp types. Thin: map and call.
import { detailsOf, type AddSAMLAppResult } from '../operations.ts';
import type { Project, SAMLApp } from '../model/projects.ts';
import type { Snapshot } from '../store/port.ts';
import type { Builder } from './builder.ts';
import type { Common } from './common.ts';
import { asEntity } from './entities.ts';

export function addProjects(builder: Builder, { Details: DetailsRef, commandMutation }: Common) {
  const AddProjectInput = builder.inputType('AddProjectInput', {
    description: 'Project names are unique in their organization, ignoring case.',
    fields: (t) => ({ name: t.string({ required: true }) }),
  });
  const AddProjectPayload = builder.objectRef<{ projectId: string; details: AddSAMLAppResult['details'] }>('AddProjectPayload').implement({
    fields: (t) => ({ projectId: t.exposeID('projectId'), details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
  });
  commandMutation('addProject', {
    description: 'Create a project in the organization selected by x-service-orgid.',
    input: AddProjectInput,
    payload: AddProjectPayload,
    run: (ops) => ops.addProject,
  });

  const AddSAMLAppInput = builder.inputType('AddSAMLAppInput', {
    description:
      'Exactly one of metadataXml and metadataUrl. The name is unique in its project ignoring case; the entityID of the metadata is unique in the instance.',
    fields: (t) => ({
      projectId: t.id({ required: true }),
      name: t.string({ required: true }),
      metadataXml: t.field({
        type: 'Base64',
        description: 'A SAML 2.0 metadata document whose root is an md:EntityDescriptor (no DOCTYPE).',
      }),
      metadataUrl: t.string({ description: 'An http(s) URL the metadata document is fetched from, once, when the app is created.' }),
    }),
  });
  const AddSAMLAppPayload = builder.objectRef<AddSAMLAppResult>('AddSAMLAppPayload').implement({
    fields: (t) => ({ appId: t.exposeID('appId'), details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
  });
  commandMutation('addSAMLApp', {
    description: '8. Create a SAML application in a project.',
    input: AddSAMLAppInput,
    payload: AddSAMLAppPayload,
    run: (ops) => ops.addSAMLApp,
  });

  const SAMLAppRef = builder.objectRef<{ app: SAMLApp; resourceOwner: string }>('SAMLApp').implement({
    fields: (t) => ({
      id: t.id({ resolve: (a) => a.app.id }),
      name: t.string({ resolve: (a) => a.app.name }),
      entityId: t.string({ description: 'entityID read from the SAML metadata.', resolve: (a) => a.app.entityId }),
      metadataUrl: t.string({ nullable: true, resolve: (a) => a.app.metadataUrl }),
      details: t.field({
        type: DetailsRef,
        resolve: ({ app, resourceOwner }) => ({
          sequence: app.sequence,
          creationDate: new Date(app.creationDate),
          changeDate: new Date(app.changeDate),
          resourceOwner,
        }),
      }),
    }),
  });
  const ProjectRef = builder.objectRef<Snapshot<Project>>('Project').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.string({ resolve: (p) => p.state.name }),
      resourceOwner: t.exposeID('resourceOwner', { description: 'The organization the project belongs to.' }),
      details: t.field({ type: DetailsRef, resolve: (p) => ({ ...detailsOf(p, true), creationDate: p.creationDate }) }),
      samlApps: t.field({
        type: [SAMLAppRef],
        resolve: async (p, _a, ctx) => (await ctx.ops.projectApps(ctx.cmd, p)).map((app) => ({ app, resourceOwner: p.resourceOwner })),
      }),
    }),
  });

  asEntity(builder, ProjectRef, 'project');

  builder.queryField('project', (t) =>
    t.field({
      type: ProjectRef,
      nullable: true,
      description: 'A project of the organization selected by x-service-orgid; null when it does not exist there.',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => ctx.ops.project(ctx.cmd, String(args.id)),
    }),
  );
}
