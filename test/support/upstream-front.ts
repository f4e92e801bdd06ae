// A gateway in upstream mode (ZITADEL_URL) in this process, in front of a child gateway (or of a
// proxy to one), for the upstream-mode tests with real processes: GraphQL posts with the child's
// administrator token, and what it sent upstream read from its metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { createUpstreamGateway, type UpstreamGateway } from '../../src/upstream-gateway.ts';
import type { ChildGateway } from './child-gateway.ts';
import { readResponse } from './net.ts';
import { sample } from './slow-peers.ts';
import { TEST_DEFAULTS } from './test-defaults.ts';

export interface Front {
  gateway: UpstreamGateway;
  url: string;
  base: string;
  logs: string[];
  post(
    query: string,
    variables: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; json: any; text: string }>;
  /** gateway_upstream_duration_seconds_count for a method ('': all) and code (any code when omitted). */
  calls(method: string, code?: string): Promise<number>;
  close(): Promise<void>;
}

/** A gateway in upstream mode in front of `zitadelUrl`, verifying tokens with `upstream`'s keys, posting with its admin token. */
export async function startFront(upstream: ChildGateway, zitadelUrl: string, env: Record<string, string> = {}): Promise<Front> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-front-'));
  const config = loadConfig({
    ...TEST_DEFAULTS,
    ZITADEL_URL: zitadelUrl,
    JWKS_URL: `${upstream.base}/oauth/v2/keys`,
    ...env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
  });
  const logs: string[] = [];
  const gateway = await createUpstreamGateway(config, { logger: createLogger('info', (line) => logs.push(line)) });
  const { url } = await gateway.listen();
  const base = new URL(url).origin;
  const metrics = async () => (await fetch(`${base}/metrics`)).text();
  return {
    gateway,
    url,
    base,
    logs,
    async post(query, variables, headers = {}) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${upstream.adminToken}`, ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return readResponse(res);
    },
    async calls(method, code) {
      const text = await metrics();
      if (code) return sample(text, 'gateway_upstream_duration_seconds_count', { method, code });
      return text
        .split('\n')
        .filter((l) => l.startsWith('gateway_upstream_duration_seconds_count{') && (!method || l.includes(`method="${method}"`)))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    },
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Requests the upstream (a gateway) answered on its wire face for one method (any status). */
export async function upstreamServed(upstream: ChildGateway, method: string): Promise<number> {
  const text = await (await fetch(`${upstream.base}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('gateway_http_requests_total{') && l.includes(`/${method}"`))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}
