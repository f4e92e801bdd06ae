// What every command receives: its dependencies and who is calling.
import type { Config } from '../config.ts';
import type { CodeService } from '../codes/codes.ts';
import type { Notifier } from '../notify/port.ts';
import type { RateLimiter } from '../notify/rate-limit.ts';
import type { AggregateType, EventStore, Snapshot } from '../store/port.ts';
import { snapshotWeight } from '../store/weight.ts';
import { ReadLimitError, readTooLarge } from '../errors.ts';
import type { PasswordHasher } from '../model/passwords.ts';

export interface Deps {
  config: Config;
  store: EventStore;
  codes: CodeService;
  notifier: Notifier;
  /** Per-user limits (resendEmailCode / resendPhoneCode); Redis when REDIS_URL is set. */
  rateLimiter: RateLimiter;
  hasher: PasswordHasher;
  newId: () => string;
  /** AES-256-GCM key for OIDC client secrets at rest. */
  idpSecretKey: Buffer;
}

export interface CommandContext {
  deps: Deps;
  /** The authenticated user id, or null when the request carried no valid token. */
  callerId: string | null;
  /** Set when a token was sent but is not valid: every operation answers it. */
  authError?: Error;
  /** The x-service-orgid header, when sent. */
  orgHeader: string | null;
}

/** The `details` object of SPEC.md, from the snapshot after the event. */
export interface Details {
  sequence: number;
  creationDate: Date | null;
  changeDate: Date;
  resourceOwner: string;
}

export function detailsOf(snapshot: Snapshot<unknown>, withCreationDate: boolean): Details {
  return {
    sequence: snapshot.sequence,
    creationDate: withCreationDate ? snapshot.changeDate : null,
    changeDate: snapshot.changeDate,
    resourceOwner: snapshot.resourceOwner,
  };
}

// ---------------------------------------------------------------------------
// The request's view of the store: each aggregate is read at most once per
// CommandContext (one request, or one call of the wire API). Loads that do not
// depend on each other are asked for together (prefetch: one find per aggregate
// type, all in flight at once); what a command appends replaces what it read.
// Nothing outlives the context but the organization hints below, which are never
// trusted for an answer. Roles are read fresh by every request.

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

interface ReadBudget {
  used: number;
  reserved: number;
  /** Reads of many waiting for the room others hold: woken at every settle. */
  waiting: (() => void)[];
}
const reads = new WeakMap<CommandContext, ReadBudget>();
function readsOf(ctx: CommandContext): ReadBudget {
  let budget = reads.get(ctx);
  if (!budget) reads.set(ctx, (budget = { used: 0, reserved: 0, waiting: [] }));
  return budget;
}

/** Reserves room for one read of many: its maxBytes. Settle it with `settleReads`. */
export function takeReads(ctx: CommandContext): number {
  const budget = readsOf(ctx);
  const taken = Math.max(READ_BUDGET_BYTES - budget.used - budget.reserved, READ_FLOOR_BYTES);
  budget.reserved += taken;
  return taken;
}

/** After a read that reserved `taken` and read `used` bytes of state: RESOURCE_EXHAUSTED when it passed its room. */
export function settleReads(ctx: CommandContext, taken: number, used: number): void {
  const budget = readsOf(ctx);
  budget.reserved -= taken;
  for (const wake of budget.waiting.splice(0)) wake();
  if (!fits(budget, used, taken)) throw readTooLarge(READ_BUDGET_BYTES);
  budget.used += used;
}

const fits = (budget: ReadBudget, used: number, taken: number) =>
  used <= Math.max(taken, READ_FLOOR_BYTES) || budget.used + budget.reserved + used <= READ_BUDGET_BYTES;

/** Until a read settles: the room it held may be what another read waits for. */
const settled = (budget: ReadBudget) => new Promise<void>((wake) => budget.waiting.push(wake));

/**
 * Counts a read that reserved nothing (one aggregate, a page of events), once there is room for
 * it: RESOURCE_EXHAUSTED when there is none and no other read holds any. Nothing to wait for
 * (the usual case, on every request's path): counted at once, no promise.
 */
