// Read once at start from the environment and passed down; nothing else reads process.env.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { RedisConnection, RedisNode } from './redis.ts';

export interface PasswordPolicy {
  minLength: number;
  requireLower: boolean;
  requireUpper: boolean;
  requireDigit: boolean;
  requireSymbol: boolean;
}

export interface Config {
  host: string;
  port: number;
  /** TLS_CERT_FILE and TLS_KEY_FILE, read at start: the port then serves HTTP/1.1 and HTTP/2 over TLS only. */
  tls: { cert: Buffer; key: Buffer } | null;
  /** Quick start: embedded stores, local signing key, admin token printed. */
  dataDir: string;
  /** Embedded store: what the snapshots it keeps in memory may weigh (their states' JSON), in MB. */
  snapshotCacheMb: number;
  mongodbUrl?: string;
  mongodbDb: string;
  /** Between passes of the MongoDB store's repair loop (src/store/mongo.ts); 0: off. */
  storeRepairIntervalMs: number;
  /**
   * Redis for codes, the delivery queue, rate limits, idempotency keys and node-id leases:
   * REDIS_URL (one Redis), REDIS_CLUSTER_NODES (a Cluster) or REDIS_SENTINELS (a master
   * watched by Sentinel); unset: all of those in memory.
   */
  redis?: RedisConnection;
  /** Production JWT verification; without it the local key in dataDir signs and verifies. */
  jwksUrl?: string;
  jwtIssuer: string;
  jwtAudience: string;
  /** Key for code HMACs (hex or any string); quick start generates one in dataDir. */
  codeHmacKey?: string;
  codeTtlSeconds: number;
  codeMaxAttempts: number;
  defaultPhoneRegion: string;
  defaultVerifyEmailUrl: string;
  passwordPolicy: PasswordPolicy;
  bcryptCost: number;
  /** Instance domain used for organization domains (name.domain). */
  instanceDomain: string;
  production: boolean;
  /**
   * 0..1023, part of every generated id. With Redis or MongoDB it is leased (src/node-ids.ts):
   * when set, exactly this one (refused while another gateway holds it); unset, a free one.
   * With neither: this one, or random when unset.
   */
  nodeId?: number;
  /** Lifetime of a node-id lease (NODE_ID_LEASE_TTL_MS); renewed every third of it. */
  nodeIdLeaseTtlMs: number;
  /** GraphiQL on GET /graphql for browsers (GRAPHIQL; default on, off with NODE_ENV=production). */
  graphiql: boolean;
  /** Introspection queries (__schema, __type) answered (INTROSPECTION; default on, off with NODE_ENV=production). */
  introspection: boolean;
  logLevel: string;
  /** AES-256-GCM key for OIDC client secrets (64 hex chars); quick start generates one in dataDir. */
  idpSecretKey?: string;
  /** SAML metadataUrl fetching. */
  samlMetadata: { allowPrivateAddresses: boolean; timeoutMs: number; maxBytes: number };
  /** WebAuthn relying party for U2F registration. */
  webauthn: { rpId: string; rpName: string; origins: string[]; challengeTtlSeconds: number };
  /** Verification mail over SMTP; without a host, mails are only logged (masked, never with the code). */
  smtp: { host?: string; port: number; secure: boolean; user?: string; password?: string; from: string };
  /** SMS through an HTTP webhook (JSON POST {to, text}); without a URL no SMS is sent (SPEC.md rule 3). */
  sms: { webhookUrl?: string; webhookToken?: string };
  /** The delivery queue and its worker (src/notify). */
  delivery: {
    maxTries: number;
    backoffMs: number;
    maxBackoffMs: number;
    /** A job taken by a worker and not acknowledged for this long is claimed by another. */
    claimIdleMs: number;
    /** Prefix of the queue's Redis keys (several gateways sharing one Redis and one queue use the same). */
    keyPrefix: string;
    /** Run a delivery worker inside the gateway process (RUN_WORKER=false: only `npm run worker` delivers). */
    runWorker: boolean;
  };
  /** resendEmailCode / resendPhoneCode per user and channel. */
  resendLimitPerHour: number;
  /** The HTTP edge (src/http): limits, proxies, CORS, idempotency, shutdown. */
  http: HttpConfig;
}

