// A fleet for the multi-process test (test/e2e.fleet.test.ts): three real gateway processes
// (`node --import tsx src/main.ts`, test/support/child-gateway.ts) on one MongoDB-wire server,
// one Redis Cluster (test/support/redis-cluster.ts; or one redis-server with AOF when
// FLEET_REDIS=single, for debugging) and one SMTP catcher that can be slowed down.
// All three share the token signing key, CODE_HMAC_KEY and IDP_SECRET_KEY, as replicas do.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { Redis } from 'ioredis';
import { simpleParser } from 'mailparser';
import { MongoClient } from 'mongodb';
import { SMTPServer } from 'smtp-server';
import { loadOrCreateLocalKey } from '../../src/auth/local-key.ts';
import { createLocalTokenSigner } from '../../src/auth/tokens.ts';
import { AddHumanUserDocument, AddOrgMemberDocument } from '../generated/graphql.ts';
import { spawnGateway, type ChildGateway } from './child-gateway.ts';
import { createInbox } from './inbox.ts';
import { freePort, readResponse } from './net.ts';
import { ownRedis } from './own-redis.ts';
import { startRedisCluster } from './redis-cluster.ts';

// ---------------------------------------------------------------- Redis: a cluster, or one server

export interface FleetRedis {
  mode: 'cluster' | 'single';
  /** What the gateways get: REDIS_CLUSTER_NODES, or REDIS_URL. */
  env: Record<string, string>;
  /** Ports of the (master) nodes, in the order kill/restart number them. */
  ports: number[];
  /** Index (into ports) of the node that serves a key now. */
  nodeOf(key: string): Promise<number>;
  /** SIGKILL node i. */
  kill(i: number): Promise<void>;
  /** Start node i again (same port, same data folder); resolves when it serves again. */
  restart(i: number): Promise<void>;
  stop(): Promise<void>;
}

/** A direct connection to one node, for the test's own look at it. */
export function nodeClient(port: number): Redis {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  client.on('error', () => {});
  return client;
}

async function onNode<T>(port: number, op: (c: Redis) => Promise<T>): Promise<T> {
  const c = nodeClient(port);
  try {
    await c.connect();
    return await op(c);
  } finally {
    c.disconnect();
  }
}

async function clusterRedis(bin: string): Promise<FleetRedis> {
  const cluster = await startRedisCluster(bin, { masters: 3 });
  const down = new Set<number>();
  return {
    mode: 'cluster',
    env: { REDIS_CLUSTER_NODES: cluster.seeds },
    ports: cluster.ports,
    async nodeOf(key) {
      const port = cluster.ports.find((_, i) => !down.has(i))!;
      return onNode(port, async (c) => {
        const slot = Number(await c.call('CLUSTER', 'KEYSLOT', key));
        const slots = (await c.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string?]][];
        const owner = slots.find(([from, to]) => slot >= from && slot <= to);
        if (!owner) throw new Error(`no node serves slot ${slot}`);
        const i = cluster.ports.indexOf(Number(owner[2][1]));
        if (i < 0) throw new Error(`slot ${slot} is served by port ${owner[2][1]}, not one of ${cluster.ports}`);
        return i;
      });
    },
    async kill(i) {
      down.add(i);
      await cluster.kill(i);
    },
    async restart(i) {
      await cluster.restart(i);
      down.delete(i);
    },
    stop: () => cluster.stop(),
  };
}

async function singleRedis(bin: string): Promise<FleetRedis> {
  const redis = await ownRedis(bin, { persistence: 'aof' });
  const port = Number(new URL(redis.url).port);
  return {
    mode: 'single',
    env: { REDIS_URL: redis.url },
    ports: [port],
    nodeOf: async () => 0,
    kill: () => redis.down(),
    restart: () => redis.up(),
    stop: () => redis.close(),
  };
}

// ---------------------------------------------------------------- SMTP: a catcher that can answer slowly

export interface CaughtMail {
  to: string[];
  subject: string;
  messageId: string;
  text: string;
  /** The verification code in the text, or null. */
  code: string | null;
  /** When the data was complete (before a held 250). */
  at: number;
}

export interface HoldingSmtp {
  port: number;
  mails: CaughtMail[];
  /**
   * From now on, answer no mail's data until release(): every sender waits with its mail
   * received (and recorded). A worker killed meanwhile has sent its mail without knowing it.
   */
  hold(): void;
  /** Mails received and not answered yet because of hold(). */
  held(): number;
  /** Answer the held mails (and the ones to come) again. */
  release(): void;
  waitFor(match: (m: CaughtMail) => boolean, timeoutMs?: number): Promise<CaughtMail>;
  to(address: string): CaughtMail[];
  stop(): Promise<void>;
}