export function chargeReads(ctx: CommandContext, used: number): Promise<void> | undefined {
  const budget = readsOf(ctx);
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

type Loaded = Promise<Snapshot<unknown> | null>;
const views = new WeakMap<CommandContext, Map<string, Loaded>>();
const keyOf = (type: AggregateType, id: string) => `${type}\u0000${id}`;

function viewOf(ctx: CommandContext): Map<string, Loaded> {
  let view = views.get(ctx);
  if (!view) views.set(ctx, (view = new Map()));
  return view;
}

/**
 * Which organization a user belongs to, as last seen by this process: a user's
 * organization never changes, so it only tells which organization to read in the
 * first round trip, beside the user. A wrong or missing hint costs one more
 * round trip, never a wrong answer (the user's document decides). Ids only, no
 * roles: permissions always come from documents read by the request.
 */
const orgHints = new WeakMap<EventStore, Map<string, string>>();
const MAX_HINTS = 20_000;

function noteOrgs(store: EventStore, type: AggregateType, snapshots: Iterable<Snapshot<unknown> | null>): void {
  if (type !== 'user') return;
  let hints = orgHints.get(store);
  if (!hints) orgHints.set(store, (hints = new Map()));
  for (const s of snapshots) {
    if (!s || hints.get(s.id) === s.resourceOwner) continue;
    if (hints.size >= MAX_HINTS) hints.delete(hints.keys().next().value!);
    hints.set(s.id, s.resourceOwner);
  }
}

/** The organization `userId` belonged to when this process last read it (a guess, see orgHints). */
export function orgHint(ctx: CommandContext, userId: string | null | undefined): string | undefined {
  return userId ? orgHints.get(ctx.deps.store)?.get(userId) : undefined;
}

/** What to read together: ids per aggregate type (null and undefined are skipped). */
export type Wanted = Partial<Record<AggregateType, readonly (string | null | undefined)[]>>;

/**
 * Reads every aggregate of `wanted` not read yet by this request, in one round
 * trip: one load (or one loadMany) per type, all in flight together.
 */
export async function prefetch(ctx: CommandContext, wanted: Wanted): Promise<void> {
  const { store } = ctx.deps;
  const view = viewOf(ctx);
  const batches: Promise<unknown>[] = [];
  for (const [type, list] of Object.entries(wanted) as [AggregateType, Wanted[AggregateType]][]) {
    const ids = [...new Set((list ?? []).filter((id): id is string => !!id && !view.has(keyOf(type, id))))];
    if (ids.length === 0) continue;
    const noted = readMany(ctx, type, ids).then((found) => (noteOrgs(store, type, found.values()), found));
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
    const waiting = one && chargeReads(ctx, snapshotWeight(one));
    if (waiting) await waiting;
    return new Map(one ? [[one.id, one]] : []);
  }
  let found: Map<string, Snapshot<unknown>>;
  for (;;) {
    const taken = takeReads(ctx);
    try {
      found = await store.loadMany(type, ids, taken);
    } catch (err) {
      settleReads(ctx, taken, 0);
      const budget = readsOf(ctx);
      if (!(err instanceof ReadLimitError) || budget.reserved === 0) throw err;
      await settled(budget);
      continue;
    }
    let used = 0;
    for (const s of found.values()) used += snapshotWeight(s);
    settleReads(ctx, taken, used);
    return found;
  }
}

/** One aggregate, read once per request (null when it does not exist). */
export async function load<S>(ctx: CommandContext, type: AggregateType, id: string): Promise<Snapshot<S> | null> {
  const view = viewOf(ctx);
  if (!view.has(keyOf(type, id))) await prefetch(ctx, { [type]: [id] });
  return (await view.get(keyOf(type, id))!) as Snapshot<S> | null;
}

/** Several aggregates of one type, the ones not read yet in one read; missing ones are absent. */
export async function loadMany<S>(ctx: CommandContext, type: AggregateType, ids: readonly string[]): Promise<Map<string, Snapshot<S>>> {
  await prefetch(ctx, { [type]: ids });
  const view = viewOf(ctx);
  const result = new Map<string, Snapshot<S>>();
  for (const id of new Set(ids)) {
    const snapshot = (await view.get(keyOf(type, id))!) as Snapshot<S> | null;
    if (snapshot) result.set(id, snapshot);
  }
  return result;
}

/** What the request now knows of an aggregate (after its append, or a catch-up). */
export function remember(ctx: CommandContext, type: AggregateType, id: string, snapshot: Snapshot<unknown> | null): void {
  viewOf(ctx).set(keyOf(type, id), Promise.resolve(snapshot));
  noteOrgs(ctx.deps.store, type, [snapshot]);
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
