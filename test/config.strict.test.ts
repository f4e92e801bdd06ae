// loadConfig refuses malformed settings at start, naming the variable and the value, instead of
// running with NaN (a limit turned off), a truncated number, a silent default or a late error.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';

/** Malformed for every whole-number setting. */
const NOT_NUMBERS = ['abc', '12abc', '1.5', '-1', '+5', '1e3', '0x10', '1_000', '1,000', 'NaN', 'Infinity', ' '];

/** Each numeric variable: what it reads into, the values it refuses beyond NOT_NUMBERS, edge values it takes. */
const NUMBERS: { name: string; get: (c: Config) => unknown; outOfRange: string[]; edges: [string, unknown][] }[] = [
  {
    name: 'PORT',
    get: (c) => c.port,
    outOfRange: ['65536', '99999'],
    edges: [
      ['0', 0],
      ['1', 1],
      ['65535', 65535],
      [' 8080 ', 8080],
    ],
  },
  {
    name: 'SNAPSHOT_CACHE_MB',
    get: (c) => c.snapshotCacheMb,
    outOfRange: [],
    edges: [
      ['0', 0],
      ['256', 256],
    ],
  },
  {
    name: 'STORE_REPAIR_INTERVAL_MS',
    get: (c) => c.storeRepairIntervalMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['2147483647', 2147483647],
    ],
  },
  {
    name: 'MONGODB_READ_TIMEOUT_MS',
    get: (c) => c.mongodbReadTimeoutMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['1500', 1500],
    ],
  },
  {
    name: 'MONGODB_START_TIMEOUT_MS',
    get: (c) => c.mongodbStartTimeoutMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['2000', 2000],
    ],
  },
  {
    name: 'CODE_TTL_SECONDS',
    get: (c) => c.codeTtlSeconds,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['86400', 86400],
    ],
  },
  {
    name: 'CODE_MAX_ATTEMPTS',
    get: (c) => c.codeMaxAttempts,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['1000000', 1000000],
    ],
  },
  {
    name: 'PASSWORD_MIN_LENGTH',
    get: (c) => c.passwordPolicy.minLength,
    outOfRange: ['0', '73'],
    edges: [
      ['1', 1],
      ['72', 72],
      ['012', 12],
    ],
  },
  {
    name: 'BCRYPT_COST',
    get: (c) => c.bcryptCost,
    outOfRange: ['0', '3', '32', '40'],
    edges: [
      ['4', 4],
      ['31', 31],
    ],
  },
  {
    name: 'GATEWAY_NODE_ID',
    get: (c) => c.nodeId,
    outOfRange: ['1024', '2000'],
    edges: [
      ['0', 0],
      ['1023', 1023],
    ],
  },
  // Below 1000 it is raised to 1000 (as before: the lease tests run with 900).
  {
    name: 'NODE_ID_LEASE_TTL_MS',
    get: (c) => c.nodeIdLeaseTtlMs,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1000],
      ['900', 1000],
      ['60000', 60000],
    ],
  },
  { name: 'SAML_METADATA_TIMEOUT_MS', get: (c) => c.samlMetadata.timeoutMs, outOfRange: ['0'], edges: [['1', 1]] },
  {
    name: 'SAML_METADATA_MAX_BYTES',
    get: (c) => c.samlMetadata.maxBytes,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['8192', 8192],
    ],
  },
  { name: 'U2F_CHALLENGE_TTL_SECONDS', get: (c) => c.webauthn.challengeTtlSeconds, outOfRange: ['0'], edges: [['1', 1]] },
  {
    name: 'SMTP_PORT',
    get: (c) => c.smtp.port,
    outOfRange: ['0', '65536'],
    edges: [
      ['1', 1],
      ['1025', 1025],
      ['65535', 65535],
    ],
  },
  {
    name: 'DELIVERY_MAX_TRIES',
    get: (c) => c.delivery.maxTries,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['50', 50],
    ],
  },
  {
    name: 'DELIVERY_BACKOFF_MS',
    get: (c) => c.delivery.backoffMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['50', 50],
    ],
  },
  {
    name: 'DELIVERY_MAX_BACKOFF_MS',
    get: (c) => c.delivery.maxBackoffMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['400', 400],
    ],
  },
  {
    name: 'DELIVERY_CLAIM_IDLE_MS',
    get: (c) => c.delivery.claimIdleMs,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['1000', 1000],
    ],
  },
  {
    name: 'RESEND_LIMIT_PER_HOUR',
    get: (c) => c.resendLimitPerHour,
    outOfRange: [],
    edges: [
      ['0', 0],
      ['1', 1],
    ],
  },
  {
    name: 'RATE_LIMIT_PER_CALLER_PER_MINUTE',
    get: (c) => c.http.rateLimitPerCaller,
    outOfRange: ['99999999999999999999'],
    edges: [
      ['0', 0],
      ['1000000', 1000000],
    ],
  },
  {
    name: 'RATE_LIMIT_PER_IP_PER_MINUTE',
    get: (c) => c.http.rateLimitPerIp,
    outOfRange: [],
    edges: [
      ['0', 0],
      ['3', 3],
    ],
  },
  {
    name: 'SHUTDOWN_TIMEOUT_MS',
    get: (c) => c.http.shutdownTimeoutMs,
    outOfRange: ['2147483648'],
    edges: [
      ['0', 0],
      ['300', 300],
    ],
  },
  { name: 'IDEMPOTENCY_TTL_SECONDS', get: (c) => c.http.idempotencyTtlSeconds, outOfRange: ['0'], edges: [['1', 1]] },
  { name: 'HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT', get: (c) => c.http.maxInflightBytesPerClient, outOfRange: ['0'], edges: [['1', 1]] },
  {
    name: 'HTTP_MAX_INFLIGHT_BYTES',
    get: (c) => c.http.maxInflightBytes,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['40000000', 40000000],
    ],
  },
  {
    name: 'METRICS_PORT',
    get: (c) => c.metrics.port,
    outOfRange: ['65536'],
    edges: [
      ['0', 0],
      ['9464', 9464],
    ],
  },
  {
    name: 'HTTP_REQUEST_TIMEOUT_MS',
    get: (c) => c.http.requestTimeoutMs,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1],
      ['120000', 120000],
    ],
  },
  {
    name: 'HTTP_WRITE_TIMEOUT_MS',
    get: (c) => c.http.writeTimeoutMs,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1],
      ['2000', 2000],
    ],
  },
  {
    name: 'HTTP_MAX_UNSENT_BYTES_PER_CONNECTION',
    get: (c) => c.http.maxUnsentBytesPerConnection,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['1048576', 1048576],
    ],
  },
  {
    name: 'HTTP_MAX_CONNECTIONS',
    get: (c) => c.http.maxConnections,
    outOfRange: ['0'],
    edges: [
      ['1', 1],
      ['5000', 5000],
    ],
  },
  {
    name: 'HTTP2_MAX_CONCURRENT_STREAMS',
    get: (c) => c.http.http2MaxConcurrentStreams,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1],
      ['128', 128],
    ],
  },
  {
    name: 'HTTP2_IDLE_TIMEOUT_MS',
    get: (c) => c.http.http2IdleTimeoutMs,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1],
      ['300000', 300000],
    ],
  },
  {
    name: 'HTTP2_RESETS_PER_CLIENT_PER_MINUTE',
    get: (c) => c.http.http2ResetsPerClientPerMinute,
    outOfRange: [],
    edges: [
      ['0', 0],
      ['1', 1],
    ],
  },
  {
    name: 'HTTP2_RESET_BLOCK_MS',
    get: (c) => c.http.http2ResetBlockMs,
    outOfRange: ['0', '2147483648'],
    edges: [
      ['1', 1],
      ['600000', 600000],
    ],
  },
  {
    name: 'METRICS_RATE_LIMIT_PER_IP_PER_MINUTE',
    get: (c) => c.http.metricsPerIpPerMinute,
    outOfRange: [],
    edges: [
      ['0', 0],
      ['5', 5],
    ],
  },
];

