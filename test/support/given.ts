// given(events) → when(command) → then(new events | AppError), over the SQLite event
// store the quick start runs on (the ZITADEL style of internal/command tests, issue 12 step 1).
//
// - given(facts) opens a fresh SQLite store in a temp folder and appends the
//   facts as events (sequences counted per aggregate, the n-th event of every
//   aggregate in one wave), with what a command needs: config from loadConfig
//   (temp DATA_DIR, BCRYPT_COST 4), a memory code store and rate limiter on a
//   clock the test moves (h.clock), a recording notifier (h.notifier.jobs),
//   deterministic ids ('id-1', 'id-2', ...) and a fixed IDP secret key.
// - h.when(ctx => command(ctx, input), { caller, orgHeader, authError }) runs one
//   command and collects what it did: its result or error, the new events on
//   every aggregate (listed by aggregate type, id, sequence), the delivery jobs.
// - then: expectEvents / expectError, or a table row's `then` through
//   commandTable(command, rows). An error writes no event anywhere and sends
//   nothing; no event payload holds a secret of the row, or a code the command
//   handed out, in clear; every event records the caller.
//
// The store is touched only through its port: createSqliteStore (as src/stores.ts opens
// it), append (seeding: NewEvent + claims), load, lookup, events. The facts are built like the commands build them
// (src/model event names and payloads); test/commands.given.test.ts checks each
// builder against the command that writes the same event.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, onTestFinished } from 'vitest';
import { createCodeService } from '../../src/codes/codes.ts';
import { createMemoryCodeStore } from '../../src/codes/memory.ts';
import type { CommandContext, Deps } from '../../src/commands/context.ts';
import { newOrgHints } from '../../src/commands/org-hints.ts';
import { newCommandContext } from '../../src/commands/request-context.ts';
import { orgDomain } from '../../src/commands/orgs.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { TEST_DEFAULTS } from './test-defaults.ts';
import { AppError, type ErrorCode } from '../../src/errors.ts';
import { idpEvents, idpNameClaim, type OIDCMappingField } from '../../src/model/idps.ts';
import { INSTANCE_ID, instanceEvents, orgEvents } from '../../src/model/orgs.ts';
import { createPasswordHasher } from '../../src/model/passwords.ts';
import { projectClaims, projectEvents } from '../../src/model/projects.ts';
import { reducers } from '../../src/model/reducers.ts';
import { seal } from '../../src/model/secret-box.ts';
import { userEvents, userSearchFields, type Profile } from '../../src/model/users.ts';
import type { DeliveryJob, EnqueueOptions, Notifier } from '../../src/notify/port.ts';
import { createMemoryRateLimiter } from '../../src/notify/rate-limit.ts';
import type { AggregateType, EventStore, NewEvent, StoredEvent } from '../../src/store/port.ts';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.ts';

const AGGREGATE_TYPES: AggregateType[] = ['instance', 'org', 'user', 'idp', 'project'];

/** The AES-256-GCM key of OIDC client secrets in every harness. */
export const TEST_IDP_KEY = Buffer.alloc(32, 7);

/** A bcrypt hash (cost 4) of 'Password1!', for users seeded with a password. */
export const SEEDED_PASSWORD_HASH = '$2y$04$Cxq5Gf.Ih4FQcZ.xMxZrNOP.f01Bc4pgdp0MRnz.VBz3bEhF08eCm';

// ---------------------------------------------------------------------------
// Facts: the events a test starts from.

/** One event to seed. resourceOwner may be left out on later events: the aggregate's owner is used. */
export interface Fact {
  aggregateType: AggregateType;
  aggregateId: string;
  type: string;
  payload: Record<string, unknown>;
  resourceOwner?: string;
  creator?: string;
  claims?: string[];
}

/** The organization's domain, as createOrg derives it (instance domain 'localhost'). */
export const domainOf = (name: string, instanceDomain = 'localhost') => orgDomain(name, instanceDomain);

export interface HumanOptions {
  username?: string;
  email?: string;
  emailVerified?: boolean;
  phone?: string | null;
  phoneVerified?: boolean;
  passwordHash?: string | null;
  passwordChangeRequired?: boolean;
  profile?: Partial<Profile>;
  metadata?: { key: string; value: string }[];
  idpLinks?: { idpId: string; userId: string; userName: string }[];
}

