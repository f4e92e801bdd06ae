// Suites that need a real server. Under CI a missing server fails the run;
// elsewhere the suite is skipped with a loud line saying so.
import { describe, inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    mongoUrl: string;
    /** Why a server could not be started (empty when it runs). */
    redisProblem: string;
    mongoProblem: string;
    /** Path of redis-server (empty when not found), for tests that stop and restart Redis. */
    redisServerBin: string;
    /** The gateway bundled once for the run (dist/test-gateway/main.js), what child gateways run. */
    gatewayBundle: string;
  }
}

export type ServerKind = 'redis' | 'mongo';

export function serverUrl(kind: ServerKind): string {
  return inject(kind === 'redis' ? 'redisUrl' : 'mongoUrl');
}

export function describeWith(kind: ServerKind, name: string, fn: (url: string) => void): void {
  // The GraphQL suites run again in upstream mode (test/upstream/) for the front gateway, whose
  // answers do not depend on the upstream's store: their MongoDB-wire half would test the store
  // a second time, at FerretDB's speed, and is left to the embedded run.
  if (kind === 'mongo' && process.env.GATEWAY_MODE === 'upstream') {
    describe.skip(`${name} (upstream mode: the embedded run covers the store)`, () => {});
    return;
  }
  const problem = inject(kind === 'redis' ? 'redisProblem' : 'mongoProblem');
  describeRequiring(serverUrl(kind), `${kind} server unavailable (${problem || 'not started'})`, name, fn);
}

/**
 * A suite that needs something this machine may lack (a server's URL, a tool's path):
 * given `found`, it runs; without it, under CI it fails, elsewhere it is skipped loudly.
 */
export function describeRequiring(found: string, problem: string, name: string, fn: (found: string) => void): void {
  if (!found) {
    const message = `${problem}: suite "${name}"`;
    if (process.env.CI) {
      describe(name, () => {
        throw new Error(`CI: ${message}`);
      });
      return;
    }
    console.warn(`\n!!! SKIPPED: ${message}\n`);
    describe.skip(name, () => fn(''));
    return;
  }
  describe(name, () => fn(found));
}
