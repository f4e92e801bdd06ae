// `npm start`: open the stores, make sure an administrator exists, serve.
import { createLocalTokenSigner } from './auth/tokens.ts';
import { bootstrap } from './commands/bootstrap.ts';
import { loadConfig } from './config.ts';
import { createGateway } from './server.ts';
import { UnavailableError } from './errors.ts';

const config = loadConfig();
const gateway = await createGateway(config);
const admin = await bootstrapWhenReachable();
const { url, metricsUrl } = await gateway.listen();

const lines = [
  `Identity gateway listening on ${url}${config.graphiql ? ' (GraphiQL: open it in a browser)' : ''}`,
  `Storage: ${config.mongodbUrl ? 'MongoDB' : `embedded, in ${config.dataDir}`}; codes: ${config.redis ? (config.redis.kind === 'cluster' ? 'Redis Cluster' : 'Redis') : 'memory'}`,
  ...(metricsUrl ? [`Metrics (Prometheus) on ${metricsUrl}`] : []),
  `Instance administrator: user id ${admin.adminUserId} (default organization ${admin.defaultOrgId})${admin.created ? ', created now' : ''}`,
];
if (!config.jwksUrl) {
  const token = await createLocalTokenSigner(config).sign(admin.adminUserId);
  lines.push(`Administrator token (send as "Authorization: Bearer <token>"):`, token);
}
process.stdout.write(lines.join('\n') + '\n');

// SIGTERM/SIGINT: stop accepting, let in-flight requests finish within SHUTDOWN_TIMEOUT_MS,
// stop the worker, close the stores, exit 0 (1 when requests had to be cut or closing failed).
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

/** A MongoDB that is not up yet (containers starting together) delays the start instead of failing it. */
async function bootstrapWhenReachable() {
  for (let attempt = 1; ; attempt++) {
    try {
      return await bootstrap({ deps: gateway.deps, callerId: 'system', orgHeader: null });
    } catch (err) {
      if (!(err instanceof UnavailableError)) throw err;
      if (attempt === 1 || attempt % 10 === 0) gateway.logger.log('warn', 'store unreachable at start; retrying', { attempt });
      await new Promise((r) => setTimeout(r, Math.min(attempt, 5) * 1000));
    }
  }
}