const BOOLEANS: { name: string; get: (c: Config) => boolean; base?: Record<string, string> }[] = [
  { name: 'PASSWORD_REQUIRE_LOWER', get: (c) => c.passwordPolicy.requireLower },
  { name: 'PASSWORD_REQUIRE_UPPER', get: (c) => c.passwordPolicy.requireUpper },
  { name: 'PASSWORD_REQUIRE_DIGIT', get: (c) => c.passwordPolicy.requireDigit },
  { name: 'PASSWORD_REQUIRE_SYMBOL', get: (c) => c.passwordPolicy.requireSymbol },
  { name: 'GRAPHIQL', get: (c) => c.graphiql },
  { name: 'INTROSPECTION', get: (c) => c.introspection },
  { name: 'SAML_METADATA_ALLOW_PRIVATE', get: (c) => c.samlMetadata.allowPrivateAddresses },
  { name: 'SMTP_SECURE', get: (c) => c.smtp.secure },
  { name: 'RUN_WORKER', get: (c) => c.delivery.runWorker },
  { name: 'REDIS_TLS', get: (c) => c.redis?.tls === true, base: { REDIS_CLUSTER_NODES: 'a:7000' } },
];

const refusal = (name: string, value: string) => new RegExp(`^${name}: "${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" `);
const load = (env: Record<string, string | undefined>) => loadConfig(env);