export function profileOf(id: string, p: Partial<Profile> = {}): Profile {
  return {
    firstName: p.firstName ?? id.charAt(0).toUpperCase() + id.slice(1),
    lastName: p.lastName ?? 'Tester',
    nickName: p.nickName ?? null,
    displayName: p.displayName ?? null,
    preferredLanguage: p.preferredLanguage ?? null,
    gender: p.gender ?? 'GENDER_UNSPECIFIED',
  };
}

export interface SamlAppOptions {
  appId: string;
  name: string;
  entityId: string;
  metadataUrl?: string | null;
  metadataXml?: string;
}

export interface U2FPendingOptions {
  id: string;
  challenge: string;
  rpId?: string;
  origins?: string[];
  /** ISO time; default: 5 minutes from now. */
  expiresAt?: string;
}

export interface OidcOptions {
  name?: string;
  issuer?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  displayNameMapping?: OIDCMappingField;
  usernameMapping?: OIDCMappingField;
}

/** Builders of the common facts, shaped as the commands write them. */
export const facts = {
  /** The instance with its first administrator (IAM_OWNER) and default organization, as bootstrap writes it. */
  instance: (adminUserId: string, defaultOrgId: string): Fact => ({
    aggregateType: 'instance',
    aggregateId: INSTANCE_ID,
    type: instanceEvents.setUp,
    payload: { adminUserId, defaultOrgId },
    resourceOwner: INSTANCE_ID,
    creator: 'system',
  }),

  /** An organization named `name`, with the domain and claims of createOrg. */
  org: (id: string, name: string): Fact => {
    const domain = domainOf(name);
    return {
      aggregateType: 'org',
      aggregateId: id,
      type: orgEvents.added,
      payload: { name, domain },
      resourceOwner: id,
      claims: [`orgDomain:${domain}`, `orgName:${name.toLowerCase()}`],
    };
  },

  /** A human user of `orgId`, with the payload and claims of addHumanUser. */
  human: (id: string, orgId: string, o: HumanOptions = {}): Fact => {
    const username = o.username ?? id;
    const idpLinks = o.idpLinks ?? [];
    const passwordHash = o.passwordHash ?? null;
    return {
      aggregateType: 'user',
      aggregateId: id,
      type: userEvents.added,
      resourceOwner: orgId,
      payload: {
        username,
        profile: profileOf(id, o.profile),
        email: { email: o.email ?? `${id}@example.com`, isVerified: o.emailVerified ?? true },
        phone: o.phone ? { phone: o.phone, isVerified: o.phoneVerified ?? false } : null,
        passwordHash,
        passwordChangeRequired: passwordHash ? (o.passwordChangeRequired ?? false) : false,
        metadata: o.metadata ?? [],
        idpLinks,
        u2fTokens: [],
      },
      claims: [`username:${username.normalize('NFKC').toLowerCase()}`, ...idpLinks.map((l) => `idpLink:${l.idpId}:${l.userId}`)],
    };
  },

  /**
   * Roles of `userId` in `orgId`, as addOrgMember writes them: the membership
   * noted on the user, then the grant (`roles` is the whole set held afterwards).
   */
  member: (orgId: string, userId: string, roles: string[]): Fact[] => [
    { aggregateType: 'user', aggregateId: userId, type: userEvents.memberOfRecorded, payload: { orgId } },
    { aggregateType: 'org', aggregateId: orgId, type: orgEvents.memberAdded, payload: { userId, roles: [...new Set(roles)].sort() } },
  ],

  /** An OIDC identity provider of `orgId`, its secret sealed with TEST_IDP_KEY. */
  idp: (id: string, orgId: string, o: OidcOptions = {}): Fact => {
    const name = o.name ?? `IdP ${id}`;
    return {
      aggregateType: 'idp',
      aggregateId: id,
      type: idpEvents.oidcAdded,
      resourceOwner: orgId,
      payload: {
        name,
        issuer: o.issuer ?? 'https://issuer.example.com',
        clientId: o.clientId ?? 'client-1',
        scopes: o.scopes ?? ['openid'],
        displayNameMapping: o.displayNameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
        usernameMapping: o.usernameMapping ?? 'OIDC_MAPPING_FIELD_UNSPECIFIED',
        clientSecret: seal(TEST_IDP_KEY, id, o.clientSecret ?? 'seeded-secret'),
      },
      claims: [idpNameClaim(orgId, name)],
    };
  },

  /** A project of `orgId`. */
  project: (id: string, orgId: string, name = `Project ${id}`): Fact => ({
    aggregateType: 'project',
    aggregateId: id,
    type: projectEvents.added,
    payload: { name },
    resourceOwner: orgId,
    claims: [projectClaims.name(orgId, name)],
  }),

  /** A SAML application in project `projectId`. */
  samlApp: (projectId: string, o: SamlAppOptions): Fact => ({
    aggregateType: 'project',
    aggregateId: projectId,
    type: projectEvents.samlAppAdded,
    payload: {
      appId: o.appId,
      name: o.name,
      entityId: o.entityId,
      metadataUrl: o.metadataUrl ?? null,
      metadataXml: o.metadataXml ?? Buffer.from(samlMetadata(o.entityId)).toString('base64'),
    },
    claims: [projectClaims.entityId(o.entityId)],
  }),

  /** A pending U2F registration of `userId`, as registerU2F writes it. */
  u2fPending: (userId: string, o: U2FPendingOptions): Fact => ({
    aggregateType: 'user',
    aggregateId: userId,
    type: userEvents.u2fAdded,
    payload: {
      id: o.id,
      challenge: o.challenge,
      rpId: o.rpId ?? 'localhost',
      origins: o.origins ?? ['http://localhost:4000'],
      expiresAt: o.expiresAt ?? new Date(Date.now() + 5 * 60_000).toISOString(),
    },
  }),

  /** A verified U2F token, as verifyU2FRegistration writes it (after a u2fPending with the same id). */
  u2fReady: (
    userId: string,
    o: { id: string; name: string; credentialId: string; publicKey?: string; counter?: number; transports?: string[] },
  ): Fact => ({
    aggregateType: 'user',
    aggregateId: userId,
    type: userEvents.u2fVerified,
    payload: {
      id: o.id,
      name: o.name,
      credentialId: o.credentialId,
      publicKey: o.publicKey ?? 'cHVibGlj',
      counter: o.counter ?? 0,
      transports: o.transports ?? [],
    },
    claims: [`u2fCredential:${o.credentialId}`],
  }),

  emailChanged: (userId: string, email: string, isVerified = false): Fact => ({
    aggregateType: 'user',
    aggregateId: userId,
    type: userEvents.emailChanged,
    payload: { email, isVerified },
  }),

  phoneChanged: (userId: string, phone: string, isVerified = false): Fact => ({
    aggregateType: 'user',
    aggregateId: userId,
    type: userEvents.phoneChanged,
    payload: { phone, isVerified },
  }),
};

