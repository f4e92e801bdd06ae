// Load → decide → append, retried from fresh state when another writer won the race.
import { alreadyExists, failedPrecondition } from '../errors.ts';
import { ConcurrencyError, ConstraintError, type AggregateType, type Snapshot, type StoredEvent } from '../store/port.ts';
import type { CommandContext } from './context.ts';

export interface Decision {
  type: string;
  payload: Record<string, unknown>;
  resourceOwner: string;
  claims?: string[];
}

const MAX_ATTEMPTS = 50;

/** What a uniqueness key is about, for the ALREADY_EXISTS message: the key's prefix. */
const claimSubject = (key: string) => key.slice(0, key.indexOf(':')) || key;

export async function write<S>(
  ctx: CommandContext,
  type: AggregateType,
  id: string,
  decide: (current: Snapshot<S> | null) => Decision | Promise<Decision>,
): Promise<{ event: StoredEvent; snapshot: Snapshot<S> }> {
  const { store } = ctx.deps;
  for (let attempt = 1; ; attempt++) {
    const current = await store.load<S>(type, id);
    const decision = await decide(current);
    try {
      return await store.append<S>(
        {
          aggregateType: type,
          aggregateId: id,
          sequence: (current?.sequence ?? 0) + 1,
          type: decision.type,
          payload: decision.payload,
          creator: ctx.callerId ?? 'system',
          resourceOwner: decision.resourceOwner,
        },
        { claims: decision.claims },
      );
    } catch (err) {
      if (err instanceof ConstraintError) throw alreadyExists(claimSubject(err.key));
      if (!(err instanceof ConcurrencyError)) throw err;
      if (!current && (type === 'user' || type === 'org')) throw alreadyExists(`${type} ${id}`);
      if (attempt >= MAX_ATTEMPTS) throw failedPrecondition(`${type} ${id} is changing too often, try again`);
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
    }
  }
}