describe('numeric settings', () => {
  for (const { name, get, outOfRange, edges } of NUMBERS) {
    it(`${name}: malformed or out of range stops the start with its name and value; edge values are taken`, () => {
      // Each setting alone: nothing else can be what refuses.
      for (const bad of [...NOT_NUMBERS, ...outOfRange]) {
        expect(() => load({ [name]: bad }), `${name}=${JSON.stringify(bad)}`).toThrow(refusal(name, bad));
      }
      for (const [value, want] of edges) expect(get(load({ [name]: value })), `${name}=${value}`).toBe(want);
    });
  }

  it('the reported cases: a limit can no longer be turned off by a typo', () => {
    expect(() => load({ CODE_MAX_ATTEMPTS: 'abc' })).toThrow('CODE_MAX_ATTEMPTS: "abc" is not a whole number');
    expect(() => load({ RATE_LIMIT_PER_IP_PER_MINUTE: 'abc' })).toThrow('RATE_LIMIT_PER_IP_PER_MINUTE: "abc" is not a whole number');
    expect(() => load({ PASSWORD_MIN_LENGTH: 'abc' })).toThrow('PASSWORD_MIN_LENGTH: "abc" is not a whole number');
    expect(() => load({ CODE_MAX_ATTEMPTS: '12abc' })).toThrow('CODE_MAX_ATTEMPTS: "12abc" is not a whole number');
    expect(() => load({ PORT: 'abc' })).toThrow('PORT: "abc" is not a whole number');
    expect(() => load({ BCRYPT_COST: '40' })).toThrow('BCRYPT_COST: "40" is out of range: 4 to 31');
    expect(() => load({ GATEWAY_NODE_ID: '2000' })).toThrow('GATEWAY_NODE_ID: "2000" is out of range: 0 to 1023');
    expect(() => load({ CODE_MAX_ATTEMPTS: '0' })).toThrow('CODE_MAX_ATTEMPTS: "0" is out of range: at least 1');
  });

  it('unset or empty: the documented defaults', () => {
    const empty = Object.fromEntries(NUMBERS.map((n) => [n.name, '']));
    for (const c of [load({}), load(empty)]) {
      expect(NUMBERS.map((n) => [n.name, n.get(c)])).toEqual([
        ['PORT', 4000],
        ['SNAPSHOT_CACHE_MB', 32],
        ['STORE_REPAIR_INTERVAL_MS', 1000],
        ['MONGODB_READ_TIMEOUT_MS', 10000],
        ['MONGODB_START_TIMEOUT_MS', 30000],
        ['CODE_TTL_SECONDS', 3600],
        ['CODE_MAX_ATTEMPTS', 5],
        ['PASSWORD_MIN_LENGTH', 8],
        ['BCRYPT_COST', 10],
        ['GATEWAY_NODE_ID', undefined],
        ['NODE_ID_LEASE_TTL_MS', 30000],
        ['SAML_METADATA_TIMEOUT_MS', 5000],
        ['SAML_METADATA_MAX_BYTES', 1048576],
        ['U2F_CHALLENGE_TTL_SECONDS', 300],
        ['SMTP_PORT', 587],
        ['DELIVERY_MAX_TRIES', 10],
        ['DELIVERY_BACKOFF_MS', 5000],
        ['DELIVERY_MAX_BACKOFF_MS', 900000],
        ['DELIVERY_CLAIM_IDLE_MS', 60000],
        ['RESEND_LIMIT_PER_HOUR', 5],
        ['RATE_LIMIT_PER_CALLER_PER_MINUTE', 1200],
        ['RATE_LIMIT_PER_IP_PER_MINUTE', 300],
        ['SHUTDOWN_TIMEOUT_MS', 10000],
        ['IDEMPOTENCY_TTL_SECONDS', 86400],
        ['HTTP_MAX_INFLIGHT_BYTES_PER_CLIENT', undefined],
        ['HTTP_MAX_INFLIGHT_BYTES', undefined],
        ['METRICS_PORT', undefined],
        ['HTTP_REQUEST_TIMEOUT_MS', 60000],
        ['HTTP_WRITE_TIMEOUT_MS', 30000],
        ['HTTP_MAX_UNSENT_BYTES_PER_CONNECTION', 16777216],
        ['HTTP_MAX_CONNECTIONS', undefined],
        ['HTTP2_MAX_CONCURRENT_STREAMS', 100],
        ['HTTP2_IDLE_TIMEOUT_MS', 60000],
        ['HTTP2_RESETS_PER_CLIENT_PER_MINUTE', 600],
        ['HTTP2_RESET_BLOCK_MS', 60000],
        ['METRICS_RATE_LIMIT_PER_IP_PER_MINUTE', 60],
      ]);
    }
    expect(load({ SMTP_SECURE: 'true' }).smtp.port).toBe(465);
  });
});

