// The reads over ZITADEL's API. A user is read with user v2 (it carries every field a User shows
// but its parts: metadata, identity-provider links and security keys, each read with one
// management v1 call when a query selects it). Scoping follows the embedded queries: `user` and
// `project`/`identityProvider` answer what lives in the acting organization (the organization
// header, else the caller's own), null for what is not there. Every read is asked for once a request.
import { OIDCMappingFieldSchema } from '@zitadel/proto/zitadel/idp_pb.js';
import { AuthFactorState } from '@zitadel/proto/zitadel/user_pb.js';
import { AppError } from '../errors.ts';
import type { IdentityProvider, OIDCMappingField } from '../model/idps.ts';
import type { Org } from '../model/orgs.ts';
import type { Project, SAMLApp } from '../model/projects.ts';
import type { User } from '../model/users.ts';
import type { UserPart, UserScope } from '../operations.ts';
import type { Snapshot } from '../store/port.ts';
import { readOnce, type UpstreamContext } from './context.ts';
import { detailsOf, nameOf, snapshotOf, userOf } from './convert.ts';
import { read, requireCaller } from './send.ts';

/** NOT_FOUND from the upstream (an AppError by then: client.ts maps every answer) as null, the embedded reads' "not there". */
async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

/** auth v1 GetMyUser, once a request: who the caller is, and its organization. */
const myUser = (ctx: UpstreamContext) =>
  readOnce(ctx, 'GetMyUser', () => read(ctx, 'GetMyUser', (o) => ctx.upstream.clients.auth.getMyUser({}, o)));

/** The caller's own user (auth v1 GetMyUser names it; user v2 reads all of it). */
export function me(ctx: UpstreamContext): Promise<Snapshot<User>> {
  return readOnce(ctx, 'me', async () => {
    const mine = await myUser(ctx);
    const id = mine.user?.id ?? '';
    const user = await userById(ctx, id, null);
    if (!user) throw new AppError('UNAUTHENTICATED', 'The token names no known user');
    return user;
  });
}

/** A user wherever the caller may read it, the organization forwarded as given (`orgId`, else none). */
function userById(ctx: UpstreamContext, id: string, orgId: string | null): Promise<Snapshot<User> | null> {
  return readOnce(ctx, `user:${orgId ?? ''}:${id}`, async () => {
    const r = await orNull(
      read(ctx, 'GetUserByID', (o) => ctx.upstream.clients.users.getUserByID({ userId: id }, o), { ...ctx.credentials, orgId }),
    );
    return r?.user ? userOf(r.user) : null;
  });
}

/** The acting organization: the header, else the caller's own. */
async function actingOrg(ctx: UpstreamContext): Promise<string> {
  return ctx.orgHeader ?? (await myUser(ctx)).user?.details?.resourceOwner ?? '';
}

export async function user(ctx: UpstreamContext, id: string): Promise<Snapshot<User> | null> {
  return readUser(ctx, id, 'acting');
}

export async function readUser(ctx: UpstreamContext, id: string, scope: UserScope): Promise<Snapshot<User> | null> {
  requireCaller(ctx);
  const [found, org] = await Promise.all([userById(ctx, id, ctx.orgHeader), scope === 'anywhere' ? Promise.resolve(null) : actingOrg(ctx)]);
  if (!found || (org !== null && found.resourceOwner !== org)) return null;
  return found;
}

/** One part of a user (its metadata, links or security keys): one management call in the user's organization. */
export function userPart<K extends UserPart>(ctx: UpstreamContext, u: Snapshot<User>, part: K): Promise<User[K]> {
  const credentials = { ...ctx.credentials, orgId: u.resourceOwner };
  const m = ctx.upstream.clients.management;
  const call = <T>(method: string, send: Parameters<typeof read<T>>[2]) => read(ctx, method, send, credentials);
  return readOnce(ctx, `${part}:${u.id}`, async (): Promise<unknown> => {
    if (part === 'metadata') {
      const r = await call('ListUserMetadata', (o) => m.listUserMetadata({ id: u.id }, o));
      return r.result.map((md) => ({ key: md.key, value: Buffer.from(md.value).toString('base64') }));
    }
    if (part === 'idpLinks') {
      const r = await call('ListHumanLinkedIDPs', (o) => m.listHumanLinkedIDPs({ userId: u.id }, o));
      return r.result.map((l) => ({ idpId: l.idpId, userId: l.providedUserId, userName: l.providedUserName }));
    }
    const r = await call('ListHumanAuthFactors', (o) => m.listHumanAuthFactors({ userId: u.id }, o));
    return r.result.flatMap((f) =>
      f.type.case === 'u2f'
        ? [
            {
              id: f.type.value.id,
              name: f.type.value.name || null,
              state: f.state === AuthFactorState.READY ? ('U2F_STATE_READY' as const) : ('U2F_STATE_NOT_READY' as const),
            },
          ]
        : [],
    );
  }) as Promise<User[K]>;
}

