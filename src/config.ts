// Read once at start from the environment and passed down; nothing else reads process.env.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { LogFormat, LogLevel } from './log.ts';
import type { RedisConnection, RedisNode } from './redis.ts';
import { bool, ms, wholeNumber, type Env } from './config-values.ts';
import { upstreamConfig, type UpstreamConfig } from './config-upstream.ts';
import { tracingConfig, type TracingConfig } from './config-tracing.ts';
import { trustedDocuments, type TrustedDocuments } from './config-trusted-documents.ts';
import { redactUrl } from './start-errors.ts';

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
  /**
   * METRICS_PORT: GET /metrics on a port of its own (METRICS_HOST, default 127.0.0.1), for the
   * cluster's scraper, and no longer on the main port; 0: any free one. Unset: /metrics stays on
   * the main port, rate-limited per client address (http.metricsPerIpPerMinute).
   */
  metrics: { port?: number; host: string };
  /** TLS_CERT_FILE and TLS_KEY_FILE, read at start: the port then serves HTTP/1.1 and HTTP/2 over TLS only. */
  tls: { cert: Buffer; key: Buffer } | null;
  /** Quick start: embedded stores, local signing key, the admin token (admin-token). */
  dataDir: string;
  /** Embedded store: what the snapshots it keeps in memory may weigh (their states' JSON), in MB. */
  snapshotCacheMb: number;
  mongodbUrl?: string;
  mongodbDb: string;
  /** How long a MongoDB read may wait for its answer before UNAVAILABLE; 0: no bound (src/store/mongo.ts readTimeoutMS). */
  mongodbReadTimeoutMs: number;
  /** How long the start waits for MongoDB to answer (MONGODB_START_TIMEOUT_MS) before it gives up and exits; 0: one attempt. */
  mongodbStartTimeoutMs: number;
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
  /** TRUSTED_DOCUMENTS (src/config-trusted-documents.ts): the GraphQL face then runs only these documents, by hash. */
  trustedDocuments?: TrustedDocuments;
  logLevel: LogLevel;
  /** LOG_FORMAT: json or pretty; unset, pretty only at a terminal outside production (src/log.ts logFormatFor). */
  logFormat?: LogFormat;
  /** How often long work (an old log's import, the search backfill) reports its progress (PROGRESS_INTERVAL_MS). */
  progressIntervalMs: number;
  /** AES-256-GCM key for OIDC client secrets (64 hex chars); quick start generates one in dataDir. */
  idpSecretKey?: string;
  /** ZITADEL_URL and its settings (src/config-upstream.ts): the GraphQL face in front of that API instead of our stores. */
  upstream?: UpstreamConfig;
  /** OpenTelemetry traces over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT and the standard OTEL_* variables: docs/tracing.md); null: off. */
  tracing: TracingConfig | null;
  /** SAML metadataUrl fetching. */
  samlMetadata: { allowPrivateAddresses: boolean; timeoutMs: number; maxBytes: number };
  /** WebAuthn relying party for U2F registration. */
  webauthn: { rpId: string; rpName: string; origins: string[]; challengeTtlSeconds: number };
  /** Verification mail over SMTP; without a host, mails are only logged (masked, never with the code). */
  smtp: { host?: string; port: number; secure: boolean; user?: string; password?: string; from: string };
  /** SMS through an HTTP webhook (JSON POST {to, text}); without a URL no SMS is sent (phone changes succeed without an SMS provider). */
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
  /** The whole request, headers and body, must arrive within this: HTTP/1.1 (408) and each HTTP/2 stream (RST_STREAM). */
  requestTimeoutMs: number;
  /** A connection (HTTP/1.1) or stream (HTTP/2) with answer bytes waiting, of which the peer takes none for this long, is cut. */
  writeTimeoutMs: number;
  /** Answer bytes one connection may hold unsent beyond the answer in hand: past it the connection (HTTP/1.1) or stream (HTTP/2) is cut. */
  maxUnsentBytesPerConnection: number;
  /** Open connections (TCP, any protocol); unset: the descriptor limit less a reserve (src/http/connections.ts). */
  maxConnections?: number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS. */
  http2MaxConcurrentStreams: number;
  /** An HTTP/2 session with no open stream for this long gets GOAWAY (one that sent only the preface too). */
  http2IdleTimeoutMs: number;
  /** Streams an address may reset (RST_STREAM before the answer) a minute, over all its connections; beyond, its sessions get GOAWAY and its connections are refused for http2ResetBlockMs. 0: no limit. */
  http2ResetsPerClientPerMinute: number;
  http2ResetBlockMs: number;
  /** GET /metrics on the main port (without METRICS_PORT), a minute per client address; 0: no limit. */
  metricsPerIpPerMinute: number;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

