// Upstream mode's settings: ZITADEL_URL turns it on (the GraphQL face in front of a ZITADEL, or
// of anything that speaks its wire contract, instead of our own stores; src/upstream).
import { readFileSync } from 'node:fs';
import { ms, type Env } from './config-values.ts';

export interface UpstreamConfig {
  /** ZITADEL_URL: the instance's base URL (https://…; http:// for h2c on a trusted network). */
  url: string;
  /** ZITADEL_TRANSPORT: gRPC (default) or Connect, both over HTTP/2. */
  transport: 'grpc' | 'connect';
  /** ZITADEL_CA_FILE, read at start: trusted instead of the system's CAs. */
  ca?: Buffer;
  /** ZITADEL_TIMEOUT_MS: the deadline of one upstream call (default 10 s). */
  timeoutMs: number;
  /** Where a JWT bearer token's keys are: JWKS_URL, else ZITADEL's /oauth/v2/keys. */
  jwksUrl: string;
}

export function upstreamConfig(env: Env): UpstreamConfig | undefined {
  const raw = env.ZITADEL_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`ZITADEL_URL: "${raw}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`ZITADEL_URL: "${raw}" must be http:// or https://`);
  if (url.username || url.password) throw new Error('ZITADEL_URL: credentials do not belong in the URL (the caller’s token is forwarded)');
  const transport = (env.ZITADEL_TRANSPORT ?? 'grpc').trim().toLowerCase();
  if (transport !== 'grpc' && transport !== 'connect') throw new Error(`ZITADEL_TRANSPORT: "${transport}" is not grpc or connect`);
  const caFile = env.ZITADEL_CA_FILE || undefined;
  let ca: Buffer | undefined;
  if (caFile) {
    try {
      ca = readFileSync(caFile);
    } catch (err) {
      throw new Error(`ZITADEL_CA_FILE: cannot read "${caFile}": ${(err as Error).message}`);
    }
  }
  const base = url.href.replace(/\/+$/, '');
  return {
    url: base,
    transport,
    ...(ca ? { ca } : {}),
    timeoutMs: ms('ZITADEL_TIMEOUT_MS', env.ZITADEL_TIMEOUT_MS, 10_000, 1),
    jwksUrl: env.JWKS_URL || `${base}/oauth/v2/keys`,
  };
}
