// Starts the real gateway in this process on a free port and talks GraphQL over HTTP to it.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type ExecutionResult } from 'graphql';
import { expect } from 'vitest';
import { createLocalTokenSigner } from '../../src/auth/tokens.ts';
import { bootstrap } from '../../src/commands/bootstrap.ts';
import { systemContext } from '../../src/commands/request-context.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import type { Notifier } from '../../src/notify/port.ts';
import { createGateway, type Gateway } from '../../src/server.ts';
import { createUpstreamGateway, type UpstreamGateway } from '../../src/upstream-gateway.ts';
import { faultyProxy, readResponse } from './net.ts';
import { TEST_DEFAULTS } from './test-defaults.ts';

export interface StartOptions {
  /** Environment for loadConfig (MONGODB_URL, REDIS_URL, …); DATA_DIR and PORT are set here. */
  env?: Record<string, string | undefined>;
  notifier?: Notifier;
}

export interface ErrorBody {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; grpcCode?: number; details?: any[]; requestId?: string; httpStatus?: number; [k: string]: unknown };
}

export interface Response<T> {
  status: number;
  headers: Headers;
  data: T | null | undefined;
  errors: ErrorBody[] | undefined;
  text: string;
}

export interface TestGateway {
  url: string;
  /** The gateway's origin without /graphql (http://127.0.0.1:port; https:// with TLS_CERT_FILE), for the wire API's clients. */
  baseUrl: string;
  config: Config;
  gateway: Gateway;
  /** Upstream mode (GATEWAY_MODE=upstream): the front gateway the requests go to; `gateway` is then its upstream. */
  front?: UpstreamGateway;
  adminId: string;
  adminToken: string;
  defaultOrgId: string;
  logs: string[];
  tokenFor(userId: string): Promise<string>;
  send<T, V>(
    doc: TypedDocumentNode<T, V>,
    variables: V,
    opts?: { token?: string | null; orgId?: string; headers?: Record<string, string> },
  ): Promise<Response<T>>;
  raw(body: unknown, headers?: Record<string, string>): Promise<Response<any>>;
  close(): Promise<void>;
}

/**
 * Upstream mode for the GraphQL suites: with GATEWAY_MODE=upstream (the CI runs the GraphQL suites
 * both ways), startGateway starts the gateway as before, as the upstream, and in front of it a
 * second gateway with ZITADEL_URL pointing at it; requests go to the front one. `gateway`, the
 * tokens and the admin stay the upstream's (what a test reads of the store is what the upstream
 * persisted); `logs` has both gateways' lines.
 */
export const upstreamMode = process.env.GATEWAY_MODE === 'upstream';

/**
 * In upstream mode: skips a test that cannot run through the front gateway. `why` is for the
 * reader (and printed once per test skipped), as vitest's skip option takes no reason.
 */
export function embeddedOnly(why: string): { skip: boolean } {
  if (upstreamMode) console.log(`[upstream mode] skipped, embedded mode only: ${why}`);
  return { skip: upstreamMode };
}

/** The other way round: a test of the front gateway itself (its upstream calls), skipped in the embedded run with a line saying so. */
export function upstreamOnly(what: string): { skip: boolean } {
  if (!upstreamMode) console.log(`[embedded mode] skipped, runs in upstream mode (test/upstream/): ${what}`);
  return { skip: !upstreamMode };
}