export async function startHoldingSmtp(): Promise<HoldingSmtp> {
  const port = await freePort();
  const inbox = createInbox<CaughtMail>();
  let holding: (() => void)[] | null = null;
  const catcher: HoldingSmtp = {
    port,
    mails: inbox.items,
    hold: () => void (holding ??= []),
    held: () => holding?.length ?? 0,
    release() {
      const waiting = holding ?? [];
      holding = null;
      for (const answer of waiting) answer();
    },
    waitFor: (match, timeoutMs = 15_000) =>
      inbox.waitFor(match, timeoutMs, (all) => `${all.length} mails: ${all.map((m) => m.to.join(',')).join('; ')}`),
    to: (address) => inbox.items.filter((m) => m.to.includes(address)),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const at = Date.now();
        const parsed = await simpleParser(Buffer.concat(chunks));
        const text = parsed.text ?? '';
        inbox.add({
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: parsed.subject ?? '',
          messageId: parsed.messageId ?? '',
          text,
          code: /verification code: ([A-Z0-9]{6})\b/.exec(text)?.[1] ?? null,
          at,
        });
        if (holding) return void holding.push(() => callback());
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return catcher;
}

// ---------------------------------------------------------------- GraphQL over HTTP

export interface GqlResult<T = any> {
  status: number;
  headers: Headers;
  data: T | null | undefined;
  errors: { message: string; extensions?: { code?: string; [k: string]: unknown } }[] | undefined;
  text: string;
  ms: number;
  /** The gateway did not answer within the timeout (status 0). */
  timedOut?: boolean;
}

export interface GqlOptions {
  token?: string | null;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

const printed = new WeakMap<object, string>();
const queryText = (doc: TypedDocumentNode<any, any> | string) => {
  if (typeof doc === 'string') return doc;
  let text = printed.get(doc);
  if (!text) printed.set(doc, (text = print(doc)));
  return text;
};

export async function gql<T, V>(gw: ChildGateway, doc: TypedDocumentNode<T, V>, variables: V, options?: GqlOptions): Promise<GqlResult<T>>;
export async function gql(gw: ChildGateway, doc: string, variables: Record<string, unknown>, options?: GqlOptions): Promise<GqlResult<any>>;
export async function gql(
  gw: ChildGateway,
  doc: TypedDocumentNode<any, any> | string,
  variables: unknown,
  options: GqlOptions = {},
): Promise<GqlResult<any>> {
  const started = Date.now();
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const token = options.token === undefined ? gw.adminToken : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: queryText(doc), variables }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    const answer = await readResponse(res);
    return {
      status: answer.status,
      headers: answer.headers,
      data: answer.json?.data,
      errors: answer.json?.errors,
      text: answer.text,
      ms: Date.now() - started,
    };
  } catch (err) {
    const name = (err as Error)?.name;
    if (name !== 'TimeoutError' && name !== 'AbortError') throw err;
    return {
      status: 0,
      headers: new Headers(),
      data: undefined,
      errors: [{ message: 'no answer', extensions: { code: 'TIMEOUT' } }],
      text: '',
      ms: Date.now() - started,
      timedOut: true,
    };
  }
}

export const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;

/** The data, or a thrown error with the answer (for setup steps that must work). */
export function ok<T>(r: GqlResult<T>, what = 'request'): T {
  if (r.errors?.length || !r.data) throw new Error(`${what} failed (${r.status}): ${r.text}`);
  return r.data;
}

// ---------------------------------------------------------------- the fleet

export interface FleetOptions {
  mongoUrl: string;
  redisServerBin: string;
  /** 'cluster' unless FLEET_REDIS=single. */
  redis?: 'cluster' | 'single';
  gateways?: number;
  /** More environment for every gateway. */
  env?: Record<string, string>;
}

export interface Fleet {
  /** Every gateway started, in order (a killed one stays, with `child.signalCode` set). */
  all: ChildGateway[];
  /** The gateways still running. */
  live(): ChildGateway[];
  /** Round robin over the running gateways. */
  pick(i: number): ChildGateway;
  redis: FleetRedis;
  smtp: HoldingSmtp;
  dbName: string;
  env: Record<string, string>;
  adminId: string;
  adminToken: string;
  /** A token for any user id (the shared signing key). */
  tokenFor(userId: string): Promise<string>;
  /** A new user holding ORG_USER_MANAGER in the default organization, and its token: a caller with its own rate-limit window. */
  manager(name: string): Promise<{ userId: string; token: string }>;
  /** SIGKILL gateway i; resolves when it is gone. */
  kill(i: number): Promise<void>;
  /** Start one more gateway like the others (its own data folder with the shared key). */
  spawn(): Promise<ChildGateway>;
  /** The gateways' log lines (JSON-parsed where they are JSON), gateway index beside each. */
  logLines(): { gateway: number; line: any }[];
  stop(): Promise<void>;
}

