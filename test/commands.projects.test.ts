// Command tests of projects and their SAML applications (issue 12 step 1):
// addProject and addSAMLApp (SPEC.md operation 8).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addProject, addSAMLApp } from '../src/commands/projects.ts';
import { projectEvent, projectEvents, reduceProject, type Project } from '../src/model/projects.ts';
import {
  ADMIN,
  chars,
  commandTable,
  DEFAULT_ORG,
  event,
  facts,
  ORG_A,
  ORG_B,
  samlMetadata,
  U,
  unauthenticatedRows,
  world,
  type Fact,
  type Harness,
  type Row,
  type Then,
} from './support/given.ts';

const denied = { error: { code: 'PERMISSION_DENIED' as const, message: /^Permission denied$/ } };

describe('addProject', () => {
  const added = (owner: string, name = 'Portal'): Then<any> => ({
    events: [event('project', 'id-1', projectEvents.added, { name }, owner)],
    details: true,
    result: async (r, h) => {
      expect(r.projectId).toBe('id-1');
      expect(await h.store.lookup(`projectName:${owner}:${name.toLowerCase()}`)).toEqual({ aggregateType: 'project', aggregateId: 'id-1' });
    },
  });
  commandTable<any>(addProject, [
    { name: 'ORG_PROJECT_CREATOR adds a project to its org', caller: U.creatorA, input: { name: 'Portal' }, then: added(ORG_A) },
    { name: 'ORG_OWNER', caller: U.ownerA, input: { name: 'Portal' }, then: added(ORG_A) },
    { name: 'IAM_OWNER with x-service-orgid', caller: ADMIN, orgHeader: ORG_B, input: { name: 'Portal' }, then: added(ORG_B) },
    { name: 'IAM_OWNER without the header: its own (default) org', caller: ADMIN, input: { name: 'Portal' }, then: added(DEFAULT_ORG) },
    { name: 'the name trimmed', caller: U.creatorA, input: { name: '  Portal  ' }, then: added(ORG_A) },
    { name: 'a name of 200', caller: U.creatorA, input: { name: chars(200) }, then: added(ORG_A, chars(200)) },
    {
      name: 'a name taken in the org, another case: ALREADY_EXISTS',
      given: [...world, facts.project('p-1', ORG_A, 'Portal')],
      caller: U.creatorA,
      input: { name: ' PORTAL ' },
      then: { error: { code: 'ALREADY_EXISTS', message: /A project named "PORTAL" in this organization/ } },
    },
    {
      name: 'the same name in another org is fine',
      given: [...world, facts.project('p-b', ORG_B, 'Portal')],
      caller: U.creatorA,
      input: { name: 'Portal' },
      then: added(ORG_A),
    },
    {
      name: 'a name of 201: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: { name: chars(201) },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'], message: /at most 200/ } },
    },
    {
      name: 'a blank name: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: { name: '\t' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    {
      name: 'no name: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: {},
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    {
      name: 'a name with a control character: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: { name: 'Por\u0085tal' },
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'] } },
    },
    { name: 'ORG_USER_MANAGER lacks project.write: PERMISSION_DENIED', caller: U.managerA, input: { name: 'Portal' }, then: denied },
    { name: 'ORG_SETTINGS_MANAGER: PERMISSION_DENIED', caller: U.settingsA, input: { name: 'Portal' }, then: denied },
    { name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: { name: 'Portal' }, then: denied },
    { name: 'a role in another org only: PERMISSION_DENIED in its own', caller: U.helperB, input: { name: 'Portal' }, then: denied },
    {
      name: 'x-service-orgid of an org where the caller holds no role: PERMISSION_DENIED',
      caller: U.creatorA,
      orgHeader: ORG_B,
      input: { name: 'Portal' },
      then: denied,
    },
    {
      name: 'owner of another org with x-service-orgid of this one: PERMISSION_DENIED',
      caller: U.ownerB,
      orgHeader: ORG_A,
      input: { name: 'Portal' },
      then: denied,
    },
    {
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: { name: 'Portal' },
      then: denied,
    },
    ...unauthenticatedRows<any>({ name: 'Portal' }),
  ]);
});