describe('true/false settings', () => {
  const TRUE = ['true', 'TRUE', 'True', '1', 'yes', 'YES', 'on', 'On', ' true '];
  const FALSE = ['false', 'FALSE', '0', 'no', 'No', 'off', 'OFF', ' off '];
  const BAD = ['ture', 'flase', 'y', 'n', 't', 'f', '2', '-1', 'enabled', 'disable', 'yes please', ' '];
  for (const { name, get, base } of BOOLEANS) {
    it(`${name}: true/false, 1/0, yes/no, on/off in any case; anything else stops the start with its name and value`, () => {
      for (const v of TRUE) expect(get(load({ ...base, [name]: v })), `${name}=${JSON.stringify(v)}`).toBe(true);
      for (const v of FALSE) expect(get(load({ ...base, [name]: v })), `${name}=${JSON.stringify(v)}`).toBe(false);
      for (const v of BAD) expect(() => load({ ...base, [name]: v }), `${name}=${JSON.stringify(v)}`).toThrow(refusal(name, v));
    });
  }

  it('unset or empty: the documented defaults', () => {
    const empty = Object.fromEntries(BOOLEANS.map((b) => [b.name, '']));
    for (const env of [{}, empty]) {
      expect(BOOLEANS.map((b) => [b.name, b.get(load(env))])).toEqual([
        ['PASSWORD_REQUIRE_LOWER', true],
        ['PASSWORD_REQUIRE_UPPER', true],
        ['PASSWORD_REQUIRE_DIGIT', true],
        ['PASSWORD_REQUIRE_SYMBOL', true],
        ['GRAPHIQL', true],
        ['INTROSPECTION', true],
        ['SAML_METADATA_ALLOW_PRIVATE', false],
        ['SMTP_SECURE', false],
        ['RUN_WORKER', true],
        ['REDIS_TLS', false],
      ]);
      const prod = load({ ...env, NODE_ENV: 'production' });
      expect([prod.graphiql, prod.introspection]).toEqual([false, false]);
    }
  });

  it('the reported case: GRAPHIQL=ture is refused, not false', () => {
    expect(() => load({ GRAPHIQL: 'ture' })).toThrow('GRAPHIQL: "ture" is not a boolean');
  });

  it('TRUST_PROXY: a number of proxies or a boolean', () => {
    const cases: [string | undefined, boolean | number][] = [
      [undefined, false],
      ['', false],
      ['0', false],
      ['1', 1],
      [' 2 ', 2],
      ['true', true],
      ['YES', true],
      ['false', false],
      ['off', false],
    ];
    for (const [v, want] of cases) expect(load(v === undefined ? {} : { TRUST_PROXY: v }).http.trustProxy, `TRUST_PROXY=${v}`).toBe(want);
    for (const bad of ['ture', '-1', '1.5', '2 proxies', 'all'])
      expect(() => load({ TRUST_PROXY: bad }), bad).toThrow(refusal('TRUST_PROXY', bad));
  });
});

