// What each benchmark scenario sends. A scenario builds a fresh load for every
// autocannon run (warm-up and measurement), so a run never starts from the state
// another one left: write scenarios get their own users each time.
// The wire scenarios (gRPC, Connect-JSON, REST) send the same change as the GraphQL
// updateHumanProfile one; the gRPC ones go through ghz (bench/ghz-load.ts), the rest through autocannon.
// Each protocol has its floor, a bare server that commits the same one row before it answers:
// yoga-durable (GraphQL), grpc-durable and connect-durable (connect-node, gRPC and Connect).
import type autocannon from 'autocannon';
import { ghzWorker, REQUEST_NUMBER, WORKER_ID, type GhzCall } from './ghz-load.ts';

/**
 * gateway-front: the gateway in upstream mode (ZITADEL_URL), in front of a `gateway` child
 * (bench/upstream.ts). connect-durable: the wire faces' floor (bench/connect-floor.ts).
 */
export type ServerKind = 'raw-http' | 'yoga-ping' | 'yoga-durable' | 'connect-durable' | 'gateway' | 'gateway-front';

/** A started server: its GraphQL URL (connect-durable: its origin) and, for the gateway, an administrator token. */
export interface Target {
  url: string;
  adminToken?: string;
}

/** One run's requests (autocannon's options, or ghz's call for gRPC), and a check of the server's state after it. */
export interface Load {
  options?: Pick<autocannon.Options, 'requests' | 'setupClient' | 'method' | 'headers' | 'body' | 'timeout'>;
  /** Instead of autocannon (HTTP/1.1 only): the gRPC call ghz makes (bench/ghz-load.ts), a worker per connection. */
  ghz?: GhzCall;
  /** Reads back what the run wrote (e.g. the users' sequences); for the report. */
  after?: () => Promise<Record<string, number>>;
}

export interface Scenario {
  name: string;
  server: ServerKind;
  what: string;
  /** The scenario of the same store and run whose req/s this one's is divided by (the × GraphQL column). */
  versus?: string;
  /** The floor of its protocol (the × floor column): yoga-durable, grpc-durable or connect-durable; none for REST. */
  floor?: string;
  /** Who sends the load: ghz for gRPC (bench/ghz-load.ts), else autocannon. */
  loader?: 'ghz';
  /** The gateway exports OpenTelemetry traces (every request sampled) to a local OTLP sink (bench/otlp-sink.ts). */
  tracing?: boolean;
  /** Gateway scenarios run once per store setup (embedded; MongoDB-wire + Redis). */
  load(target: Target, connections: number): Promise<Load>;
}

// The operations as the end-to-end tests send them (test/operations/users.graphql).
const DETAILS = 'fragment DetailsFields on Details { sequence creationDate changeDate resourceOwner }';
export const OPS = {
  ping: 'mutation { ping }',
  save: 'mutation ($id: ID!, $firstName: String!, $lastName: String!) { save(id: $id, firstName: $firstName, lastName: $lastName) }',
  written: 'query ($prefix: String!) { written(prefix: $prefix) }',
  updateHumanProfile: `mutation UpdateHumanProfile($input: UpdateHumanProfileInput!) {
  updateHumanProfile(input: $input) { details { ...DetailsFields } }
}
${DETAILS}`,
  addHumanUser: `mutation AddHumanUser($input: AddHumanUserInput!) {
  addHumanUser(input: $input) { userId emailCode phoneCode details { ...DetailsFields } }
}
${DETAILS}`,
  setEmail: `mutation SetEmail($input: SetEmailInput!) {
  setEmail(input: $input) { verificationCode details { ...DetailsFields } }
}
${DETAILS}`,
  updateHumanPhone: `mutation UpdateHumanPhone($input: UpdateHumanPhoneInput!) {
  updateHumanPhone(input: $input) { details { ...DetailsFields } }
}
${DETAILS}`,
  me: `query Me { me { ...UserFields } }
fragment UserFields on User {
  id username state resourceOwner
  details { ...DetailsFields }
  profile { firstName lastName nickName displayName preferredLanguage gender }
  email { email isVerified }
  phone { phone isVerified }
  passwordChangeRequired hasPassword
  metadata { key value }
  idpLinks { idpId userId userName }
  u2fTokens { id name state }
}
${DETAILS}`,
  userSequence: 'query UserSequence($id: ID!) { user(id: $id) { details { sequence } } }',
  /** bench/users-search.ts: one page of an instance-wide search, without totalCount. */
  usersSearch: `query UsersSearch($prefix: String!) {
  users(first: 50, allOrganizations: true, filter: { email: { op: PREFIX, value: $prefix } }) {
    edges { node { id username } } pageInfo { hasNextPage endCursor }
  }
}`,
} as const;

