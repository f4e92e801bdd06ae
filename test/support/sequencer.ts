// The order test files start in. With several workers the run ends when its last file does,
// so the longest ones start first. vitest does this itself from the durations it cached on an
// earlier run (node_modules/.vite); a fresh clone has none, and vitest then starts the
// largest files first, which are not the slowest. These are the slowest as measured here
// (bash .ci/run prints the ten slowest of every run: keep this list in step with it); the
// rest follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const SLOWEST_FIRST = [
  'test/e2e.user-search.test.ts',
  'test/e2e.fleet.test.ts',
  'test/wire.list-users.test.ts',
  'test/bench.start-up.test.ts',
  'test/ids.lease.test.ts',
  'test/redis.cluster.test.ts',
  'test/store.user-search.test.ts',
  'test/e2e.catch-up.test.ts',
  'test/store.sqlite.test.ts',
  'test/wire.clients.test.ts',
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i < 0 ? SLOWEST_FIRST.length : i;
    };
    // Array.prototype.sort is stable: files off the list keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
