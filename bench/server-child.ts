// One server under load, in its own process so the bench can read its RSS:
//   node dist/bench/server-child.js raw-http|yoga-ping|yoga-durable|connect-durable|gateway|gateway-front   (after npm run build)
// yoga-durable and connect-durable are the floors of a durable write under GraphQL and under the
// wire faces (gRPC over h2c, Connect over HTTP/1.1, one port); connect-durable prints its origin.
// gateway-front is the gateway in upstream mode (ZITADEL_URL in the environment: the upstream,
// e.g. another child's gateway), with GET /metrics on a port of its own (metricsUrl).
// Prints one JSON line on stdout when it listens ({ url, adminToken?, metricsUrl?, readyUs }) and stops on
// SIGTERM/SIGINT with process.exit, so `--cpu-prof` gets to write its profile.
// On SIGUSR2 it prints a mark line: event-loop delay and memory since the previous mark, and
// the process's CPU time so far (user + system, all threads, µs).
// The gateway reads its configuration from the environment, like `npm start`.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createSchema, createYoga } from 'graphql-yoga';
import { durableRows, type DurableRows } from './durable-rows.ts';

const kind = process.argv[2];

// The same monotonic clock as the V8 CPU profile's timestamps (µs), so samples taken
// before the server listened (module loading, bootstrap) can be left out.
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const out = (line: Record<string, unknown>) => process.stdout.write(JSON.stringify(line) + '\n');

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
/** The embedded store's appends and disk syncs (group commit), when the gateway uses it. */
let storeStats: () => { appends: number; syncs: number } | undefined = () => undefined;
let lastStats = { appends: 0, syncs: 0 };
process.on('SIGUSR2', () => {
  // The histogram holds the intervals between 10 ms timer ticks: the delay is what exceeds 10 ms.
  const ms = (ns: number) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 1024 / 102.4) / 10;
  const cpu = process.cpuUsage();
  out({
    mark: nowUs(),
    cpuUs: cpu.user + cpu.system,
    eventLoopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
    memoryMb: {
      rss: mb(m.rss),
      heapTotal: mb(m.heapTotal),
      heapUsed: mb(m.heapUsed),
      external: mb(m.external),
      arrayBuffers: mb(m.arrayBuffers),
    },
    store: diffStats(),
  });
  loopDelay.reset();
});

async function listen(server: NetServer): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/graphql`;
}

/** The floor: a small JSON POST parsed and answered, nothing else. */
function rawHttp(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let status = 200;
      let out: string;
      try {
        out = JSON.stringify({ data: { echo: JSON.parse(Buffer.concat(chunks).toString('utf8')) } });
      } catch {
        status = 400;
        out = '{"errors":[{"message":"bad JSON"}]}';
      }
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
}

/** Bare graphql-yoga with one mutation, wired to node:http the way src/server.ts does it. */
function yogaPing(): Server {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { ok: Boolean }\ntype Mutation { ping: Boolean }',
      resolvers: { Query: { ok: () => true }, Mutation: { ping: () => true } },
    }),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: false,
    logging: false,
  });
  return createServer(yoga);
}

/**
 * The floor of a durable write under graphql-yoga: yoga-ping's server whose mutation appends one
 * row to SQLite before it answers (durable-rows.ts: worker thread, group commit). No token,
 * permission, validation, log line or read: the gateway's own work on top of this is what
 * separates updateHumanProfile from it.
 */
function yogaDurable(rows: DurableRows): Server {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { written(prefix: String!): Int }\ntype Mutation { save(id: ID!, firstName: String!, lastName: String!): Int }',
      resolvers: {
        // The rows committed for ids starting with prefix: the bench's check that every answer was a write.
        Query: { written: (_: unknown, a: { prefix: string }) => rows.count(a.prefix) },
        Mutation: {
          save: (_: unknown, a: { id: string; firstName: string; lastName: string }) => rows.append(a.id, JSON.stringify(a)),
        },
      },
    }),
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: false,
    logging: false,
  });
  return createServer(yoga);
}

function diffStats() {
  const now = storeStats();
  if (!now) return undefined;
  const d = { appends: now.appends - lastStats.appends, syncs: now.syncs - lastStats.syncs };
  lastStats = { ...now };
  return d;
}

let stop: () => Promise<void> = async () => {};
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

const closeServer = (server: Server) => () =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

if (kind === 'raw-http' || kind === 'yoga-ping') {
  const server = kind === 'raw-http' ? rawHttp() : yogaPing();
  const url = await listen(server);
  stop = closeServer(server);
  out({ url, readyUs: nowUs() });
} else if (kind === 'yoga-durable' || kind === 'connect-durable') {
  const dataDir = process.env.DATA_DIR ?? mkdtempSync(path.join(tmpdir(), `${kind}-`));
  mkdirSync(dataDir, { recursive: true });
  const rows = durableRows(dataDir);
  if (kind === 'yoga-durable') {
    const server = yogaDurable(rows);
    const url = await listen(server);
    stop = async () => {
      await closeServer(server)();
      await rows.close();
    };
    out({ url, readyUs: nowUs() });
  } else {
    // Loaded only here: the other floors do not pay for connect's and @zitadel/proto's modules.
    const { connectFloor } = await import('./connect-floor.ts');
    const floor = connectFloor(rows);
    const url = await listen(floor.server);
    stop = async () => {
      await floor.close();
      await rows.close();
    };
    // The origin: gRPC and Connect paths are the method's, /written the read-back.
    out({ url: new URL(url).origin, readyUs: nowUs() });
  }
} else if (kind === 'gateway') {
  // Loaded only here: the baselines do not pay for the gateway's modules.
  const { loadConfig } = await import('../src/config.ts');
  const { createGateway } = await import('../src/server.ts');
  const { bootstrap } = await import('../src/commands/bootstrap.ts');
  const { systemContext } = await import('../src/commands/request-context.ts');
  const { createLocalTokenSigner } = await import('../src/auth/tokens.ts');
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0' });
  const gateway = await createGateway(config);
  const admin = await bootstrap(systemContext(gateway.deps));
  const { server, url } = await gateway.listen();
  const adminToken = await createLocalTokenSigner(config).sign(admin.adminUserId);
  const stats = (gateway.stores.store as { stats?: { appends: number; syncs: number } }).stats;
  if (stats) storeStats = () => ({ appends: stats.appends, syncs: stats.syncs });
  stop = async () => {
    server.closeAllConnections();
    await gateway.close();
  };
  out({ url, adminToken, adminUserId: admin.adminUserId, defaultOrgId: admin.defaultOrgId, readyUs: nowUs() });
} else if (kind === 'gateway-front') {
  // Upstream mode: no stores, no administrator; the callers' tokens are the upstream's.
  const { loadConfig } = await import('../src/config.ts');
  const { createUpstreamGateway } = await import('../src/upstream-gateway.ts');
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0' });
  if (!config.upstream) throw new Error('gateway-front: ZITADEL_URL is not set');
  const gateway = await createUpstreamGateway(config);
  const { server, url, metricsUrl } = await gateway.listen();
  stop = async () => {
    server.closeAllConnections();
    await gateway.close();
  };
  out({ url, metricsUrl, readyUs: nowUs() });
} else {
  process.stderr.write(
    `usage: node dist/bench/server-child.js raw-http|yoga-ping|yoga-durable|connect-durable|gateway|gateway-front (got ${kind})\n`,
  );
  process.exit(2);
}