describe('MONGODB_URL', () => {
  it('a MongoDB connection string by its scheme; anything else stops the start, its password masked', () => {
    for (const url of [
      'mongodb://127.0.0.1:27017/',
      'mongodb+srv://cluster0.example.net/?retryWrites=true',
      ' mongodb://a,b,c/?replicaSet=rs0 ',
    ])
      expect(load({ MONGODB_URL: url }).mongodbUrl).toBe(url.trim());
    expect(load({ MONGODB_URL: '' }).mongodbUrl).toBeUndefined();
    expect(() => load({ MONGODB_URL: 'notaurl' })).toThrow('MONGODB_URL: "notaurl" is not a MongoDB connection string');
    for (const bad of ['127.0.0.1:27017', 'http://127.0.0.1:27017', 'mongodb:/x', ' '])
      expect(() => load({ MONGODB_URL: bad }), bad).toThrow(/^MONGODB_URL: /);
    const refused = (() => {
      try {
        load({ MONGODB_URL: 'mongo://admin:hunter2@db.example:27017' });
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(refused).toContain('mongo://***@db.example:27017');
    expect(refused).not.toContain('hunter2');
  });
});

describe('LOG_LEVEL', () => {
  it('debug, info, warn or error (any case); unset or empty: info; anything else stops the start', () => {
    expect(load({}).logLevel).toBe('info');
    expect(load({ LOG_LEVEL: '' }).logLevel).toBe('info');
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      expect(load({ LOG_LEVEL: level }).logLevel).toBe(level);
      expect(load({ LOG_LEVEL: ` ${level.toUpperCase()} ` }).logLevel).toBe(level);
    }
    for (const bad of ['verbose', 'trace', 'fatal', 'warning', 'silent', 'inf', ' '])
      expect(() => load({ LOG_LEVEL: bad }), bad).toThrow(refusal('LOG_LEVEL', bad));
    expect(() => load({ LOG_LEVEL: 'verbose' })).toThrow('LOG_LEVEL: "verbose" is not a log level (debug, info, warn, error)');
  });
});

describe('METRICS_HOST', () => {
  it('127.0.0.1 unless set; empty counts as unset', () => {
    expect(load({}).metrics.host).toBe('127.0.0.1');
    expect(load({ METRICS_HOST: '' }).metrics.host).toBe('127.0.0.1');
    expect(load({ METRICS_HOST: '0.0.0.0', METRICS_PORT: '9464' }).metrics).toEqual({ host: '0.0.0.0', port: 9464 });
  });
});

describe('HOST and DATA_DIR', () => {
  it('empty counts as unset: the defaults, not every interface nor the working directory', () => {
    for (const env of [{}, { HOST: '', DATA_DIR: '' }]) {
      const c = load(env);
      expect(c.host).toBe('127.0.0.1');
      expect(c.dataDir).toBe(path.resolve('data'));
    }
    const set = load({ HOST: '0.0.0.0', DATA_DIR: '/var/lib/gw' });
    expect([set.host, set.dataDir]).toEqual(['0.0.0.0', path.resolve('/var/lib/gw')]);
  });
});

describe('what the tests and deployments pass stays valid', () => {
  it('test gateways (PORT 0, BCRYPT_COST 4) and the Docker image', () => {
    expect(load({ BCRYPT_COST: '4', PORT: '0', HOST: '127.0.0.1' })).toMatchObject({ bcryptCost: 4, port: 0, host: '127.0.0.1' });
    expect(load({ HOST: '0.0.0.0', PORT: '4000', NODE_ENV: 'production', DATA_DIR: '/data' })).toMatchObject({
      host: '0.0.0.0',
      port: 4000,
      dataDir: '/data',
    });
    expect(load({ SMTP_PORT: '1025', SMTP_SECURE: 'false', SHUTDOWN_TIMEOUT_MS: '10000', TRUST_PROXY: 'false' }).smtp).toMatchObject({
      port: 1025,
      secure: false,
    });
  });
});
