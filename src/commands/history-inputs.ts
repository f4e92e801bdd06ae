// History paging without I/O, for both implementations of the operations (the commands'
// history.ts over the store, upstream mode's over ZITADEL's change lists): the arguments and
// their checks, the cursors (opaque, bound to one aggregate), the window of sequences a page
// covers, and the page made of the events read for it. Sequences run 1..n without gaps, so the
// object's sequence is the count and a page is a sequence range.
import { invalidArgument, type FieldViolation } from '../errors.ts';
import type { StoredEvent } from '../store/port.ts';
import type { EntityKind } from './entities.ts';

export type HistoryKind = EntityKind;

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface HistoryPage {
  totalCount: number;
  /** Newest first. */
  edges: { cursor: string; node: StoredEvent }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export interface SequenceQuery {
  /** Events older than this sequence, newest first (past the newest, or absent: from the newest). */
  beforeSequence?: number | null;
  /** Events newer than this sequence, oldest first (absent or 0: from the oldest). */
  afterSequence?: number | null;
  /** The page size: null for the default, at most MAX_PAGE (else INVALID_ARGUMENT on `first`, or `last` going forward). */
  limit?: number | null;
}

// Opaque to clients, bound to one aggregate: a cursor of another one is refused.
const encodeCursor = (kind: HistoryKind, id: string, sequence: number) =>
  Buffer.from(JSON.stringify([kind, id, sequence])).toString('base64url');

function decodeCursor(kind: HistoryKind, id: string, cursor: string): number | null {
  try {
    const [k, i, sequence] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (k !== kind || i !== id || !Number.isSafeInteger(sequence) || (sequence as number) < 1) return null;
    // Only the canonical spelling: base64url decoding skips characters it does not know.
    return encodeCursor(kind, id, sequence as number) === cursor ? (sequence as number) : null;
  } catch {
    return null;
  }
}

/** The arguments checked without I/O, as every violated field; the cursors' sequences. */
export function checkArgs(kind: HistoryKind, id: string, page: PageArgs) {
  const violations: FieldViolation[] = [];
  if (page.first != null && page.last != null) violations.push({ field: 'last', description: 'first and last cannot be given together' });
  for (const field of ['first', 'last'] as const) {
    const n = page[field];
    if (n != null && (!Number.isInteger(n) || n < 0 || n > MAX_PAGE))
      violations.push({ field, description: `must be between 0 and ${MAX_PAGE}` });
  }
  const cursors = { after: null as number | null, before: null as number | null };
  for (const field of ['after', 'before'] as const) {
    const cursor = page[field];
    if (cursor == null) continue;
    cursors[field] = decodeCursor(kind, id, cursor);
    if (cursors[field] === null) violations.push({ field, description: 'is not a cursor of this history' });
  }
  if (violations.length > 0) throw invalidArgument(violations);
  return cursors;
}

/** A window of sequences [oldest, newest] and the object's count. */
export interface HistoryWindow {
  total: number;
  newest: number;
  oldest: number;
}

/** The window of a cursor page: `after` a cursor is older, `before` it newer (the list is newest first); a cursor past the count is refused. */
export function cursorWindow(cursors: ReturnType<typeof checkArgs>, total: number): HistoryWindow {
  for (const field of ['after', 'before'] as const) {
    if ((cursors[field] ?? 0) > total) throw invalidArgument([{ field, description: 'is not a cursor of this history' }]);
  }
  return { total, newest: cursors.after !== null ? cursors.after - 1 : total, oldest: cursors.before !== null ? cursors.before + 1 : 1 };
}

/** A sequence query as a page and its sequence, checked (the window follows once the count is known: sequenceWindow). */
export function sequencePage(kind: HistoryKind, id: string | null, query: SequenceQuery) {
  const forward = query.afterSequence != null;
  const page: PageArgs = forward ? { last: query.limit ?? DEFAULT_PAGE } : { first: query.limit ?? DEFAULT_PAGE };
  checkArgs(kind, id ?? '', page);
  const sequence = (forward ? query.afterSequence : query.beforeSequence) ?? 0;
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw invalidArgument([{ field: forward ? 'afterSequence' : 'beforeSequence', description: 'must be a sequence (0 or more)' }]);
  }
  return { page, forward, sequence };
}

/** The window of a sequence query: a sequence past the newest is not refused (back in time it starts at the newest, forward the page is empty). */
export const sequenceWindow = ({ forward, sequence }: { forward: boolean; sequence: number }, total: number): HistoryWindow => ({
  total,
  newest: forward || sequence === 0 ? total : Math.min(total, sequence - 1),
  oldest: forward ? sequence + 1 : 1,
});

/** The sequences [from, to] a page reads of its window: `last` from its oldest end, else `first` from its newest. */
export const pageRange = ({ newest, oldest }: HistoryWindow, page: PageArgs): [number, number] =>
  page.last != null
    ? [oldest, Math.min(newest, oldest + page.last - 1)]
    : [Math.max(oldest, newest - (page.first ?? DEFAULT_PAGE) + 1), newest];

/** The page of `events` (newest first, those of [from, to]) read for `range` of `window`. */
export function historyPage(
  kind: HistoryKind,
  id: string,
  window: HistoryWindow,
  page: PageArgs,
  [from, to]: [number, number],
  events: StoredEvent[],
): HistoryPage {
  const edges = events.map((node) => ({ cursor: encodeCursor(kind, id, node.sequence), node }));
  return {
    totalCount: window.total,
    edges,
    // Relay's rules: the direction paged in looks inside the window (more edges than asked for);
    // the other looks past the cursor that bounds the window (events beyond it exist).
    pageInfo: {
      hasNextPage: page.last != null ? from > 1 : from > window.oldest,
      hasPreviousPage: page.last != null ? to < window.newest : to < window.total,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