export function organization(ctx: UpstreamContext, id: string): Promise<Snapshot<Org> | null> {
  return readOnce(ctx, `org:${id}`, async () => {
    const r = await orNull(
      read(ctx, 'GetMyOrg', (o) => ctx.upstream.clients.management.getMyOrg({}, o), { ...ctx.credentials, orgId: id }),
    );
    const org = r?.org;
    return org ? snapshotOf<Org>(org.id, { name: org.name, domain: org.primaryDomain, members: [] }, org.details) : null;
  });
}

/** ZITADEL requires an OIDC provider's secret: one is always stored there (never readable, as here). */
const SECRET_HELD_UPSTREAM = 'held by the upstream';

export function identityProvider(ctx: UpstreamContext, id: string): Promise<Snapshot<IdentityProvider> | null> {
  return readOnce(ctx, `idp:${id}`, async () => {
    const r = await orNull(read(ctx, 'GetOrgIDPByID', (o) => ctx.upstream.clients.management.getOrgIDPByID({ id }, o)));
    const idp = r?.idp;
    if (!idp || idp.config.case !== 'oidcConfig') return null;
    const c = idp.config.value;
    const mapping = (n: number) => nameOf<OIDCMappingField>(OIDCMappingFieldSchema, n, 'OIDC_MAPPING_FIELD_UNSPECIFIED');
    return snapshotOf<IdentityProvider>(
      idp.id,
      {
        name: idp.name,
        type: 'oidc',
        issuer: c.issuer,
        clientId: c.clientId,
        scopes: c.scopes,
        displayNameMapping: mapping(c.displayNameMapping),
        usernameMapping: mapping(c.usernameMapping),
        clientSecret: SECRET_HELD_UPSTREAM,
      },
      idp.details,
    );
  });
}

export function project(ctx: UpstreamContext, id: string): Promise<Snapshot<Project> | null> {
  return readOnce(ctx, `project:${id}`, async () => {
    const r = await orNull(read(ctx, 'GetProjectByID', (o) => ctx.upstream.clients.management.getProjectByID({ id }, o)));
    const p = r?.project;
    return p ? snapshotOf<Project>(p.id, { name: p.name, apps: [] }, p.details) : null;
  });
}

/** entityID as the metadata names it (XML given: read from it; a URL: ZITADEL does not answer it, so empty). */
const entityIdOf = (xml: Uint8Array | null) => (xml ? (/entityID="([^"]*)"/.exec(Buffer.from(xml).toString('utf8'))?.[1] ?? '') : '');

export function projectApps(ctx: UpstreamContext, p: Snapshot<Project>): Promise<SAMLApp[]> {
  return readOnce(ctx, `apps:${p.id}`, async () => {
    const credentials = { ...ctx.credentials, orgId: p.resourceOwner };
    const r = await read(ctx, 'ListApps', (o) => ctx.upstream.clients.management.listApps({ projectId: p.id }, o), credentials);
    return r.result.flatMap((app) => {
      if (app.config.case !== 'samlConfig') return [];
      const meta = app.config.value.metadata;
      const d = detailsOf(app.details);
      return [
        {
          id: app.id,
          name: app.name,
          entityId: entityIdOf(meta.case === 'metadataXml' ? meta.value : null),
          metadataUrl: meta.case === 'metadataUrl' ? meta.value : null,
          sequence: d.sequence,
          creationDate: d.creationDate ?? d.changeDate,
          changeDate: d.changeDate,
        },
      ];
    });
  });
}