/** SAML 2.0 metadata with `entityId`. */
export const samlMetadata = (entityId: string) =>
  `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
  `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs" index="0"/>` +
  `</md:SPSSODescriptor></md:EntityDescriptor>`;

// ---------------------------------------------------------------------------
// The standard world most rows start from.

export const ADMIN = 'admin';
export const DEFAULT_ORG = 'org-default';
export const ORG_A = 'org-a';
export const ORG_B = 'org-b';
/** Users, by what they hold. All but admin (default org), owner-b and bob (org-b) live in org-a. */
export const U = {
  admin: ADMIN,
  /** ORG_OWNER in org-a. */
  ownerA: 'owner-a',
  /** ORG_USER_MANAGER in org-a. */
  managerA: 'manager-a',
  /** ORG_USER_MANAGER in org-a too: holds what manager-a holds. */
  peerA: 'peer-a',
  /** ORG_SETTINGS_MANAGER in org-a. */
  settingsA: 'settings-a',
  /** ORG_PROJECT_CREATOR in org-a. */
  creatorA: 'creator-a',
  /** No role anywhere; in org-a. */
  alice: 'alice',
  /** Lives in org-a, ORG_USER_MANAGER in org-b only. */
  helperB: 'helper-b',
  /** ORG_OWNER in org-b; lives in org-b. */
  ownerB: 'owner-b',
  /** No role anywhere; in org-b. */
  bob: 'bob',
} as const;

/**
 * The world: the instance (admin IAM_OWNER, default org), organizations Acme
 * (org-a) and Beta (org-b), and the users of U with their roles.
 */
