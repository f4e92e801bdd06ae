// The project aggregate: a project with its SAML applications. An app lives
// inside its project, so adding one is one event on the project.
import type { StoredEvent } from '../store/port.ts';

export interface SAMLApp {
  id: string;
  name: string;
  /** entityID read from the metadata. */
  entityId: string;
  /** The URL the metadata was fetched from, or null when it was given as XML. */
  metadataUrl: string | null;
  /** The metadata document, base64, as given or as fetched. */
  metadataXml: string;
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

export function reduceProject(state: Project | undefined, event: StoredEvent): Project {
  const p = event.payload as any;
  if (event.type === projectEvents.added) return { name: p.name, apps: [] };
  if (!state) throw new Error(`${event.type} before ${projectEvents.added} for project ${event.aggregateId}`);
  switch (event.type) {
    case projectEvents.samlAppAdded: {
      const app: SAMLApp = {
        id: p.appId,
        name: p.name,
        entityId: p.entityId,
        metadataUrl: p.metadataUrl ?? null,
        metadataXml: p.metadataXml,
        sequence: event.sequence,
        creationDate: event.createdAt,
        changeDate: event.createdAt,
      };
      return { ...state, apps: [...state.apps, app] };
    }
    default:
      return state;
  }
}
