// `npm start`: open the stores, make sure an administrator exists, serve.
// A start that fails says why in one line on stderr (src/start-errors.ts) and exits 1.
// The banner (where it listens, the storage, the administrator) is log lines like the rest,
// on stderr: stdout carries nothing, so a collector reading both sees one format.
import { writeAdminTokenFile } from './auth/admin-token-file.ts';
import { createLocalTokenSigner } from './auth/tokens.ts';
import { bootstrap } from './commands/bootstrap.ts';
import { systemContext } from './commands/request-context.ts';
import { loadConfig, type Config } from './config.ts';
import { UnavailableError } from './errors.ts';
import { createGateway, type Gateway } from './server.ts';
import { createUpstreamGateway } from './upstream-gateway.ts';
import { messageOf, redactUrl, redisUnreachable, startFailureLine, StartupError } from './start-errors.ts';

let config: Config | undefined;
/** Closed (within 5 s) when the start fails after it was created. */
let opened: Pick<Gateway, 'close'> | undefined;
try {
  config = loadConfig();
  await start(config);
} catch (err) {
  await failStart(err);
}

/** Upstream mode (ZITADEL_URL): no stores, no administrator of our own; the callers bring ZITADEL's tokens. */
async function startUpstream(config: Config) {
  const gateway = await createUpstreamGateway(config);
  opened = gateway;
  const { url, metricsUrl } = await gateway.listen();
  const log = (msg: string, fields: Record<string, unknown>) => gateway.logger.log('info', msg, fields);
  log(`Identity gateway listening on ${url}${config.graphiql ? ' (GraphiQL: open it in a browser)' : ''}`, { url });
  log(
    `In front of ${config.upstream!.url} over ${config.upstream!.transport === 'grpc' ? 'gRPC' : 'Connect'}; idempotency and rate limits: ${config.redis ? 'Redis' : 'memory'}`,
    { upstream: config.upstream!.url },
  );
  if (metricsUrl) log(`Metrics (Prometheus) on ${metricsUrl}`, { metricsUrl });
  handleSignals(config, gateway);
}

async function start(config: Config) {
  if (config.upstream) return startUpstream(config);
  const gateway = await createGateway(config).catch((err: unknown) => {
    // MongoDB is connected at the first request (below): a store unreachable here is Redis.
    throw config.redis && err instanceof UnavailableError ? redisUnreachable(config.redis, err) : err;
  });
  opened = gateway;
  const admin = await bootstrapWhenReachable(config, gateway);
  const { url, metricsUrl } = await gateway.listen();

  const log = (msg: string, fields: Record<string, unknown>) => gateway.logger.log('info', msg, fields);
  log(`Identity gateway listening on ${url}${config.graphiql ? ' (GraphiQL: open it in a browser)' : ''}`, { url });
  log(
    `Storage: ${config.mongodbUrl ? 'MongoDB' : `embedded, in ${config.dataDir}`}; codes: ${config.redis ? (config.redis.kind === 'cluster' ? 'Redis Cluster' : 'Redis') : 'memory'}`,
    { storage: config.mongodbUrl ? 'mongodb' : 'embedded' },
  );
  if (metricsUrl) log(`Metrics (Prometheus) on ${metricsUrl}`, { metricsUrl });
  log(
    `Instance administrator: user id ${admin.adminUserId} (default organization ${admin.defaultOrgId})${admin.created ? ', created now' : ''}`,
    { adminUserId: admin.adminUserId, defaultOrgId: admin.defaultOrgId, created: admin.created },
  );
  if (!config.jwksUrl) {
    // Written to a file on every start; shown only to a person at a terminal, and never with
    // NODE_ENV=production: stderr that is not a terminal is a log, and logs get shipped. The
    // token itself is no log line: it goes to the terminal alone, under the line naming it.
    const token = await createLocalTokenSigner(config).sign(admin.adminUserId);
    const file = await writeAdminTokenFile(config.dataDir, token);
    const about = `Administrator token (send as "Authorization: Bearer <token>"; valid 24 h)`;
    const atTerminal = !config.production && process.stderr.isTTY;
    // At a terminal the token follows its line directly: no fields after the colon.
    if (atTerminal) gateway.logger.log('info', `${about}, also in ${file}:`);
    else log(`${about}: written to ${file}`, { file });
    if (atTerminal) process.stderr.write(`${token}\n`);
  }
  handleSignals(config, gateway);
}

/** One line on stderr, what was opened closed (bounded), exit 1. LOG_LEVEL=debug adds the stack of an unexpected error. */
async function failStart(err: unknown): Promise<never> {
  const line = startFailureLine(err, { mongodbUrl: config?.mongodbUrl, host: config?.host, port: config?.port });
  process.stderr.write(`Identity gateway cannot start: ${line}\n`);
  if (config?.logLevel === 'debug' && !(err instanceof StartupError) && err instanceof Error && err.stack)
    process.stderr.write(`${err.stack}\n`);
  if (opened) await Promise.race([opened.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())]);
  process.exit(1);
}

// SIGTERM/SIGINT: stop accepting, let in-flight requests finish within SHUTDOWN_TIMEOUT_MS,
// stop the worker, close the stores, exit 0 (1 when requests had to be cut or closing failed).
function handleSignals(config: Config, gateway: Pick<Gateway, 'logger' | 'shutdown'>) {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      gateway.logger.log('info', 'shutting down', { signal, deadlineMs: config.http.shutdownTimeoutMs });
      // Whatever hangs past the deadline (a stuck store close) does not keep the process alive.
      setTimeout(() => process.exit(1), config.http.shutdownTimeoutMs + 5000).unref();
      gateway.shutdown().then(
        (clean) => {
          gateway.logger.log('info', 'stopped', { clean });
          process.exit(clean ? 0 : 1);
        },
        (err) => {
          gateway.logger.log('error', 'shutdown failed', { error: String((err as Error)?.message ?? err) });
          process.exit(1);
        },
      );
    });
  }
}

/**
 * A MongoDB that is not up yet (containers starting together) delays the start, for up to
 * MONGODB_START_TIMEOUT_MS; then the start fails naming MONGODB_URL. (Attempts already under
 * way finish: each is bounded by the driver's 2 s server selection.)
 */
async function bootstrapWhenReachable(config: Config, gateway: Gateway) {
  const deadline = Date.now() + config.mongodbStartTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await bootstrap(systemContext(gateway.deps));
    } catch (err) {
      if (!(err instanceof UnavailableError)) throw err;
      const where = config.mongodbUrl ? `MONGODB_URL: MongoDB at ${redactUrl(config.mongodbUrl)}` : `the event store in ${config.dataDir}`;
      const left = deadline - Date.now();
      if (left <= 0) {
        const cause = err.cause === undefined ? err : err.cause;
        throw new StartupError(
          `${where} did not answer within ${config.mongodbStartTimeoutMs} ms (MONGODB_START_TIMEOUT_MS): ${messageOf(cause)}`,
          { cause: err },
        );
      }
      if (attempt === 1 || attempt % 10 === 0)
        gateway.logger.log('warn', 'store unreachable at start; retrying', { attempt, leftMs: left, error: messageOf(err.cause ?? err) });
      await new Promise((r) => setTimeout(r, Math.min(attempt * 1000, 5000, left)));
    }
  }
}
