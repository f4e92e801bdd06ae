// A process that appends to a SQLite store until it is killed (test/store.sqlite.test.ts):
//   node --import tsx test/support/sqlite-writer-child.ts <dataDir>
// Eight writers, one aggregate each, append one event after another, each with a claim;
// every append acknowledged (resolved) is printed as "<aggregate id> <sequence>" before
// the next one starts (stdout on a pipe is synchronous on Linux).
import type { Reducers } from '../../src/store/port.ts';
import { createSqliteStore } from '../../src/store/sqlite.ts';

const count = (state: { count: number } | undefined) => ({ count: (state?.count ?? 0) + 1 });
const reducers: Reducers = { instance: count, org: count, user: count, idp: count, project: count };

const store = await createSqliteStore({ dataDir: process.argv[2]!, reducers });
process.stdout.write('ready\n');
await Promise.all(
  Array.from({ length: 8 }, async (_, w) => {
    const id = `writer-${w}`;
    let base = await store.load('user', id);
    for (;;) {
      const sequence = (base?.sequence ?? 0) + 1;
      const { snapshot } = await store.append(
        {
          aggregateType: 'user',
          aggregateId: id,
          sequence,
          type: 'user.counted',
          payload: { n: sequence },
          creator: 'child',
          resourceOwner: 'org',
        },
        { base, claims: [`claim:${id}:${sequence}`] },
      );
      process.stdout.write(`${id} ${sequence}\n`);
      base = snapshot;
    }
  }),
);