export const PASSWORD = 'Secr3t!pass'; // satisfies the default password policy

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

function headers(target: Target): Record<string, string> {
  return target.adminToken ? { ...JSON_HEADERS, authorization: `Bearer ${target.adminToken}` } : { ...JSON_HEADERS };
}

const body = (query: string, variables?: Record<string, unknown>) => JSON.stringify(variables ? { query, variables } : { query });

/** A GraphQL call outside the measurement (setup and checks); throws on any error. */
export async function graphql<T = any>(target: Target, query: string, variables?: Record<string, unknown>): Promise<T> {
  const res = await fetch(target.url, { method: 'POST', headers: headers(target), body: body(query, variables) });
  const text = await res.text();
  let parsed: { data?: T; errors?: unknown[] };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${res.status}: ${text.slice(0, 500)}`);
  }
  if (!res.ok || parsed.errors?.length || !parsed.data) throw new Error(`${res.status}: ${text.slice(0, 500)}`);
  return parsed.data;
}

// Unique per bench process, so runs against one MongoDB never collide on usernames.
const RUN = `${Date.now().toString(36)}${process.pid.toString(36)}`;
let userSeq = 0;
export const uniqueEmail = (prefix: string) => `${prefix}-${RUN}-${(userSeq++).toString(36)}@bench.example.com`;

/** Users made for one run, one per connection, in a state neither alternative equals; `id(i)`: their ids chosen here. */
export async function makeUsers(target: Target, count: number, id?: (i: number) => string): Promise<{ id: string; email: string }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = uniqueEmail('start');
      const data = await graphql(target, OPS.addHumanUser, {
        input: { ...(id ? { userId: id(i) } : {}), profile: { firstName: 'Bench', lastName: 'Start' }, email: { email, isVerified: true } },
      });
      return { id: data.addHumanUser.userId as string, email };
    }),
  );
}

async function sequences(target: Target, ids: string[]): Promise<number[]> {
  return Promise.all(ids.map(async (id) => Number((await graphql(target, OPS.userSequence, { id })).user.details.sequence)));
}

/** The users read back: store writes = sum of (sequence - 1) (1 is the creation), to set beside the request count. */
async function storeWrites(target: Target, users: { id: string }[]): Promise<Record<string, number>> {
  const seqs = await sequences(
    target,
    users.map((u) => u.id),
  );
  return { storeWrites: seqs.reduce((sum, s) => sum + (s - 1), 0) };
}

export interface HttpRequest {
  method: 'POST' | 'PUT';
  path: string;
  body: string;
}

/**
 * Each connection gets its own user and sends its two requests in turn, so every request is a
 * real change of that user (A after start, B after A, A after B, ...). The check afterwards
 * reads the users back (storeWrites).
 */
function alternatingPerConnection(
  target: Target,
  users: { id: string }[],
  requests: (user: { id: string }) => [HttpRequest, HttpRequest],
): Load {
  let next = 0;
  const h = headers(target);
  return {
    options: {
      setupClient(client) {
        const i = next++;
        const user = users[i % users.length]!;
        client.setRequests(requests(user).map((r) => ({ ...r, headers: h })));
      },
    },
    after: () => storeWrites(target, users),
  };
}

/** GraphQL: both bodies to /graphql. */
const graphqlPosts = (a: string, b: string): [HttpRequest, HttpRequest] => [
  { method: 'POST', path: '/graphql', body: a },
  { method: 'POST', path: '/graphql', body: b },
];

/** The two numbers each connection's user alternates between (set as verified: no SMS, the phone code cleared). */
const PHONES = ['+41791234567', '+41791234568'] as const;

/** The two profiles each connection's user alternates between, on every face. */
export const PROFILES = [
  { firstName: 'Ada', lastName: 'Lovelace' },
  { firstName: 'Ada', lastName: 'Byron' },
] as const;

const UPDATE_HUMAN_PROFILE_RPC = '/zitadel.management.v1.ManagementService/UpdateHumanProfile';

/**
 * gRPC through ghz: worker c (one per connection) changes the user `${prefix}${ghzWorker(c)}`,
 * every request a real change, as ghz numbers the requests of a run (.RequestNumber, unique) and
 * the last name carries it ("Lovelace-1234": a short name, as the GraphQL row's two profiles).
 */
function grpcCall(target: Target, prefix: string): GhzCall {
  return {
    call: UPDATE_HUMAN_PROFILE_RPC.slice(1),
    data: JSON.stringify({ userId: `${prefix}${WORKER_ID}`, firstName: 'Ada', lastName: `Lovelace-${REQUEST_NUMBER}` }),
    ...(target.adminToken ? { metadata: { authorization: `Bearer ${target.adminToken}` } } : {}),
  };
}

/** A prefix of ids new for each run (a floor counts its rows back by it). */
const runPrefix = () => `${RUN}-${(userSeq++).toString(36)}-`;

/** The floors' ids: `${prefix}${connection}`. */
function floorIds(connections: number): { prefix: string; ids: { id: string }[] } {
  const prefix = runPrefix();
  return { prefix, ids: Array.from({ length: connections }, (_, c) => ({ id: `${prefix}${c}` })) };
}

/** connect-durable's read-back: the rows committed for the run's ids. */
async function floorWritten(target: Target, prefix: string): Promise<Record<string, number>> {
  const res = await fetch(`${new URL(target.url).origin}/written?prefix=${encodeURIComponent(prefix)}`);
  if (!res.ok) throw new Error(`/written: ${res.status} ${await res.text()}`);
  return { storeWrites: ((await res.json()) as { written: number }).written };
}

/** A new user per request: setupRequest numbers them from one counter shared by all connections. */
function uniqueUsers(target: Target, withPassword: boolean): Load {
  const h = headers(target);
  const prefix = withPassword ? 'pw' : 'np';
  return {
    options: {
      requests: [
        {
          method: 'POST',
          path: '/graphql',
          headers: h,
          setupRequest: (req) => ({
            ...req,
            body: body(OPS.addHumanUser, {
              input: {
                profile: { firstName: 'Grace', lastName: 'Hopper' },
                email: { email: uniqueEmail(prefix), isVerified: true },
                ...(withPassword ? { password: { password: PASSWORD, changeRequired: false } } : {}),
              },
            }),
          }),
        },
      ],
    },
  };
}

/** The same request every time. */
/** Each connection alternates two profiles of a user of its own: every request is a change (never FAILED_PRECONDITION). */
async function alternatingProfiles(target: Target, connections: number): Promise<Load> {
  const users = await makeUsers(target, connections);
  return alternatingPerConnection(target, users, (u) =>
    graphqlPosts(
      body(OPS.updateHumanProfile, { input: { userId: u.id, ...PROFILES[0] } }),
      body(OPS.updateHumanProfile, { input: { userId: u.id, ...PROFILES[1] } }),
    ),
  );
}

export function fixed(target: Target, query: string, variables?: Record<string, unknown>): Load {
  return { options: { method: 'POST', headers: headers(target), body: body(query, variables) } };
}

export const scenarios: Scenario[] = [
  {
    name: 'raw-http',
    server: 'raw-http',
    what: 'node:http answering a small JSON POST (parse + stringify): the floor of this machine',
    load: async (target) => fixed(target, OPS.ping),
  },
  {
    name: 'yoga-ping',
    server: 'yoga-ping',
    what: 'bare graphql-yoga, `mutation { ping }`, same node:http wiring as the gateway',
    load: async (target) => fixed(target, OPS.ping),
  },
  {
    name: 'yoga-durable',
    server: 'yoga-durable',
    what: 'yoga-ping whose mutation commits one row to SQLite (worker thread, group commit, synchronous=FULL) before it answers: the floor of a durable write',
    floor: 'yoga-durable',
    async load(target, connections) {
      const { prefix, ids } = floorIds(connections);
      const load = alternatingPerConnection(target, ids, (u) =>
        graphqlPosts(body(OPS.save, { id: u.id, ...PROFILES[0] }), body(OPS.save, { id: u.id, ...PROFILES[1] })),
      );
      return { ...load, after: async () => ({ storeWrites: (await graphql(target, OPS.written, { prefix })).written }) };
    },
  },
  {
    name: 'grpc-durable',
    server: 'connect-durable',
    what: "bare connect-node (one method, the gateway's one-port h2c arrangement) whose UpdateHumanProfile commits one row as yoga-durable does, over gRPC from ghz: the floor of the gRPC face",
    floor: 'grpc-durable',
    loader: 'ghz',
    async load(target) {
      const prefix = runPrefix();
      return { ghz: grpcCall(target, prefix), after: () => floorWritten(target, prefix) };
    },
  },
  {
    name: 'connect-durable',
    server: 'connect-durable',
    what: 'the same floor over Connect with a JSON body (HTTP/1.1, autocannon): the floor of the Connect face',
    floor: 'connect-durable',
    async load(target, connections) {
      const { prefix, ids } = floorIds(connections);
      const load = alternatingPerConnection(
        target,
        ids,
        (u) =>
          PROFILES.map((p) => ({ method: 'POST', path: UPDATE_HUMAN_PROFILE_RPC, body: JSON.stringify({ userId: u.id, ...p }) })) as [
            HttpRequest,
            HttpRequest,
          ],
      );
      return { ...load, after: () => floorWritten(target, prefix) };
    },
  },
  {
    name: 'updateHumanProfile',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'JWT check, permission, validation, store append; each connection alternates two profiles of its own user',
    load: alternatingProfiles,
  },
  {
    name: 'updateHumanProfile (tracing on)',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'the same as updateHumanProfile with OpenTelemetry traces on: every request sampled, its spans exported over OTLP to a local sink',
    versus: 'updateHumanProfile',
    tracing: true,
    load: alternatingProfiles,
  },
  {
    name: 'updateHumanProfile-grpc',
    server: 'gateway',
    what: 'the same change as ManagementService/UpdateHumanProfile over gRPC (h2c, ghz, one stream at a time per connection)',
    versus: 'updateHumanProfile',
    floor: 'grpc-durable',
    loader: 'ghz',
    async load(target, connections) {
      const prefix = runPrefix();
      const users = await makeUsers(target, connections, (c) => `${prefix}${ghzWorker(c)}`);
      return { ghz: grpcCall(target, prefix), after: () => storeWrites(target, users) };
    },
  },
  {
    name: 'updateHumanProfile-connect',
    server: 'gateway',
    what: 'the same change as ManagementService/UpdateHumanProfile over Connect with a JSON body (HTTP/1.1)',
    versus: 'updateHumanProfile',
    floor: 'connect-durable',
    async load(target, connections) {
      const users = await makeUsers(target, connections);
      return alternatingPerConnection(target, users, (u) => [
        { method: 'POST', path: UPDATE_HUMAN_PROFILE_RPC, body: JSON.stringify({ userId: u.id, ...PROFILES[0] }) },
        { method: 'POST', path: UPDATE_HUMAN_PROFILE_RPC, body: JSON.stringify({ userId: u.id, ...PROFILES[1] }) },
      ]);
    },
  },
  {
    name: 'updateHumanProfile-rest',
    server: 'gateway',
    what: 'the same change as PUT /management/v1/users/{user_id}/profile (REST/JSON, HTTP/1.1)',
    versus: 'updateHumanProfile',
    async load(target, connections) {
      const users = await makeUsers(target, connections);
      return alternatingPerConnection(target, users, (u) => [
        { method: 'PUT', path: `/management/v1/users/${u.id}/profile`, body: JSON.stringify(PROFILES[0]) },
        { method: 'PUT', path: `/management/v1/users/${u.id}/profile`, body: JSON.stringify(PROFILES[1]) },
      ]);
    },
  },
  {
    name: 'setEmail-return',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'setEmail with returnCode (store append + code store); each connection alternates two addresses of its own user',
    async load(target, connections) {
      const users = await makeUsers(target, connections);
      return alternatingPerConnection(target, users, (u) =>
        graphqlPosts(
          body(OPS.setEmail, { input: { userId: u.id, email: `a-${u.id}@bench.example.com`, returnCode: true } }),
          body(OPS.setEmail, { input: { userId: u.id, email: `b-${u.id}@bench.example.com`, returnCode: true } }),
        ),
      );
    },
  },
  {
    name: 'updateHumanPhone',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'updateHumanPhone, verified (store append + phone code cleared); each connection alternates two numbers of its own user',
    async load(target, connections) {
      const users = await makeUsers(target, connections);
      return alternatingPerConnection(target, users, (u) =>
        graphqlPosts(
          body(OPS.updateHumanPhone, { input: { userId: u.id, phone: PHONES[0], isPhoneVerified: true } }),
          body(OPS.updateHumanPhone, { input: { userId: u.id, phone: PHONES[1], isPhoneVerified: true } }),
        ),
      );
    },
  },
  {
    name: 'addHumanUser',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'a new user (unique email/username) per request, no password',
    load: async (target) => uniqueUsers(target, false),
  },
  {
    name: 'addHumanUser+password',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'a new user per request with a password: bcrypt at BCRYPT_COST (default 10)',
    load: async (target) => uniqueUsers(target, true),
  },
  {
    name: 'me',
    server: 'gateway',
    floor: 'yoga-durable',
    what: 'query me with all user fields (read cost)',
    load: async (target) => fixed(target, OPS.me),
  },
];

/** The `me` load for the latency-under-load check. */
export const meLoad = (target: Target): Load => fixed(target, OPS.me);

// ---------------------------------------------------------------- one request at a time

/** An operation sent one request at a time (the round-trip table): the i-th request's body. */
export interface SequentialOp {
  name: string;
  what: string;
  /** Sets up what the requests need (a user) and returns the i-th request (i = 0, 1, 2, ...). */
  prepare(target: Target): Promise<(i: number) => HttpRequest & { headers: Record<string, string> }>;
}

const post = (target: Target, b: string) => ({ method: 'POST' as const, path: '/graphql', body: b, headers: headers(target) });

/** Every request a real change of one user, alternating its two states. */
const alternating = (name: string, what: string, bodies: (userId: string) => [string, string]): SequentialOp => ({
  name,
  what,
  async prepare(target) {
    const [user] = await makeUsers(target, 1);
    const pair = bodies(user!.id);
    return (i) => post(target, pair[i % 2]!);
  },
});

export const sequentialOps: SequentialOp[] = [
  alternating('updateHumanProfile', 'the profile of one user, two profiles in turn', (id) => [
    body(OPS.updateHumanProfile, { input: { userId: id, ...PROFILES[0] } }),
    body(OPS.updateHumanProfile, { input: { userId: id, ...PROFILES[1] } }),
  ]),
  alternating('setEmail-return', 'setEmail with returnCode: the event and the code in Redis', (id) => [
    body(OPS.setEmail, { input: { userId: id, email: `a-${id}@bench.example.com`, returnCode: true } }),
    body(OPS.setEmail, { input: { userId: id, email: `b-${id}@bench.example.com`, returnCode: true } }),
  ]),
  alternating('updateHumanPhone', 'updateHumanPhone, verified: the event and the phone code cleared in Redis', (id) => [
    body(OPS.updateHumanPhone, { input: { userId: id, phone: PHONES[0], isPhoneVerified: true } }),
    body(OPS.updateHumanPhone, { input: { userId: id, phone: PHONES[1], isPhoneVerified: true } }),
  ]),
  {
    name: 'addHumanUser',
    what: 'a new user per request (unique email and username claims), no password',
    async prepare(target) {
      return () =>
        post(
          target,
          body(OPS.addHumanUser, {
            input: { profile: { firstName: 'Grace', lastName: 'Hopper' }, email: { email: uniqueEmail('seq'), isVerified: true } },
          }),
        );
    },
  },
  {
    name: 'me',
    what: 'query me with all user fields',
    async prepare(target) {
      const b = body(OPS.me);
      return () => post(target, b);
    },
  },
];