function logLevel(v: string | undefined): LogLevel {
  if (v === undefined || v === '') return 'info';
  const level = LOG_LEVELS.find((l) => l === v.trim().toLowerCase());
  if (!level) throw new Error(`LOG_LEVEL: "${v}" is not a log level (${LOG_LEVELS.join(', ')})`);
  return level;
}

function logFormat(v: string | undefined): LogFormat | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const format = v.trim().toLowerCase();
  if (format !== 'json' && format !== 'pretty') throw new Error(`LOG_FORMAT: "${v}" is not a log format (json, pretty)`);
  return format;
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const smtpSecure = bool('SMTP_SECURE', env.SMTP_SECURE, false);
  return {
    // Empty HOST and DATA_DIR count as unset: not "every interface" nor "the working directory".
    host: env.HOST || '127.0.0.1',
    // 0: any free port (the tests' gateways).
    port: wholeNumber('PORT', env.PORT, 4000, 0, 65535),
    metrics: {
      port: env.METRICS_PORT ? wholeNumber('METRICS_PORT', env.METRICS_PORT, 0, 0, 65535) : undefined,
      host: env.METRICS_HOST || '127.0.0.1',
    },
    tls: tlsFiles(env),
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    snapshotCacheMb: wholeNumber('SNAPSHOT_CACHE_MB', env.SNAPSHOT_CACHE_MB, 32),
    mongodbUrl: mongodbUrl(env.MONGODB_URL),
    mongodbDb: env.MONGODB_DB ?? 'identity',
    mongodbReadTimeoutMs: ms('MONGODB_READ_TIMEOUT_MS', env.MONGODB_READ_TIMEOUT_MS, 10_000),
    mongodbStartTimeoutMs: ms('MONGODB_START_TIMEOUT_MS', env.MONGODB_START_TIMEOUT_MS, 30_000),
    storeRepairIntervalMs: ms('STORE_REPAIR_INTERVAL_MS', env.STORE_REPAIR_INTERVAL_MS, 1000),
    redis: redisConnection(env),
    jwksUrl: env.JWKS_URL || undefined,
    jwtIssuer: env.JWT_ISSUER ?? 'identity-gateway',
    jwtAudience: env.JWT_AUDIENCE ?? 'identity-gateway',
    codeHmacKey: env.CODE_HMAC_KEY || undefined,
    codeTtlSeconds: wholeNumber('CODE_TTL_SECONDS', env.CODE_TTL_SECONDS, 3600, 1),
    codeMaxAttempts: wholeNumber('CODE_MAX_ATTEMPTS', env.CODE_MAX_ATTEMPTS, 5, 1),
    defaultPhoneRegion: env.DEFAULT_PHONE_REGION ?? 'CH',
    defaultVerifyEmailUrl:
      env.DEFAULT_VERIFY_EMAIL_URL ?? 'http://localhost:4000/verify-email?userID={{.UserID}}&code={{.Code}}&orgID={{.OrgID}}',
    passwordPolicy: {
      // Passwords are at most 72 characters (bcrypt): a longer minimum would refuse every one.
      minLength: wholeNumber('PASSWORD_MIN_LENGTH', env.PASSWORD_MIN_LENGTH, 8, 1, 72),
      requireLower: bool('PASSWORD_REQUIRE_LOWER', env.PASSWORD_REQUIRE_LOWER, true),
      requireUpper: bool('PASSWORD_REQUIRE_UPPER', env.PASSWORD_REQUIRE_UPPER, true),
      requireDigit: bool('PASSWORD_REQUIRE_DIGIT', env.PASSWORD_REQUIRE_DIGIT, true),
      requireSymbol: bool('PASSWORD_REQUIRE_SYMBOL', env.PASSWORD_REQUIRE_SYMBOL, true),
    },
    bcryptCost: wholeNumber('BCRYPT_COST', env.BCRYPT_COST, 10, 4, 31),
    instanceDomain: env.INSTANCE_DOMAIN ?? 'localhost',
    production,
    nodeId: env.GATEWAY_NODE_ID ? wholeNumber('GATEWAY_NODE_ID', env.GATEWAY_NODE_ID, 0, 0, 1023) : undefined,
    // Below 1000 (the tests use 900) it is raised to 1000, as before.
    nodeIdLeaseTtlMs: Math.max(1000, ms('NODE_ID_LEASE_TTL_MS', env.NODE_ID_LEASE_TTL_MS, 30_000, 1)),
    graphiql: bool('GRAPHIQL', env.GRAPHIQL, !production),
    introspection: bool('INTROSPECTION', env.INTROSPECTION, !production),
    trustedDocuments: trustedDocuments(env),
    logLevel: logLevel(env.LOG_LEVEL),
    logFormat: logFormat(env.LOG_FORMAT),
    progressIntervalMs: ms('PROGRESS_INTERVAL_MS', env.PROGRESS_INTERVAL_MS, 5000, 1),
    idpSecretKey: env.IDP_SECRET_KEY || undefined,
    upstream: upstreamConfig(env),
    tracing: tracingConfig(env),
    samlMetadata: {
      allowPrivateAddresses: bool('SAML_METADATA_ALLOW_PRIVATE', env.SAML_METADATA_ALLOW_PRIVATE, false),
      timeoutMs: ms('SAML_METADATA_TIMEOUT_MS', env.SAML_METADATA_TIMEOUT_MS, 5000, 1),
      maxBytes: wholeNumber('SAML_METADATA_MAX_BYTES', env.SAML_METADATA_MAX_BYTES, 1024 * 1024, 1),
    },
    webauthn: {
      rpId: env.WEBAUTHN_RP_ID ?? 'localhost',
      rpName: env.WEBAUTHN_RP_NAME ?? 'Identity gateway',
      origins: (env.WEBAUTHN_ORIGINS ?? 'http://localhost:4000')
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      challengeTtlSeconds: wholeNumber('U2F_CHALLENGE_TTL_SECONDS', env.U2F_CHALLENGE_TTL_SECONDS, 300, 1),
    },
    smtp: {
      host: env.SMTP_HOST || undefined,
      port: wholeNumber('SMTP_PORT', env.SMTP_PORT, smtpSecure ? 465 : 587, 1, 65535),
      secure: smtpSecure,
      user: env.SMTP_USER || undefined,
      password: env.SMTP_PASSWORD || undefined,
      from: env.SMTP_FROM || `Identity <no-reply@${env.INSTANCE_DOMAIN ?? 'localhost'}>`,
    },
    sms: { webhookUrl: env.SMS_WEBHOOK_URL || undefined, webhookToken: env.SMS_WEBHOOK_TOKEN || undefined },
    delivery: {
      maxTries: wholeNumber('DELIVERY_MAX_TRIES', env.DELIVERY_MAX_TRIES, 10, 1),
      backoffMs: ms('DELIVERY_BACKOFF_MS', env.DELIVERY_BACKOFF_MS, 5000),
      maxBackoffMs: ms('DELIVERY_MAX_BACKOFF_MS', env.DELIVERY_MAX_BACKOFF_MS, 15 * 60_000),
      claimIdleMs: ms('DELIVERY_CLAIM_IDLE_MS', env.DELIVERY_CLAIM_IDLE_MS, 60_000, 1),
      keyPrefix: noBraces('DELIVERY_KEY_PREFIX', env.DELIVERY_KEY_PREFIX ?? ''),
      runWorker: bool('RUN_WORKER', env.RUN_WORKER, true),
    },
    resendLimitPerHour: wholeNumber('RESEND_LIMIT_PER_HOUR', env.RESEND_LIMIT_PER_HOUR, 5),
    http: {
      rateLimitPerCaller: wholeNumber('RATE_LIMIT_PER_CALLER_PER_MINUTE', env.RATE_LIMIT_PER_CALLER_PER_MINUTE, 1200),
      rateLimitPerIp: wholeNumber('RATE_LIMIT_PER_IP_PER_MINUTE', env.RATE_LIMIT_PER_IP_PER_MINUTE, 300),
      trustProxy: trustProxy(env.TRUST_PROXY),
      corsOrigins: (env.CORS_ORIGINS ?? (production ? '' : 'http://localhost:*,http://127.0.0.1:*'))
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      shutdownTimeoutMs: ms('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, 10_000),
      idempotencyTtlSeconds: wholeNumber('IDEMPOTENCY_TTL_SECONDS', env.IDEMPOTENCY_TTL_SECONDS, 24 * 3600, 1),
      maxInflightBytesPerClient: env.HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT
        ? wholeNumber('HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT', env.HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT, 0, 1)
        : undefined,
      maxInflightBytes: env.HTTP_MAX_INFLIGHT_BYTES ? wholeNumber('HTTP_MAX_INFLIGHT_BYTES', env.HTTP_MAX_INFLIGHT_BYTES, 0, 1) : undefined,
      // Slow or silent peers (src/http/connections.ts, output-guard.ts, http2-sessions.ts).
      requestTimeoutMs: ms('HTTP_REQUEST_TIMEOUT_MS', env.HTTP_REQUEST_TIMEOUT_MS, 60_000, 1),
      writeTimeoutMs: ms('HTTP_WRITE_TIMEOUT_MS', env.HTTP_WRITE_TIMEOUT_MS, 30_000, 1),
      maxUnsentBytesPerConnection: wholeNumber(
        'HTTP_MAX_UNSENT_BYTES_PER_CONNECTION',
        env.HTTP_MAX_UNSENT_BYTES_PER_CONNECTION,
        16 * 1024 * 1024,
        1,
      ),
      maxConnections: env.HTTP_MAX_CONNECTIONS ? wholeNumber('HTTP_MAX_CONNECTIONS', env.HTTP_MAX_CONNECTIONS, 0, 1) : undefined,
      http2MaxConcurrentStreams: wholeNumber('HTTP2_MAX_CONCURRENT_STREAMS', env.HTTP2_MAX_CONCURRENT_STREAMS, 100, 1, 2 ** 31 - 1),
      http2IdleTimeoutMs: ms('HTTP2_IDLE_TIMEOUT_MS', env.HTTP2_IDLE_TIMEOUT_MS, 60_000, 1),
      http2ResetsPerClientPerMinute: wholeNumber('HTTP2_RESETS_PER_CLIENT_PER_MINUTE', env.HTTP2_RESETS_PER_CLIENT_PER_MINUTE, 600),
      http2ResetBlockMs: ms('HTTP2_RESET_BLOCK_MS', env.HTTP2_RESET_BLOCK_MS, 60_000, 1),
      metricsPerIpPerMinute: wholeNumber('METRICS_RATE_LIMIT_PER_IP_PER_MINUTE', env.METRICS_RATE_LIMIT_PER_IP_PER_MINUTE, 60),
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
    throw new Error(
      `TLS_CERT_FILE ${certFile} and TLS_KEY_FILE ${keyFile}: not a PEM certificate and its private key (${(err as Error).message})`,
    );
  }
  return tls;
}

/** A MongoDB connection string by its scheme (the driver parses the rest when it connects; src/start-errors.ts names it then). */
function mongodbUrl(v: string | undefined): string | undefined {
  if (!v) return undefined;
  if (!/^mongodb(\+srv)?:\/\//i.test(v.trim())) {
    throw new Error(`MONGODB_URL: "${redactUrl(v)}" is not a MongoDB connection string (mongodb://host:port/… or mongodb+srv://host/…)`);
  }
  return v.trim();
}

/**
 * At most one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS. REDIS_USERNAME, REDIS_PASSWORD
 * and REDIS_TLS are the credentials and TLS of a Cluster's or Sentinel master's nodes (with
 * REDIS_URL they apply too, but the URL's own user, password and rediss:// win).
 */
function redisConnection(env: Env): RedisConnection | undefined {
  const given = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name]);
  if (given.length > 1)
    throw new Error(`${given.join(' and ')} are set: set only one (one Redis, a Redis Cluster, or a Sentinel-watched master)`);
  const auth = {
    ...(env.REDIS_USERNAME && { username: env.REDIS_USERNAME }),
    ...(env.REDIS_PASSWORD && { password: env.REDIS_PASSWORD }),
    ...(bool('REDIS_TLS', env.REDIS_TLS, false) && { tls: true }),
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

/** A count of proxies (0: none), or a boolean. */
function trustProxy(v: string | undefined): boolean | number {
  if (v === undefined || v === '') return false;
  if (/^\d+$/.test(v.trim())) return wholeNumber('TRUST_PROXY', v, 0) || false;
  try {
    return bool('TRUST_PROXY', v, false);
  } catch {
    throw new Error(`TRUST_PROXY: "${v}" is neither a number of proxies nor a boolean (true/false, yes/no, on/off)`);
  }
}