let unique = 0;
export const uniq = (p: string) => `${p}${Date.now().toString(36)}${(unique++).toString(36)}${randomBytes(2).toString('hex')}`;

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const mode = options.redis ?? (process.env.FLEET_REDIS === 'single' ? 'single' : 'cluster');
  const cleanups: (() => Promise<unknown>)[] = [];
  const dbName = `fleet_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const all: ChildGateway[] = [];
  try {
    const smtp = await startHoldingSmtp();
    cleanups.push(() => smtp.stop());
    const redis = mode === 'cluster' ? await clusterRedis(options.redisServerBin) : await singleRedis(options.redisServerBin);
    cleanups.push(() => redis.stop());
    cleanups.push(async () => {
      const client = new MongoClient(options.mongoUrl, { serverSelectionTimeoutMS: 3000 });
      try {
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    });

    // The signing key, made once and copied into every gateway's data folder.
    const keyDir = mkdtempSync(path.join(tmpdir(), 'fleet-key-'));
    cleanups.push(async () => rmSync(keyDir, { recursive: true, force: true }));
    await loadOrCreateLocalKey(keyDir);
    const signer = createLocalTokenSigner({ jwtIssuer: 'identity-gateway', jwtAudience: 'identity-gateway', dataDir: keyDir });

    const env: Record<string, string> = {
      MONGODB_URL: options.mongoUrl,
      MONGODB_DB: dbName,
      ...redis.env,
      CODE_HMAC_KEY: `fleet-${randomBytes(8).toString('hex')}`,
      IDP_SECRET_KEY: randomBytes(32).toString('hex'),
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: 'Fleet <fleet@auth.example>',
      DELIVERY_KEY_PREFIX: `${dbName}:`,
      DELIVERY_BACKOFF_MS: '100',
      DELIVERY_MAX_BACKOFF_MS: '500',
      DELIVERY_MAX_TRIES: '50',
      DELIVERY_CLAIM_IDLE_MS: '1000',
      ...options.env,
    };

    const spawnOne = async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'fleet-gw-'));
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      copyFileSync(path.join(keyDir, 'signing-key.json'), path.join(dataDir, 'signing-key.json'));
      const gw = await spawnGateway({ env, dataDir });
      all.push(gw);
      return gw;
    };
    await Promise.all(Array.from({ length: options.gateways ?? 3 }, spawnOne));
    // Started together, listed in the order they finished starting: sort by port for a stable order.
    all.sort((a, b) => Number(new URL(a.url).port) - Number(new URL(b.url).port));
    const adminIds = new Set(all.map((g) => g.adminId));
    if (adminIds.size !== 1) throw new Error(`the gateways disagree on the administrator: ${[...adminIds]}`);
    const admin = all[0]!;

    const live = () => all.filter((g) => g.child.exitCode === null && g.child.signalCode === null);
    const fleet: Fleet = {
      all,
      live,
      pick: (i) => {
        const up = live();
        return up[((i % up.length) + up.length) % up.length]!;
      },
      redis,
      smtp,
      dbName,
      env,
      adminId: admin.adminId,
      adminToken: admin.adminToken,
      tokenFor: (userId) => signer.sign(userId),
      async manager(name) {
        const username = uniq(`${name}-`);
        const added = ok(
          await gql(fleet.pick(unique), AddHumanUserDocument, {
            input: {
              username,
              profile: { firstName: 'Fleet', lastName: name },
              email: { email: `${username}@fleet.example`, isVerified: true },
            },
          }),
          `create manager ${name}`,
        );
        const userId = added.addHumanUser.userId;
        ok(await gql(fleet.pick(unique + 1), AddOrgMemberDocument, { input: { userId, roles: ['ORG_USER_MANAGER'] } }), `grant ${name}`);
        return { userId, token: await signer.sign(userId) };
      },
      async kill(i) {
        const gw = all[i]!;
        if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill('SIGKILL');
        await gw.exited;
      },
      spawn: spawnOne,
      logLines() {
        return all.flatMap((g, gateway) =>
          g.logs.map((l) => {
            try {
              return { gateway, line: JSON.parse(l) };
            } catch {
              return { gateway, line: l };
            }
          }),
        );
      },
      async stop() {
        await Promise.allSettled(all.map((g) => g.stop()));
        for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
      },
    };
    return fleet;
  } catch (err) {
    await Promise.allSettled(all.map((g) => g.stop()));
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
    throw err;
  }
}