export const world: readonly Fact[] = Object.freeze([
  facts.instance(ADMIN, DEFAULT_ORG),
  facts.org(DEFAULT_ORG, 'Default'),
  facts.org(ORG_A, 'Acme'),
  facts.org(ORG_B, 'Beta'),
  facts.human(ADMIN, DEFAULT_ORG, {
    username: 'admin',
    email: 'admin@localhost',
    profile: { firstName: 'Instance', lastName: 'Administrator', displayName: 'Administrator', preferredLanguage: 'en' },
  }),
  facts.human(U.ownerA, ORG_A),
  facts.human(U.managerA, ORG_A),
  facts.human(U.peerA, ORG_A),
  facts.human(U.settingsA, ORG_A),
  facts.human(U.creatorA, ORG_A),
  facts.human(U.alice, ORG_A, { phone: '+41791234567', phoneVerified: true }),
  facts.human(U.helperB, ORG_A),
  facts.human(U.ownerB, ORG_B),
  facts.human(U.bob, ORG_B),
  ...facts.member(ORG_A, U.ownerA, ['ORG_OWNER']),
  ...facts.member(ORG_A, U.managerA, ['ORG_USER_MANAGER']),
  ...facts.member(ORG_A, U.peerA, ['ORG_USER_MANAGER']),
  ...facts.member(ORG_A, U.settingsA, ['ORG_SETTINGS_MANAGER']),
  ...facts.member(ORG_A, U.creatorA, ['ORG_PROJECT_CREATOR']),
  ...facts.member(ORG_B, U.ownerB, ['ORG_OWNER']),
  ...facts.member(ORG_B, U.helperB, ['ORG_USER_MANAGER']),
]);

/** The instance administrator of bossWorld: IAM_OWNER, living in org-a. */
export const BOSS = 'boss';

/**
 * The world with the instance set up for BOSS (a user of org-a) instead of
 * admin (still there, default org, no role): an IAM_OWNER that org-a's
 * managers can reach.
 */
export const bossWorld: readonly Fact[] = Object.freeze([facts.instance(BOSS, DEFAULT_ORG), ...world.slice(1), facts.human(BOSS, ORG_A)]);

// ---------------------------------------------------------------------------
// The harness.

/** A notifier that keeps the jobs it is handed. */
export interface RecordingNotifier extends Notifier {
  readonly jobs: DeliveryJob[];
  /** Makes the next enqueue throw (a queue that cannot be reached). */
  failNext: boolean;
}

function recordingNotifier(channels: { email: boolean; sms: boolean }): RecordingNotifier {
  const jobs: DeliveryJob[] = [];
  const notifier: RecordingNotifier = {
    jobs,
    failNext: false,
    async enqueue(job: DeliveryJob, _options?: EnqueueOptions) {
      if (notifier.failNext) {
        notifier.failNext = false;
        throw new Error('queue unreachable');
      }
      jobs.push({ ...job });
    },
    canDeliver: (channel) => channels[channel],
    async close() {},
  };
  return notifier;
}

export interface GivenOptions {
  /** Environment for loadConfig on top of DATA_DIR and BCRYPT_COST. */
  env?: Record<string, string>;
  /** canDeliver('sms'); default false (no SMS provider, as the quick start). */
  sms?: boolean;
}

/** An event as the tests compare it. */
export interface EventView {
  aggregateType: AggregateType;
  aggregateId: string;
  type: string;
  payload: Record<string, unknown>;
  resourceOwner: string;
  creator: string;
  sequence: number;
  createdAt: Date;
}

export interface As {
  /** The authenticated user id; null or absent: no token. */
  caller?: string | null;
  orgHeader?: string | null;
  /** A token was sent but is not valid. */
  authError?: Error;
}

export type Outcome<R> =
  | { ok: true; result: R; events: EventView[]; jobs: DeliveryJob[]; caller: string | null }
  | { ok: false; error: unknown; events: EventView[]; jobs: DeliveryJob[]; caller: string | null };

export interface Harness {
  deps: Deps;
  store: EventStore;
  config: Config;
  notifier: RecordingNotifier;
  /** The clock of the code store and rate limiter (ms); advance() moves it on. */
  clock: { now(): number; advance(ms: number): void };
  /** Values a row's arrange step leaves for its input and checks. */
  vars: Record<string, any>;
  /** The ids newId handed out so far. */
  issuedIds: string[];
  /** The id newId hands out next. */
  nextId(offset?: number): string;
  ctx(as?: As): CommandContext;
  when<R>(run: (ctx: CommandContext) => Promise<R>, as?: As): Promise<Outcome<R>>;
  /** All events of one aggregate. */
  events(type: AggregateType, id: string): Promise<StoredEvent[]>;
  /** Appends more facts (after given). */
  seed(more: readonly Fact[]): Promise<void>;
  close(): Promise<void>;
}

