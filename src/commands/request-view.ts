// The request's view of the store (ctx.view): each aggregate is read at most once per
// CommandContext; reads counted in the request's budget (ctx.reads, read-budget.ts).
import { ReadLimitError } from '../errors.ts';
import type { AggregateType, Snapshot } from '../store/port.ts';
import { snapshotWeight } from '../store/weight.ts';
import type { CommandContext, RequestView } from './command-context.ts';
import { noteOrgs } from './org-hints.ts';
import { chargeReads, settled, settleReads, takeReads } from './read-budget.ts';

// ---------------------------------------------------------------------------
// The request's view of the store: each aggregate is read at most once per
// CommandContext (one request, or one call of the wire API). Loads that do not
// depend on each other are asked for together (prefetch: one find per aggregate
// type, all in flight at once); what a command appends replaces what it read.
// Nothing outlives the context but the organization hints below, which are never
// trusted for an answer. Roles are read fresh by every request.

export const newRequestView = (): RequestView => new Map();
const keyOf = (type: AggregateType, id: string) => `${type}\u0000${id}`;

/** What to read together: ids per aggregate type (null and undefined are skipped). */
export type Wanted = Partial<Record<AggregateType, readonly (string | null | undefined)[]>>;

/**
 * Reads every aggregate of `wanted` not read yet by this request, in one round
 * trip: one load (or one loadMany) per type, all in flight together.
 */
export async function prefetch(ctx: CommandContext, wanted: Wanted): Promise<void> {
  const view = ctx.view;
  const batches: Promise<unknown>[] = [];
  for (const [type, list] of Object.entries(wanted) as [AggregateType, Wanted[AggregateType]][]) {
    const ids = [...new Set((list ?? []).filter((id): id is string => !!id && !view.has(keyOf(type, id))))];
    if (ids.length === 0) continue;
    const noted = readMany(ctx, type, ids).then((found) => (noteOrgs(ctx.deps.orgHints, type, found.values()), found));
    for (const id of ids) {
      const one = noted.then((found) => found.get(id) ?? null);
      one.catch(() => {}); // a failed read fails whoever awaits it, not the process
      view.set(keyOf(type, id), one);
    }
    batches.push(noted);
  }
  await Promise.all(batches);
}

/** One read of `ids`, counted in the request's read budget. */
async function readMany(ctx: CommandContext, type: AggregateType, ids: string[]): Promise<Map<string, Snapshot<unknown>>> {
  const { store } = ctx.deps;
  if (ids.length === 1) {
    const one = await store.load(type, ids[0]!);
    const waiting = one && chargeReads(ctx.reads, snapshotWeight(one));
    if (waiting) await waiting;
    return new Map(one ? [[one.id, one]] : []);
  }
  let found: Map<string, Snapshot<unknown>>;
  for (;;) {
    const taken = takeReads(ctx.reads);
    try {
      found = await store.loadMany(type, ids, taken);
    } catch (err) {
      settleReads(ctx.reads, taken, 0);
      const budget = ctx.reads;
      if (!(err instanceof ReadLimitError) || budget.reserved === 0) throw err;
      await settled(budget);
      continue;
    }
    let used = 0;
    for (const s of found.values()) used += snapshotWeight(s);
    settleReads(ctx.reads, taken, used);
    return found;
  }
}

/** One aggregate, read once per request (null when it does not exist). */
export async function load<S>(ctx: CommandContext, type: AggregateType, id: string): Promise<Snapshot<S> | null> {
  const view = ctx.view;
  if (!view.has(keyOf(type, id))) await prefetch(ctx, { [type]: [id] });
  return (await view.get(keyOf(type, id))!) as Snapshot<S> | null;
}

/** Several aggregates of one type, the ones not read yet in one read; missing ones are absent. */
export async function loadMany<S>(ctx: CommandContext, type: AggregateType, ids: readonly string[]): Promise<Map<string, Snapshot<S>>> {
  await prefetch(ctx, { [type]: ids });
  const view = ctx.view;
  const result = new Map<string, Snapshot<S>>();
  for (const id of new Set(ids)) {
    const snapshot = (await view.get(keyOf(type, id))!) as Snapshot<S> | null;
    if (snapshot) result.set(id, snapshot);
  }
  return result;
}

/** What the request now knows of an aggregate (after its append, or a catch-up). */
export function remember(ctx: CommandContext, type: AggregateType, id: string, snapshot: Snapshot<unknown> | null): void {
  ctx.view.set(keyOf(type, id), Promise.resolve(snapshot));
  noteOrgs(ctx.deps.orgHints, type, [snapshot]);
}

/** The aggregate caught up from its events after `known` (after a ConcurrencyError). */
export async function refresh<S>(
  ctx: CommandContext,
  type: AggregateType,
  id: string,
  known: Snapshot<S> | null,
): Promise<Snapshot<S> | null> {
  const snapshot = await ctx.deps.store.catchUp<S>(type, id, known);
  remember(ctx, type, id, snapshot);
  return snapshot;
}