export interface HttpConfig {
  /** Requests a minute per authenticated caller (token sub), counted across every gateway sharing Redis; 0: unlimited. */
  rateLimitPerCaller: number;
  /** Requests a minute per client IP for requests without a valid token; 0: unlimited. */
  rateLimitPerIp: number;
  /** X-Forwarded-For: false uses the socket address; true its leftmost entry; n trusts n proxies in front. */
  trustProxy: boolean | number;
  /** Origins allowed to call cross-origin: exact origins, `scheme://host:*` for any port, `*` for any; empty: none. */
  corsOrigins: string[];
  /** SIGTERM: how long in-flight requests may take before connections are cut. */
  shutdownTimeoutMs: number;
  /** How long the first answer to an Idempotency-Key is kept. */
  idempotencyTtlSeconds: number;
  /**
   * Request-body bytes one client address may have in flight (Content-Length, or the cap of a chunked body,
   * reserved before the body is read); over it: 429. Default twice the body cap, never less than the cap.
   */
  maxInflightBytesPerClient?: number;
  /** The same for the whole process; over it: 503. Default four times the body cap (a largest body takes ~8x its size in memory while handled), never less than the per-client budget. */
  maxInflightBytes?: number;
}

type Env = Record<string, string | undefined>;

const int = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number.parseInt(v, 10));
/** A setting that must be a whole number (0 or more) when set: a typo stops the start instead of becoming NaN. */
function wholeNumber(name: string, v: string | undefined, d: number): number {
  if (v === undefined || v === '') return d;
  if (!/^\d+$/.test(v.trim())) throw new Error(`${name}: "${v}" is not a whole number`);
  return Number(v.trim());
}
const bool = (v: string | undefined, d: boolean) => (v === undefined || v === '' ? d : /^(1|true|yes|on)$/i.test(v));

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  return {
    host: env.HOST ?? '127.0.0.1',
    port: int(env.PORT, 4000),
    tls: tlsFiles(env),
    dataDir: path.resolve(env.DATA_DIR ?? 'data'),
    snapshotCacheMb: wholeNumber('SNAPSHOT_CACHE_MB', env.SNAPSHOT_CACHE_MB, 32),
    mongodbUrl: env.MONGODB_URL || undefined,
    mongodbDb: env.MONGODB_DB ?? 'identity',
    storeRepairIntervalMs: Math.max(0, int(env.STORE_REPAIR_INTERVAL_MS, 1000)),
    redis: redisConnection(env),
    jwksUrl: env.JWKS_URL || undefined,
    jwtIssuer: env.JWT_ISSUER ?? 'identity-gateway',
    jwtAudience: env.JWT_AUDIENCE ?? 'identity-gateway',
    codeHmacKey: env.CODE_HMAC_KEY || undefined,
    codeTtlSeconds: int(env.CODE_TTL_SECONDS, 3600),
    codeMaxAttempts: int(env.CODE_MAX_ATTEMPTS, 5),
    defaultPhoneRegion: env.DEFAULT_PHONE_REGION ?? 'CH',
    defaultVerifyEmailUrl:
      env.DEFAULT_VERIFY_EMAIL_URL ?? 'http://localhost:4000/verify-email?userID={{.UserID}}&code={{.Code}}&orgID={{.OrgID}}',
    passwordPolicy: {
      minLength: int(env.PASSWORD_MIN_LENGTH, 8),
      requireLower: bool(env.PASSWORD_REQUIRE_LOWER, true),
      requireUpper: bool(env.PASSWORD_REQUIRE_UPPER, true),
      requireDigit: bool(env.PASSWORD_REQUIRE_DIGIT, true),
      requireSymbol: bool(env.PASSWORD_REQUIRE_SYMBOL, true),
    },
    bcryptCost: int(env.BCRYPT_COST, 10),
    instanceDomain: env.INSTANCE_DOMAIN ?? 'localhost',
    production,
    nodeId: env.GATEWAY_NODE_ID ? int(env.GATEWAY_NODE_ID, 0) : undefined,
    nodeIdLeaseTtlMs: Math.max(1000, int(env.NODE_ID_LEASE_TTL_MS, 30_000)),
    graphiql: bool(env.GRAPHIQL, !production),
    introspection: bool(env.INTROSPECTION, !production),
    logLevel: env.LOG_LEVEL ?? 'info',
    idpSecretKey: env.IDP_SECRET_KEY || undefined,
    samlMetadata: {
      allowPrivateAddresses: bool(env.SAML_METADATA_ALLOW_PRIVATE, false),
      timeoutMs: int(env.SAML_METADATA_TIMEOUT_MS, 5000),
      maxBytes: int(env.SAML_METADATA_MAX_BYTES, 1024 * 1024),
    },
    webauthn: {
      rpId: env.WEBAUTHN_RP_ID ?? 'localhost',
      rpName: env.WEBAUTHN_RP_NAME ?? 'Identity gateway',
      origins: (env.WEBAUTHN_ORIGINS ?? 'http://localhost:4000').split(',').map((o) => o.trim()).filter(Boolean),
      challengeTtlSeconds: int(env.U2F_CHALLENGE_TTL_SECONDS, 300),
    },
    smtp: {
      host: env.SMTP_HOST || undefined,
      port: int(env.SMTP_PORT, bool(env.SMTP_SECURE, false) ? 465 : 587),
      secure: bool(env.SMTP_SECURE, false),
      user: env.SMTP_USER || undefined,
      password: env.SMTP_PASSWORD || undefined,
      from: env.SMTP_FROM || `Identity <no-reply@${env.INSTANCE_DOMAIN ?? 'localhost'}>`,
    },
    sms: { webhookUrl: env.SMS_WEBHOOK_URL || undefined, webhookToken: env.SMS_WEBHOOK_TOKEN || undefined },
    delivery: {
      maxTries: Math.max(1, int(env.DELIVERY_MAX_TRIES, 10)),
      backoffMs: int(env.DELIVERY_BACKOFF_MS, 5000),
      maxBackoffMs: int(env.DELIVERY_MAX_BACKOFF_MS, 15 * 60_000),
      claimIdleMs: int(env.DELIVERY_CLAIM_IDLE_MS, 60_000),
      keyPrefix: noBraces('DELIVERY_KEY_PREFIX', env.DELIVERY_KEY_PREFIX ?? ''),
      runWorker: bool(env.RUN_WORKER, true),
    },
    resendLimitPerHour: int(env.RESEND_LIMIT_PER_HOUR, 5),
    http: {
      rateLimitPerCaller: Math.max(0, int(env.RATE_LIMIT_PER_CALLER_PER_MINUTE, 1200)),
      rateLimitPerIp: Math.max(0, int(env.RATE_LIMIT_PER_IP_PER_MINUTE, 300)),
      trustProxy: trustProxy(env.TRUST_PROXY),
      corsOrigins: (env.CORS_ORIGINS ?? (production ? '' : 'http://localhost:*,http://127.0.0.1:*'))
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      shutdownTimeoutMs: int(env.SHUTDOWN_TIMEOUT_MS, 10_000),
      idempotencyTtlSeconds: int(env.IDEMPOTENCY_TTL_SECONDS, 24 * 3600),
      maxInflightBytesPerClient: env.HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT ? int(env.HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT, 0) : undefined,
      maxInflightBytes: env.HTTP_MAX_INFLIGHT_BYTES ? int(env.HTTP_MAX_INFLIGHT_BYTES, 0) : undefined,
    },
  };
}