const view = (e: StoredEvent): EventView => ({
  aggregateType: e.aggregateType,
  aggregateId: e.aggregateId,
  type: e.type,
  payload: e.payload,
  resourceOwner: e.resourceOwner,
  creator: e.creator,
  sequence: e.sequence,
  createdAt: e.createdAt,
});

const keyOf = (type: AggregateType, id: string) => `${type}\u0000${id}`;

/**
 * The store with every call of an append-like method noted, so that the
 * harness knows each aggregate a command wrote to (whatever the store's write
 * methods are called after the core changes), and each one that succeeded counted.
 */
function recorded(store: EventStore, touched: (type: AggregateType, id: string) => void, succeeded: () => void): EventStore {
  const note = (arg: unknown) => {
    for (const item of Array.isArray(arg) ? arg : [arg]) {
      const e = item as Partial<NewEvent> | null;
      if (e && typeof e === 'object' && typeof e.aggregateType === 'string' && typeof e.aggregateId === 'string') {
        touched(e.aggregateType as AggregateType, e.aggregateId);
      }
    }
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && /^(append|write|commit|save|insert)/i.test(prop)) {
        return (...args: unknown[]) => {
          args.forEach(note);
          const result = value.apply(target, args);
          return result instanceof Promise ? result.then((r) => (succeeded(), r)) : result;
        };
      }
      return value.bind(target);
    },
  });
}

interface FreshStore {
  dataDir: string;
  store: SqliteStore;
}

/** An empty SQLite store in a new temp folder, as src/stores.ts opens it (SNAPSHOT_CACHE_MB at its default). */
async function openFreshStore(): Promise<FreshStore> {
  const dataDir = await mkdtemp(join(tmpdir(), 'cmd-given-'));
  return { dataDir, store: await createSqliteStore({ dataDir, reducers, userFields: userSearchFields }) };
}

// Each given() takes the store opened while the test before ran and opens the next one: a
// SQLite store starts a worker thread, 100 to 250 ms on a loaded 2-core machine, which would
// otherwise add up to minutes over the command tables. The last one is closed after the file.
let spare: Promise<FreshStore> | undefined;
async function freshStore(): Promise<FreshStore> {
  const taken = spare ?? openFreshStore();
  spare = openFreshStore();
  spare.catch(() => {}); // its failure is the next given()'s
  return taken;
}
afterAll(async () => {
  const last = await spare?.catch(() => undefined);
  spare = undefined;
  if (!last) return;
  await last.store.close();
  await rm(last.dataDir, { recursive: true, force: true });
});

/**
 * A fresh SQLite store holding `given`, and what a command needs around it.
 * Closed when the test ends.
 */
