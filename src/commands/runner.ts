// Load → decide → append, retried from fresh state when another writer won the race
// (the protocol: src/store/port.ts).
import { alreadyExists, failedPrecondition } from '../errors.ts';
import { ConcurrencyError, ConstraintError, type AggregateType, type Snapshot, type StoredEvent } from '../store/port.ts';
import type { Aggregates } from '../model/reducers.ts';
import { load, refresh, remember, type CommandContext } from './context.ts';

/** What a command decided: one event of the aggregate's union (made by its constructors), its owner, the keys it claims. */
export type Decision<E> = E & {
  resourceOwner: string;
  claims?: string[];
};

const MAX_ATTEMPTS = 50;

/** What a uniqueness key is about, for the ALREADY_EXISTS message: the key's prefix. */
const claimSubject = (key: string) => key.slice(0, key.indexOf(':')) || key;

export interface WriteOptions {
  /** The id was just generated (no aggregate can have it): nothing is read; the unique index would tell otherwise. */
  isNew?: boolean;
}

/**
 * Decides on the snapshot the request already read (the request's view, see
 * context.ts: no second read) and appends at its sequence + 1 with it as the
 * base (the store reads nothing either). Only a ConcurrencyError (another writer
 * won, or the state document was behind its events after a crash) costs a read:
 * the events after the known sequence, then decide runs again on the result.
 */
export async function write<T extends AggregateType, S = Aggregates[T]['state']>(
  ctx: CommandContext,
  type: T,
  id: string,
  decide: (current: Snapshot<S> | null) => Decision<Aggregates[T]['event']> | Promise<Decision<Aggregates[T]['event']>>,
  options: WriteOptions = {},
): Promise<{ event: StoredEvent; snapshot: Snapshot<S> }> {
  const { store } = ctx.deps;
  let current = options.isNew ? null : await load<S>(ctx, type, id);
  for (let attempt = 1; ; attempt++) {
    const decision = await decide(current);
    try {
      const result = await store.append<S>(
        {
          aggregateType: type,
          aggregateId: id,
          sequence: (current?.sequence ?? 0) + 1,
          type: decision.type,
          payload: decision.payload,
          creator: ctx.callerId ?? 'system',
          resourceOwner: decision.resourceOwner,
        },
        { claims: decision.claims, base: current },
      );
      remember(ctx, type, id, result.snapshot);
      return result;
    } catch (err) {
      if (err instanceof ConstraintError) throw alreadyExists(claimSubject(err.key));
      if (!(err instanceof ConcurrencyError)) throw err;
      if (attempt >= MAX_ATTEMPTS) throw failedPrecondition(`${type} ${id} is changing too often, try again`);
      // The first retry at once (a stale state document is the likely cause); after
      // that, writers contend: spread them out, over a window doubling up to 100 ms
      // (full jitter), so that n writers cost about n appends, not n² failed ones.
      if (attempt > 1) await new Promise((r) => setTimeout(r, Math.random() * Math.min(100, 2 ** attempt)));
      current = await refresh<S>(ctx, type, id, current);
    }
  }
}