export async function startGateway(options: StartOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-'));
  const config = loadConfig({ ...TEST_DEFAULTS, ...options.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
  const logs: string[] = [];
  const logger = createLogger('debug', (line) => logs.push(line));
  const gateway = await createGateway(config, { logger, notifier: options.notifier });
  const admin = await bootstrap(systemContext(gateway.deps));
  const upstreamUrl = (await gateway.listen()).url;
  let url = upstreamUrl;
  let front: UpstreamGateway | undefined;
  const frontDir = upstreamMode ? mkdtempSync(path.join(tmpdir(), 'gw-front-')) : undefined;
  if (frontDir) {
    const env = { ...TEST_DEFAULTS, ZITADEL_TIMEOUT_MS: '120000', ...options.env, DATA_DIR: frontDir, PORT: '0', HOST: '127.0.0.1' };
    const frontConfig = loadConfig({
      ...env,
      ZITADEL_URL: new URL(upstreamUrl).origin,
      ...(config.tls ? { ZITADEL_CA_FILE: options.env?.TLS_CERT_FILE } : {}),
    });
    front = await createUpstreamGateway(frontConfig, { logger });
    url = (await front.listen()).url;
  }
  const signer = createLocalTokenSigner(config);
  const adminToken = await signer.sign(admin.adminUserId);

  const post = async (body: string, headers: Record<string, string>): Promise<Response<any>> => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body };
    // Global fetch takes no CA: over TLS (TLS_CERT_FILE), node:https trusting the gateway's own certificate.
    const res = config.tls ? await httpsFetch(url, init, config.tls.cert) : await fetch(url, init);
    const answer = await readResponse(res);
    const parsed: ExecutionResult = answer.json ?? {};
    return { status: answer.status, headers: answer.headers, data: parsed.data as any, errors: parsed.errors as any, text: answer.text };
  };

  return {
    url,
    baseUrl: new URL(url).origin,
    config,
    gateway,
    ...(front ? { front } : {}),
    adminId: admin.adminUserId,
    adminToken,
    defaultOrgId: admin.defaultOrgId,
    logs,
    tokenFor: (userId) => signer.sign(userId),
    send(doc, variables, opts = {}) {
      const token = opts.token === undefined ? adminToken : opts.token;
      const headers: Record<string, string> = { ...opts.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      if (opts.orgId) headers['x-service-orgid'] = opts.orgId;
      return post(JSON.stringify({ query: print(doc), variables }), headers);
    },
    raw: (body, headers = {}) =>
      post(typeof body === 'string' ? body : JSON.stringify(body), { authorization: `Bearer ${adminToken}`, ...headers }),
    async close() {
      await front?.close();
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (frontDir) rmSync(frontDir, { recursive: true, force: true });
    },
  };
}

/** A request over HTTPS trusting `ca`, answered as a fetch Response. */
export function httpsFetch(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  ca: Buffer,
): Promise<globalThis.Response> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: init.method, headers: init.headers, ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const one of [v ?? []].flat()) headers.append(k, one);
        resolve(new globalThis.Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The single error of a failed response, for assertions on its code. */
export function onlyError(res: Response<unknown>): ErrorBody {
  if (!res.errors || res.errors.length !== 1) throw new Error(`expected one error, got ${res.text}`);
  return res.errors[0]!;
}

/** An answer of the GraphQL face as the test helpers read it (this file's Response, fleet.ts's GqlResult). */
interface Answered {
  status: number;
  text: string;
  errors?: { extensions?: { code?: string; [k: string]: unknown } }[] | undefined;
}

/** The REST face's status that an error carries as extensions.httpStatus. */
const restStatusOf = (error: { extensions?: { [k: string]: unknown } } | undefined): number | undefined =>
  error?.extensions?.httpStatus as number | undefined;

/**
 * The request was read and failed as GraphQL over HTTP answers it on application/json: HTTP
 * 200, the errors in the body, the first one's extensions.httpStatus being `status`.
 */
export function expectRestStatus(res: Answered, status: number, label = ''): void {
  const where = `${label ? `${label}: ` : ''}${res.text}`;
  expect(res.status, where).toBe(200);
  expect(res.errors?.length, where).toBeGreaterThan(0);
  expect(restStatusOf(res.errors![0]), where).toBe(status);
}

/** Field paths named by an INVALID_ARGUMENT error. */
export function violatedFields(error: ErrorBody): string[] {
  const details = error.extensions?.details ?? [];
  return details.flatMap((d: any) => (d.fieldViolations ?? []).map((v: any) => v.field)).sort();
}

/**
 * A gateway on MongoDB reached through a TCP proxy the test can cut (`proxy.down()`)
 * and restore (`proxy.up()`); closing the gateway also removes the proxy.
 */
export async function startGatewayBehindProxy(mongoUrl: string, dbPrefix: string, env: Record<string, string> = {}) {
  const proxy = await faultyProxy(mongoUrl);
  await proxy.up();
  const gw = await startGateway({ env: { MONGODB_URL: proxy.url, MONGODB_DB: `${dbPrefix}_${Date.now()}`, ...env } });
  const close = gw.close;
  gw.close = async () => {
    await close();
    await proxy.down();
  };
  return { gw, proxy };
}