export async function given(seedFacts: readonly Fact[] = world, options: GivenOptions = {}): Promise<Harness> {
  const { dataDir, store: raw } = await freshStore();
  const config = loadConfig({ ...TEST_DEFAULTS, DATA_DIR: dataDir, ...options.env });
  let time = Date.now();
  const clock = { now: () => time, advance: (ms: number) => void (time += ms) };

  /** Every aggregate known to the test: seeded, written through the store, or named by a generated id. */
  const known = new Map<string, { type: AggregateType; id: string }>();
  const know = (type: AggregateType, id: string) => known.set(keyOf(type, id), { type, id });
  let written = 0;
  const store = recorded(raw, know, () => void written++);

  const issuedIds: string[] = [];
  let counter = 0;
  const newId = () => {
    const id = `id-${++counter}`;
    issuedIds.push(id);
    for (const type of AGGREGATE_TYPES) know(type, id);
    return id;
  };

  const notifier = recordingNotifier({ email: true, sms: options.sms ?? false });
  const codes = createCodeService({
    store: createMemoryCodeStore({ now: clock.now }),
    hmacKey: 'test-hmac-key',
    ttlSeconds: config.codeTtlSeconds,
    maxAttempts: config.codeMaxAttempts,
  });
  const deps: Deps = {
    config,
    store,
    codes,
    notifier,
    rateLimiter: createMemoryRateLimiter(clock.now),
    hasher: createPasswordHasher({ cost: config.bcryptCost }),
    newId,
    idpSecretKey: TEST_IDP_KEY,
    orgHints: newOrgHints(),
  };

  // Sequences and owners as the seeding goes.
  const tips = new Map<string, { sequence: number; resourceOwner: string }>();
  async function seed(more: readonly Fact[]) {
    // In waves: the n-th event of every aggregate together (one group commit), waves in order.
    const waves: NewEvent[][] = [];
    const claimsOf = new Map<NewEvent, string[]>();
    const perAggregate = new Map<string, number>();
    for (const f of more) {
      const key = keyOf(f.aggregateType, f.aggregateId);
      const tip = tips.get(key);
      const resourceOwner = f.resourceOwner ?? tip?.resourceOwner;
      if (!resourceOwner)
        throw new Error(`given: ${f.type} on ${f.aggregateType} ${f.aggregateId} needs a resourceOwner (no earlier event)`);
      const sequence = (tip?.sequence ?? 0) + 1;
      tips.set(key, { sequence, resourceOwner });
      const event: NewEvent = {
        aggregateType: f.aggregateType,
        aggregateId: f.aggregateId,
        sequence,
        type: f.type,
        payload: structuredClone(f.payload),
        creator: f.creator ?? ADMIN,
        resourceOwner,
      };
      claimsOf.set(event, f.claims ?? []);
      const n = perAggregate.get(key) ?? 0;
      perAggregate.set(key, n + 1);
      (waves[n] ??= []).push(event);
      know(f.aggregateType, f.aggregateId);
    }
    for (const wave of waves) {
      await Promise.all(wave.map((e) => raw.append(e, { claims: claimsOf.get(e) }).then(() => void written++)));
    }
  }
  await seed(seedFacts);

  const ctx = (as: As = {}): CommandContext =>
    newCommandContext(deps, { callerId: as.caller ?? null, ...(as.authError ? { authError: as.authError } : {}) }, as.orgHeader ?? null);

  async function sequences(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    await Promise.all([...known.entries()].map(async ([key, { type, id }]) => out.set(key, (await raw.events(type, id)).length)));
    return out;
  }

  // Appends that succeeded, through the store the commands get or seeded (a racing writer
  // seeds during a command); the SQLite store's own stats.appends also counts those its
  // commit refused (a claim its worker found taken).
  const appendsSoFar = () => written;

  async function when<R>(run: (ctx: CommandContext) => Promise<R>, as: As = {}): Promise<Outcome<R>> {
    const before = await sequences();
    const appendsBefore = appendsSoFar();
    const jobsBefore = notifier.jobs.length;
    let outcome: { ok: true; result: R } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await run(ctx(as)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const events: EventView[] = [];
    for (const [key, { type, id }] of known) {
      const all = await raw.events(type, id);
      events.push(...all.slice(before.get(key) ?? 0).map(view));
    }
    // Listed by aggregate type, id and sequence (a stable order, whatever the order of the writes).
    events.sort(
      (a, b) => a.aggregateType.localeCompare(b.aggregateType) || a.aggregateId.localeCompare(b.aggregateId) || a.sequence - b.sequence,
    );
    // Belt and braces: the appends that succeeded agree (an event on an aggregate nobody knew of shows here).
    expect(appendsSoFar() - appendsBefore, 'appends that succeeded vs new events found').toBe(events.length);
    return { ...outcome, events, jobs: notifier.jobs.slice(jobsBefore), caller: as.caller ?? null } as Outcome<R>;
  }

  let closed = false;
  const harness: Harness = {
    deps,
    store,
    config,
    notifier,
    clock,
    vars: {},
    issuedIds,
    nextId: (offset = 0) => `id-${counter + 1 + offset}`,
    ctx,
    when,
    events: (type, id) => raw.events(type, id),
    seed,
    async close() {
      if (closed) return;
      closed = true;
      await raw.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  try {
    onTestFinished(() => harness.close());
  } catch {
    // outside a test (a hook): the caller closes it
  }
  return harness;
}

// ---------------------------------------------------------------------------
// then

/** An expected event: payload may hold asymmetric matchers (expect.stringMatching ...). */
export interface ExpectedEvent {
  aggregateType: AggregateType;
  aggregateId: string;
  type: string;
  payload: Record<string, unknown>;
  /** Default: the aggregate's owner is not checked here when absent. */
  resourceOwner?: string;
}

export const event = (
  aggregateType: AggregateType,
  aggregateId: string,
  type: string,
  payload: Record<string, unknown>,
  resourceOwner?: string,
): ExpectedEvent => ({
  aggregateType,
  aggregateId,
  type,
  payload,
  ...(resourceOwner ? { resourceOwner } : {}),
});

export interface ExpectedError {
  code: ErrorCode;
  message?: RegExp;
  /** INVALID_ARGUMENT: the violated fields, exactly (order ignored). */
  fields?: string[];
}

/** Every string found in a value (for the secret scan). */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => stringsIn(v, out));
  else if (value && typeof value === 'object' && !(value instanceof Date)) Object.values(value).forEach((v) => stringsIn(v, out));
  return out;
}

/** No event payload holds any of `secrets` (nor a code the command handed out). */
export function expectNoSecrets(outcome: Outcome<unknown>, secrets: readonly string[] = []) {
  const codes = outcome.jobs.map((j) => j.code);
  if (outcome.ok && outcome.result && typeof outcome.result === 'object') {
    for (const [k, v] of Object.entries(outcome.result)) if (/code/i.test(k) && typeof v === 'string') codes.push(v);
  }
  const all = [...secrets, ...codes].filter((s) => s.length >= 4);
  for (const e of outcome.events) {
    const held = stringsIn(e.payload);
    for (const secret of all) {
      expect(
        held.some((s) => s.includes(secret)),
        `event ${e.type} on ${e.aggregateType} ${e.aggregateId} holds a secret in clear`,
      ).toBe(false);
    }
  }
}

/** The command succeeded and appended exactly `expected` (in aggregate, sequence order), each recording the caller. */
export function expectEvents<R>(outcome: Outcome<R>, expected: readonly ExpectedEvent[], secrets: readonly string[] = []): R {
  if (!outcome.ok) {
    const e = outcome.error;
    throw new Error(`expected success, got ${e instanceof AppError ? `${e.code}: ${e.message}` : String((e as Error)?.stack ?? e)}`);
  }
  const actual = outcome.events.map(({ aggregateType, aggregateId, type, payload, resourceOwner }, i) => ({
    aggregateType,
    aggregateId,
    type,
    payload,
    ...(expected[i]?.resourceOwner !== undefined ? { resourceOwner } : {}),
  }));
  expect(actual).toEqual(expected);
  for (const e of outcome.events) expect(e.creator, `creator of ${e.type}`).toBe(outcome.caller ?? 'system');
  expectNoSecrets(outcome, secrets);
  return outcome.result;
}

/** The command failed with `expected`, appended nothing anywhere and handed nothing to the notifier. */
export function expectError(outcome: Outcome<unknown>, expected: ExpectedError): AppError {
  if (outcome.ok) throw new Error(`expected ${expected.code}, got success: ${JSON.stringify(outcome.result)}`);
  const err = outcome.error;
  if (!(err instanceof AppError)) throw new Error(`expected AppError ${expected.code}, got ${String((err as Error)?.stack ?? err)}`);
  expect({ code: err.code, message: err.message }).toEqual({
    code: expected.code,
    message: expected.message ? expect.stringMatching(expected.message) : expect.any(String),
  });
  if (err.code === 'INVALID_ARGUMENT') {
    if (!expected.fields) throw new Error('an INVALID_ARGUMENT row names its violated fields');
    expect(violatedFields(err)).toEqual([...expected.fields].sort());
  } else if (expected.fields) {
    throw new Error(`fields given for ${err.code}`);
  }
  expect(outcome.events, 'no new event after an error').toEqual([]);
  expect(outcome.jobs, 'nothing sent after an error').toEqual([]);
  return err;
}

export const violatedFields = (err: AppError) =>
  err.details.flatMap((d) => ((d as { fieldViolations?: { field: string }[] }).fieldViolations ?? []).map((v) => v.field)).sort();

// ---------------------------------------------------------------------------
// Tables

export type Input = unknown | ((h: Harness) => unknown | Promise<unknown>);

export type Then<R> =
  | {
      /** The new events, exactly. */
      events: readonly ExpectedEvent[] | ((h: Harness) => readonly ExpectedEvent[]);
      /** Checks on the result (and anything else observable). */
      result?: (result: R, h: Harness, outcome: Outcome<R>) => void | Promise<void>;
      /** Delivery jobs handed over, each matched as a subset; default none. */
      jobs?: readonly Partial<DeliveryJob>[];
      /** Clear values no event may hold (passwords, client secrets). */
      secrets?: readonly string[];
      /**
       * The result's details (result.details, or the result itself) match the last
       * new event; true: with creationDate (= changeDate), false: creationDate null.
       */
      details?: boolean;
    }
  | { error: ExpectedError; after?: (h: Harness, err: AppError) => void | Promise<void> };

export interface Row<R> {
  name: string;
  /** Default: world. */
  given?: readonly Fact[];
  options?: GivenOptions;
  /** Runs after given, before the command (codes to issue, clocks to move). */
  arrange?: (h: Harness) => void | Promise<void>;
  caller: string | null;
  orgHeader?: string;
  authError?: Error;
  input: Input;
  then: Then<R>;
}

/** Runs one row: given → when → then. */
export async function runRow<R>(command: (ctx: CommandContext, input: unknown) => Promise<R>, row: Row<R>): Promise<Outcome<R>> {
  const h = await given(row.given ?? world, row.options);
  await row.arrange?.(h);
  const input = typeof row.input === 'function' ? await (row.input as (h: Harness) => unknown)(h) : row.input;
  const outcome = await h.when((ctx) => command(ctx, input), {
    caller: row.caller,
    orgHeader: row.orgHeader ?? null,
    authError: row.authError,
  });
  const then = row.then;
  if ('error' in then) {
    const err = expectError(outcome, then.error);
    await then.after?.(h, err);
  } else {
    const expected = typeof then.events === 'function' ? then.events(h) : then.events;
    const result = expectEvents(outcome, expected, then.secrets);
    expect(outcome.jobs.length, `jobs: ${JSON.stringify(outcome.jobs.map(({ code: _c, ...j }) => j))}`).toBe(then.jobs?.length ?? 0);
    then.jobs?.forEach((job, i) => expect(outcome.jobs[i]).toMatchObject(job));
    if (then.details !== undefined) {
      const r = result as { details?: unknown };
      expectDetailsOf((r.details ?? r) as Parameters<typeof expectDetailsOf>[0], outcome, then.details);
    }
    await then.result?.(result, h, outcome);
  }
  return outcome;
}

/** One test per row. */
export function commandTable<R>(command: (ctx: CommandContext, input: unknown) => Promise<R>, rows: readonly Row<R>[]) {
  const names = new Set<string>();
  for (const row of rows) {
    if (names.has(row.name)) throw new Error(`duplicate row name: ${row.name}`);
    names.add(row.name);
    it(row.name, async () => {
      await runRow(command, row);
    });
  }
}

/**
 * SPEC.md's details match the command's event: the last new event on the
 * aggregate of the first new event (new events are listed by aggregate type, id
 * and sequence; addOrgMember's org event comes before its user event).
 */
export function expectDetailsOf(
  details: { sequence: number; creationDate: Date | null; changeDate: Date; resourceOwner: string },
  outcome: Outcome<unknown>,
  withCreationDate: boolean,
) {
  const first = outcome.events[0];
  if (!first) throw new Error('details checked without a new event');
  const last = outcome.events.filter((e) => e.aggregateType === first.aggregateType && e.aggregateId === first.aggregateId).at(-1)!;
  expect(details.sequence).toBe(last.sequence);
  expect(details.resourceOwner).toBe(last.resourceOwner);
  expect(details.changeDate).toEqual(last.createdAt);
  if (withCreationDate) expect(details.creationDate).toEqual(details.changeDate);
  else expect(details.creationDate).toBeNull();
}

/**
 * The three ways to be unauthenticated, for any command: no token, a token that
 * did not verify, a token naming no known user. Each is UNAUTHENTICATED.
 */
export function unauthenticatedRows<R>(input: Input, given_: readonly Fact[] = world): Row<R>[] {
  return [
    {
      name: 'no token: UNAUTHENTICATED',
      given: given_,
      caller: null,
      input,
      then: { error: { code: 'UNAUTHENTICATED', message: /Authentication required/ } },
    },
    {
      name: 'a token that did not verify: UNAUTHENTICATED with its reason',
      given: given_,
      caller: U.ownerA,
      authError: an.expiredToken(),
      input,
      then: { error: { code: 'UNAUTHENTICATED', message: /expired/ } },
    },
    {
      name: 'a token naming no known user: UNAUTHENTICATED',
      given: given_,
      caller: 'ghost',
      input,
      then: { error: { code: 'UNAUTHENTICATED', message: /no known user/ } },
    },
  ];
}

/** Common inputs. */
export const an = {
  profile: (over: Record<string, unknown> = {}) => ({ firstName: 'Ada', lastName: 'Lovelace', ...over }),
  expiredToken: () => new AppError('UNAUTHENTICATED', 'The token has expired'),
};

/** A string of n code points. */
export const chars = (n: number, c = 'a') => c.repeat(n);
