// Starts the servers the tests need, unless REDIS_URL / MONGODB_URL name them:
// redis-server and FerretDB (SQLite backend), each on a free loopback port
// with its data in a temp folder. Both die with the test process.
import type { TestProject } from 'vitest/node';
import { cleanup, findFerretBinary, findRedisBinary, startServers } from './servers-start.ts';

export default async function setup(project: TestProject) {
  // CI's log says which runtime ran the tests (package.json brings Node 24 for npm scripts).
  console.log(`[node] tests run on Node ${process.version} (${process.execPath})`);
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
