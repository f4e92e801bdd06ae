// The project aggregate: a project with its SAML applications. An app lives
// inside its project, so adding one is one event on the project. The app's metadata
// document (up to SAML_METADATA_MAX_BYTES, 1 MB by default) stays in its event, not in the
// state: nothing reads it back, and a state holding every app's document would grow by a
// megabyte an app, rewritten whole at each append and read whole by every command on the
// project (past the read budget after some 25 apps).
import type { StoredEvent } from './events.ts';

export interface SAMLApp {
  id: string;
  name: string;
  /** entityID read from the metadata. */
  entityId: string;
  /** The URL the metadata was fetched from, or null when it was given as XML. */
  metadataUrl: string | null;
  /** The project's sequence after the app was added. */
  sequence: number;
  creationDate: Date;
  changeDate: Date;
}

export interface Project {
  name: string;
  apps: SAMLApp[];
}

export const projectEvents = {
  added: 'project.added',
  samlAppAdded: 'project.saml-app.added',
} as const;

/** Uniqueness keys (constraints collection). */
export const projectClaims = {
  /** Project names are unique per organization, ignoring case. */
  name: (orgId: string, name: string) => `projectName:${orgId}:${name.toLowerCase()}`,
  /** A SAML entityID belongs to one app in the whole instance. */
  entityId: (entityId: string) => `samlEntityId:${entityId}`,
};

/** App names are unique in their project, ignoring case. */
export const sameAppName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A SAML application as its event carries it. */
export type SAMLAppAdded = { appId: string; name: string; entityId: string; metadataUrl: string | null; metadataXml: string };

/** Every event of the project aggregate. */
export type ProjectEvent =
  { type: typeof projectEvents.added; payload: { name: string } } | { type: typeof projectEvents.samlAppAdded; payload: SAMLAppAdded };

export const projectEvent = {
  added: (name: string): ProjectEvent => ({ type: projectEvents.added, payload: { name } }),
  samlAppAdded: (app: SAMLAppAdded): ProjectEvent => ({ type: projectEvents.samlAppAdded, payload: app }),
};

/** An app as states written before the document left them hold it: without the document. */
function withoutDocument(app: SAMLApp): SAMLApp {
  if (!('metadataXml' in app)) return app;
  const { metadataXml: _, ...rest } = app as SAMLApp & { metadataXml?: string };
  return rest;
}

export function reduceProject(state: Project | undefined, event: StoredEvent & ProjectEvent): Project {
  if (event.type === projectEvents.added) return { name: event.payload.name, apps: [] };
  if (!state) throw new Error(`${event.type} before ${projectEvents.added} for project ${event.aggregateId}`);
  switch (event.type) {
    case projectEvents.samlAppAdded: {
      const p = event.payload;
      const app: SAMLApp = {
        id: p.appId,
        name: p.name,
        entityId: p.entityId,
        metadataUrl: p.metadataUrl ?? null,
        sequence: event.sequence,
        creationDate: event.createdAt,
        changeDate: event.createdAt,
      };
      return { ...state, apps: [...state.apps.map(withoutDocument), app] };
    }
    default:
      return state;
  }
}