describe('addSAMLApp', () => {
  const ENTITY = 'https://sp.example.com/metadata';
  const XML = samlMetadata(ENTITY);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const P1 = 'p-1';
  const seeded: Fact[] = [
    ...world,
    facts.project(P1, ORG_A, 'Portal'),
    facts.samlApp(P1, { appId: 'app-0', name: 'Existing', entityId: 'urn:existing' }),
    facts.project('p-b', ORG_B, 'Other'),
    facts.samlApp('p-b', { appId: 'app-b', name: 'B app', entityId: 'urn:taken-in-b' }),
  ];
  const input = (over: Record<string, unknown> = {}) => ({ projectId: P1, name: 'Shop', metadataXml: b64(XML), ...over });
  const appAdded = (over: Record<string, unknown> = {}, projectId = P1, owner = ORG_A): Then<any> => ({
    events: [
      event(
        'project',
        projectId,
        projectEvents.samlAppAdded,
        { appId: 'id-1', name: 'Shop', entityId: ENTITY, metadataUrl: null, metadataXml: b64(XML), ...over },
        owner,
      ),
    ],
    details: true,
    result: async (r, h) => {
      expect(r.appId).toBe('id-1');
      const entityId = (over.entityId as string | undefined) ?? ENTITY;
      expect(await h.store.lookup(`samlEntityId:${entityId}`)).toEqual({ aggregateType: 'project', aggregateId: projectId });
      const project = (await h.store.load<Project>('project', projectId))!.state;
      expect(project.apps.at(-1)).toMatchObject({ id: 'id-1', name: (over.name as string | undefined) ?? 'Shop', entityId });
    },
  });

  // A metadata server on loopback, for metadataUrl.
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith('/metadata.xml')) return res.writeHead(200, { 'content-type': 'application/xml' }).end(XML);
      if (req.url === '/not-saml.xml') return res.writeHead(200).end('<html/>');
      res.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const allowLoopback = { env: { SAML_METADATA_ALLOW_PRIVATE: 'true' } };
  const url = (path: string) => (h: Harness) => input({ metadataXml: undefined, metadataUrl: `${base}${path}`, ...h.vars.over });

  const row = (r: Omit<Row<any>, 'given'> & { given?: Fact[] }): Row<any> => ({ given: seeded, ...r });
  commandTable<any>(addSAMLApp, [
    row({
      name: 'ORG_PROJECT_CREATOR adds an app from metadataXml: entityID read from it, app id generated',
      caller: U.creatorA,
      input: input(),
      then: appAdded(),
    }),
    row({ name: 'ORG_OWNER', caller: U.ownerA, input: input(), then: appAdded() }),
    row({ name: 'IAM_OWNER with x-service-orgid', caller: ADMIN, orgHeader: ORG_A, input: input(), then: appAdded() }),
    row({
      name: "x-service-orgid of the project's org, holding a role there",
      caller: U.ownerB,
      orgHeader: ORG_B,
      input: input({ projectId: 'p-b' }),
      then: appAdded({}, 'p-b', ORG_B),
    }),
    row({ name: 'the name trimmed', caller: U.creatorA, input: input({ name: '  Shop ' }), then: appAdded() }),
    row({ name: 'a name of 200', caller: U.creatorA, input: input({ name: chars(200) }), then: appAdded({ name: chars(200) }) }),
    row({
      name: 'white space counts toward the limit: 200 with spaces around is INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ name: ` ${chars(200)} ` }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name'], message: /at most 200/ } },
    }),
    row({
      name: 'metadataUrl: fetched, the document and the URL stored',
      options: allowLoopback,
      caller: U.creatorA,
      input: url('/metadata.xml'),
      then: {
        ...appAdded(),
        events: (h: Harness) => [
          event(
            'project',
            P1,
            projectEvents.samlAppAdded,
            { appId: 'id-1', name: 'Shop', entityId: ENTITY, metadataUrl: `${base}/metadata.xml`, metadataXml: b64(XML) },
            ORG_A,
          ),
        ],
      } as Then<any>,
    }),
    row({
      name: 'metadataUrl of 2048',
      options: allowLoopback,
      caller: U.creatorA,
      input: (h: Harness) =>
        input({ metadataXml: undefined, metadataUrl: `${base}/metadata.xml?${chars(2048 - `${base}/metadata.xml?`.length)}` }),
      then: {
        ...appAdded(),
        events: (h: Harness) => [
          event(
            'project',
            P1,
            projectEvents.samlAppAdded,
            {
              appId: 'id-1',
              name: 'Shop',
              entityId: ENTITY,
              metadataUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metadata\.xml\?a+$/),
              metadataXml: b64(XML),
            },
            ORG_A,
          ),
        ],
        result: async (_r, h, outcome) => expect([...(outcome.events[0]!.payload.metadataUrl as string)]).toHaveLength(2048),
      } as Then<any>,
    }),
    row({
      name: 'metadataUrl on a loopback address, not allowed by config: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: url('/metadata.xml'),
      then: {
        error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'], message: /could not be fetched: the address is not allowed/ },
      },
    }),
    row({
      name: 'metadataUrl answering 404: INVALID_ARGUMENT',
      options: allowLoopback,
      caller: U.creatorA,
      input: url('/nope'),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'], message: /HTTP 404, expected 200/ } },
    }),
    row({
      name: 'metadataUrl answering no SAML metadata: INVALID_ARGUMENT on metadataUrl',
      options: allowLoopback,
      caller: U.creatorA,
      input: url('/not-saml.xml'),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'], message: /SAML metadata has the root element html/ } },
    }),
    row({
      name: 'metadataUrl not http(s): INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: null, metadataUrl: 'file:///etc/passwd' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'] } },
    }),
    row({
      name: 'metadataUrl not a URL: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: null, metadataUrl: 'sp.example.com/md' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'] } },
    }),
    row({
      name: 'metadataUrl of 2049: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: null, metadataUrl: `https://sp.example.com/${chars(2026)}` }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl'], message: /at most 2048/ } },
    }),
    row({
      name: 'neither metadataXml nor metadataUrl: INVALID_ARGUMENT on both',
      caller: U.creatorA,
      input: input({ metadataXml: undefined }),
      then: {
        error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl', 'input.metadataXml'], message: /give metadataXml or metadataUrl/ },
      },
    }),
    row({
      name: 'both: INVALID_ARGUMENT on both',
      caller: U.creatorA,
      input: input({ metadataUrl: 'https://sp.example.com/md' }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataUrl', 'input.metadataXml'], message: /not both/ } },
    }),
    row({
      name: 'metadataXml not base64: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: XML }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /base64/ } },
    }),
    row({
      name: 'metadataXml another root element: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: b64('<a/>') }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /root element a/ } },
    }),
    row({
      name: 'metadataXml with a DOCTYPE: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: b64(`<!DOCTYPE x [<!ENTITY e "x">]>${XML.replace('<?xml version="1.0"?>', '')}`) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /DOCTYPE/ } },
    }),
    row({
      name: 'metadataXml in another namespace: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: b64('<md:EntityDescriptor xmlns:md="urn:example:other" entityID="x"/>') }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /namespace/ } },
    }),
    row({
      name: 'metadataXml without entityID: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: b64('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"/>') }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /no entityID/ } },
    }),
    row({
      name: 'not XML: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ metadataXml: b64('<<<') }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.metadataXml'], message: /well-formed/ } },
    }),
    row({
      name: 'an entityID held by an app of another org: ALREADY_EXISTS',
      caller: U.creatorA,
      input: input({ metadataXml: b64(samlMetadata('urn:taken-in-b')) }),
      then: { error: { code: 'ALREADY_EXISTS', message: /entityID urn:taken-in-b/ } },
    }),
    row({
      name: 'an entityID held in the same project: ALREADY_EXISTS',
      caller: U.creatorA,
      input: input({ metadataXml: b64(samlMetadata('urn:existing')) }),
      then: { error: { code: 'ALREADY_EXISTS', message: /entityID urn:existing/ } },
    }),
    row({
      name: 'an app name taken in the project, another case: ALREADY_EXISTS',
      caller: U.creatorA,
      input: input({ name: 'EXISTING' }),
      then: { error: { code: 'ALREADY_EXISTS', message: /An application named "EXISTING" in this project/ } },
    }),
    row({
      name: 'a taken name is refused before any fetch',
      caller: U.creatorA,
      input: input({ name: 'Existing', metadataXml: null, metadataUrl: 'http://127.0.0.1:1/md' }),
      then: { error: { code: 'ALREADY_EXISTS', message: /An application named/ } },
    }),
    row({
      name: 'an app name used in another project is fine',
      caller: U.creatorA,
      input: input({ name: 'B app' }),
      then: appAdded({ name: 'B app' }),
    }),
    row({
      name: 'a projectId of 200 that does not exist: NOT_FOUND',
      caller: U.creatorA,
      input: input({ projectId: chars(200) }),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({
      name: 'an unknown project: NOT_FOUND',
      caller: U.creatorA,
      input: input({ projectId: 'p-nope' }),
      then: { error: { code: 'NOT_FOUND', message: /Project not found/ } },
    }),
    row({
      name: 'a project of another org: NOT_FOUND in the acting org',
      caller: U.creatorA,
      input: input({ projectId: 'p-b' }),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({
      name: 'IAM_OWNER without the header: NOT_FOUND in its own org',
      caller: ADMIN,
      input: input(),
      then: { error: { code: 'NOT_FOUND' } },
    }),
    row({
      name: 'name, projectId blank or over 200: INVALID_ARGUMENT',
      caller: U.creatorA,
      input: input({ projectId: '', name: chars(201) }),
      then: { error: { code: 'INVALID_ARGUMENT', fields: ['input.name', 'input.projectId'] } },
    }),
    row({ name: 'ORG_USER_MANAGER lacks project.app.write: PERMISSION_DENIED', caller: U.managerA, input: input(), then: denied }),
    row({ name: 'ORG_SETTINGS_MANAGER: PERMISSION_DENIED', caller: U.settingsA, input: input(), then: denied }),
    row({ name: 'a user without role: PERMISSION_DENIED', caller: U.alice, input: input(), then: denied }),
    row({ name: 'permission before the project is looked up', caller: U.alice, input: input({ projectId: 'p-nope' }), then: denied }),
    row({
      name: 'owner of another org with x-service-orgid of this one: PERMISSION_DENIED',
      caller: U.ownerB,
      orgHeader: ORG_A,
      input: input(),
      then: denied,
    }),
    row({
      name: 'x-service-orgid of an org that does not exist: PERMISSION_DENIED',
      caller: ADMIN,
      orgHeader: 'org-nope',
      input: input(),
      then: denied,
    }),
    ...unauthenticatedRows<any>(input(), seeded),
  ]);
});

