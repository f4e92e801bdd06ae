// One +1 as the command runner does it (src/commands/runner.ts): load once, append on that
// base, and only after a ConcurrencyError catch up from the events and retry. For the
// "50 concurrent writers lose nothing" tests of the store suites.
import { ConcurrencyError, type EventStore, type NewEvent } from '../../src/store/port.ts';

/** Appends ev(id, next sequence) for user `id`; resolves with the attempts it took. */
export async function increment(store: EventStore, id: string, ev: (id: string, sequence: number) => NewEvent): Promise<number> {
  let current = await store.load('user', id);
  for (let attempt = 1; ; attempt++) {
    try {
      await store.append(ev(id, (current?.sequence ?? 0) + 1), { base: current });
      return attempt;
    } catch (e) {
      if (!(e instanceof ConcurrencyError) || attempt > 200) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 5));
      current = await store.catchUp('user', id, current);
    }
  }
}