/**
 * Read here rather than at listen so that a wrong path or a key that does not fit the
 * certificate stops the start before any store is opened or written.
 */
function tlsFiles(env: Env): Config['tls'] {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) {
    const [set, missing] = certFile ? ['TLS_CERT_FILE', 'TLS_KEY_FILE'] : ['TLS_KEY_FILE', 'TLS_CERT_FILE'];
    throw new Error(`${set} is set but ${missing} is not: set both (PEM files) to serve TLS, or neither`);
  }
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${name}: cannot read ${file} (${(err as Error).message})`);
    }
  };
  const tls = { cert: read('TLS_CERT_FILE', certFile), key: read('TLS_KEY_FILE', keyFile) };
  try {
    createSecureContext(tls);
  } catch (err) {
    throw new Error(`TLS_CERT_FILE ${certFile} and TLS_KEY_FILE ${keyFile}: not a PEM certificate and its private key (${(err as Error).message})`);
  }
  return tls;
}

/**
 * At most one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS. REDIS_USERNAME, REDIS_PASSWORD
 * and REDIS_TLS are the credentials and TLS of a Cluster's or Sentinel master's nodes (with
 * REDIS_URL they apply too, but the URL's own user, password and rediss:// win).
 */
function redisConnection(env: Env): RedisConnection | undefined {
  const given = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name]);
  if (given.length > 1) throw new Error(`${given.join(' and ')} are set: set only one (one Redis, a Redis Cluster, or a Sentinel-watched master)`);
  const auth = {
    ...(env.REDIS_USERNAME && { username: env.REDIS_USERNAME }),
    ...(env.REDIS_PASSWORD && { password: env.REDIS_PASSWORD }),
    ...(bool(env.REDIS_TLS, false) && { tls: true }),
  };
  if (env.REDIS_CLUSTER_NODES) return { kind: 'cluster', nodes: parseRedisNodes(env.REDIS_CLUSTER_NODES, 'REDIS_CLUSTER_NODES'), ...auth };
  if (env.REDIS_SENTINELS) {
    if (!env.REDIS_SENTINEL_NAME) throw new Error('REDIS_SENTINELS is set but REDIS_SENTINEL_NAME (the master group name) is not');
    return {
      kind: 'sentinel',
      sentinels: parseRedisNodes(env.REDIS_SENTINELS, 'REDIS_SENTINELS'),
      name: env.REDIS_SENTINEL_NAME,
      ...(env.REDIS_SENTINEL_PASSWORD && { sentinelPassword: env.REDIS_SENTINEL_PASSWORD }),
      ...auth,
    };
  }
  if (env.REDIS_URL) return { kind: 'single', url: env.REDIS_URL, ...auth };
  return undefined;
}

/** "host:port" (or "[v6]:port") comma-separated, as REDIS_CLUSTER_NODES and REDIS_SENTINELS give them. */
function parseRedisNodes(list: string, what: string): RedisNode[] {
  const nodes = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^(?:\[([^\]]+)\]|([^:\s\/]+)):(\d{1,5})$/.exec(entry);
      const port = m ? Number(m[3]) : NaN;
      if (!m || port < 1 || port > 65535) throw new Error(`${what}: "${entry}" is not host:port (a comma-separated list of host:port)`);
      return { host: (m[1] ?? m[2])!, port };
    });
  if (nodes.length === 0) throw new Error(`${what}: no host:port given`);
  return nodes;
}

/** A key prefix must leave the hash tag after it alone (Redis Cluster: the keys of one script share a slot). */
function noBraces(name: string, value: string): string {
  if (/[{}]/.test(value)) throw new Error(`${name} must not contain { or }: it would change the keys' Redis Cluster hash tag`);
  return value;
}

function trustProxy(v: string | undefined): boolean | number {
  if (v === undefined || v === '') return false;
  if (/^\d+$/.test(v)) return Number(v) === 0 ? false : Number(v);
  return bool(v, false);
}