describe('the project state', () => {
  const appAdded = (sequence: number, appId: string, metadataXml: string) =>
    ({
      aggregateType: 'project',
      aggregateId: 'p-1',
      sequence,
      createdAt: new Date(0),
      creator: 'tester',
      resourceOwner: ORG_A,
      claims: [],
      ...projectEvent.samlAppAdded({ appId, name: appId, entityId: `urn:${appId}`, metadataUrl: null, metadataXml }),
    }) as Parameters<typeof reduceProject>[1];

  it("holds no app's metadata document (its event does), and drops the ones an older state held at its next app", () => {
    const document = Buffer.alloc(750_000, 1).toString('base64'); // 1 MB, SAML_METADATA_MAX_BYTES' default
    const state = reduceProject({ name: 'Portal', apps: [] }, appAdded(2, 'a-1', document));
    expect(JSON.stringify(state).length).toBeLessThan(1000);
    expect(state.apps[0]).not.toHaveProperty('metadataXml');
    const older = { name: 'Portal', apps: [{ ...state.apps[0]!, metadataXml: document }] } as unknown as Project; // as states written before held it
    const next = reduceProject(older, appAdded(3, 'a-2', document));
    expect(next.apps.map((a) => [a.id, 'metadataXml' in a])).toEqual([
      ['a-1', false],
      ['a-2', false],
    ]);
  });
});
