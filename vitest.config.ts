import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/support/sequencer.ts';

const require = createRequire(import.meta.url);

// Node's compile cache for the test processes and the threads they start: a SQLite store's
// worker thread (one per command test: test/support/given.ts) strips its TypeScript again at
// every start without it, which doubles the start (measured: about 220 ms to about 90).
process.env.NODE_COMPILE_CACHE ??= path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/.cache/node-compile-cache');

export default defineConfig({
  resolve: {
    // One graphql realm: the CJS entry that every dependency also loads.
    alias: { graphql: require.resolve('graphql/index.js').replace(/index\.js$/, 'index.js') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Timeouts catch a test that hangs; they are not a speed limit. Generous, so that a test
    // that is merely slow (a loaded 2-core machine, FerretDB scanning) never fails on them;
    // a test that needs more says so itself.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Three files at a time, on any number of cores (vitest's default is one fewer than the
    // cores: one on the 2-core machines CI runs on). Many files wait on servers, child
    // processes and timers more than they compute, so three keep two cores busy: 445 s for
    // the whole run here instead of 780 s one at a time. No test depends on running alone:
    // each has its own databases, key prefixes, ports and temp folders.
    maxWorkers: 3,
    minWorkers: 1,
    sequence: { sequencer: SlowestFirst },
  },
});
