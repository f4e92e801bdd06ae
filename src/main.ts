// `npm start`: open the stores, make sure an administrator exists, serve.
import { createLocalTokenSigner } from './auth/tokens.ts';
import { bootstrap } from './commands/bootstrap.ts';
import { loadConfig } from './config.ts';
import { createGateway } from './server.ts';

const config = loadConfig();
const gateway = await createGateway(config);
const admin = await bootstrap({ deps: gateway.deps, callerId: 'system', orgHeader: null });
const { url } = await gateway.listen();

const lines = [
  `Identity gateway listening on ${url}${config.production ? '' : ' (GraphiQL: open it in a browser)'}`,
  `Storage: ${config.mongodbUrl ? 'MongoDB' : `embedded, in ${config.dataDir}`}; codes: ${config.redisUrl ? 'Redis' : 'memory'}`,
  `Instance administrator: user id ${admin.adminUserId} (default organization ${admin.defaultOrgId})${admin.created ? ', created now' : ''}`,
];
if (!config.jwksUrl) {
  const token = await createLocalTokenSigner(config).sign(admin.adminUserId);
  lines.push(`Administrator token (send as "Authorization: Bearer <token>"):`, token);
}
process.stdout.write(lines.join('\n') + '\n');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    gateway.close().then(() => process.exit(0), () => process.exit(1));
  });
}
