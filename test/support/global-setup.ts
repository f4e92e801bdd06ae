// Starts the servers the tests need, unless REDIS_URL / MONGODB_URL name them:
// redis-server and FerretDB (SQLite backend), each on a free loopback port
// with its data in a temp folder. Both die with the test process.
// And bundles the gateway once (scripts/bundle.mjs, as npm run build does) for the tests that
// run it as a child process: the bundle starts on a third of the CPU `node --import tsx
// src/main.ts` takes (no TypeScript to compile, no thousand files to resolve), and some forty
// children start in a run. (`npm start` itself, tsx on the sources, is started by the
// quick-start and start-up tests.)
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { cleanup, findFerretBinary, findRedisBinary, startServers } from './servers-start.ts';

export default async function setup(project: TestProject) {
  // CI's log says which runtime ran the tests (package.json brings Node 24 for npm scripts).
  console.log(`[node] tests run on Node ${process.version} (${process.execPath})`);
  const root = path.resolve(import.meta.dirname, '../..');
  execFileSync(process.execPath, ['scripts/bundle.mjs', '--outdir', 'dist/test-gateway'], { cwd: root, stdio: 'inherit' });
  project.provide('gatewayBundle', path.join(root, 'dist/test-gateway/main.js'));
  const redisBin = findRedisBinary();
  const { redis, mongo } = await startServers(redisBin, findFerretBinary());

  for (const [name, server] of [
    ['redis', redis],
    ['mongo', mongo],
  ] as const) {
    console.log(server.url ? `[test servers] ${name}: ${server.url} (${server.how})` : `[test servers] ${name}: none (${server.problem})`);
  }

  project.provide('redisUrl', redis.url);
  project.provide('redisProblem', redis.problem);
  project.provide('mongoUrl', mongo.url);
  project.provide('mongoProblem', mongo.problem);
  project.provide('redisServerBin', redisBin);
  return cleanup;
}
