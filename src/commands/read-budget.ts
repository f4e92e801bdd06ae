// What one request may read of stored state: a budget made with each CommandContext
// (ctx.reads), used by the request's view (request-view.ts) and the reads of many
// (user-search.ts, history.ts).
import { readTooLarge } from '../errors.ts';

/**
 * What one request may read of stored state (its JSON's length, src/store/weight.ts): a user
 * can weigh 10 MB (20 metadata values of 500,000 characters), so pages of users, federation
 * representations, histories and aliased reads are bounded by weight, not only by count.
 * A read of many reserves what is neither used nor reserved by reads running beside it (at
 * least READ_FLOOR_BYTES, so that those never starve small reads) and the store stops before
 * the state that would pass that; what it did not use is given back. A read of one aggregate
 * is counted once read. A read refused while others hold room waits for them to settle and
 * tries again (a read of many) or is counted again (one aggregate), so aliased reads get the
 * same room whatever order they run in. A read larger than the floor that finds no room left
 * answers RESOURCE_EXHAUSTED (a users page ends early instead: user-search.ts).
 */
export const READ_BUDGET_BYTES = 32 * 1024 * 1024;
export const READ_FLOOR_BYTES = 1024 * 1024;

export interface ReadBudget {
  used: number;
  reserved: number;
  /** Reads of many waiting for the room others hold: woken at every settle. */
  waiting: (() => void)[];
}
/** A request's budget, made with its context (request-context.ts). */
export const newReadBudget = (): ReadBudget => ({ used: 0, reserved: 0, waiting: [] });

/** Reserves room for one read of many: its maxBytes. Settle it with `settleReads`. */
export function takeReads(budget: ReadBudget): number {
  const taken = Math.max(READ_BUDGET_BYTES - budget.used - budget.reserved, READ_FLOOR_BYTES);
  budget.reserved += taken;
  return taken;
}

/** After a read that reserved `taken` and read `used` bytes of state: RESOURCE_EXHAUSTED when it passed its room. */
export function settleReads(budget: ReadBudget, taken: number, used: number): void {
  budget.reserved -= taken;
  for (const wake of budget.waiting.splice(0)) wake();
  if (!fits(budget, used, taken)) throw readTooLarge(READ_BUDGET_BYTES);
  budget.used += used;
}

const fits = (budget: ReadBudget, used: number, taken: number) =>
  used <= Math.max(taken, READ_FLOOR_BYTES) || budget.used + budget.reserved + used <= READ_BUDGET_BYTES;

/** Until a read settles: the room it held may be what another read waits for. */
export const settled = (budget: ReadBudget) => new Promise<void>((wake) => budget.waiting.push(wake));

/**
 * Counts a read that reserved nothing (one aggregate, a page of events), once there is room for
 * it: RESOURCE_EXHAUSTED when there is none and no other read holds any. Nothing to wait for
 * (the usual case, on every request's path): counted at once, no promise.
 */
export function chargeReads(budget: ReadBudget, used: number): Promise<void> | undefined {
  if (fits(budget, used, 0)) {
    budget.used += used;
    return undefined;
  }
  return (async () => {
    while (!fits(budget, used, 0)) {
      if (budget.reserved === 0) throw readTooLarge(READ_BUDGET_BYTES);
      await settled(budget);
    }
    budget.used += used;
  })();
}
