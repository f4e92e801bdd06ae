// User search on the SQLite event store (src/store/read-models.ts), as SQL over
// user_search. Every sort has an index (org, value, id) and (value, id), so a page
// is an index range read from its key on. Prefixes are ranges too (value >= p AND
// value < the next string after every one starting with p), so they use the same
// indexes; CONTAINS and SUFFIX scan. A list of ids (or emails) is one lookup per value
// in the primary key (the email index). Loaded in the worker thread: erasable TypeScript only.
import type { SQLInputValue } from 'node:sqlite';
import type { TextMatch, UserConditions, UserFilter, UserSearch } from './read-models.ts';

const sortColumn = { USERNAME: 'username', CREATION_DATE: 'created', CHANGE_DATE: 'changed' } as const;

/**
 * The least string greater than every string starting with `prefix`: its last code
 * point plus one (SQLite compares UTF-8 bytes, which is code point order); null when
 * there is none (every code point the highest).
 */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    let last = points.pop()!;
    if (last >= 0x10ffff) continue;
    last += 1;
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000; // no surrogate halves in UTF-8
    return String.fromCodePoint(...points, last);
  }
  return null;
}

class Where {
  readonly terms: string[] = [];
  readonly params: SQLInputValue[] = [];
  /** A list to hold bounds the rows, and only the list's own column may pick an index (see `where`). */
  readonly driven: boolean;
  constructor(driven = false) {
    this.driven = driven;
  }
  /** A column as a term names it: `+column` keeps its index out of the planner's choice. */
  col(name: string): string {
    return this.driven ? `+${name}` : name;
  }
  add(term: string, ...params: SQLInputValue[]): void {
    this.terms.push(term);
    this.params.push(...params);
  }
  prefix(name: string, value: string): void {
    if (value === '') return;
    const column = this.col(name);
    const end = prefixEnd(value);
    if (end === null) this.add(`${column} >= ?`, value);
    else this.add(`${column} >= ? AND ${column} < ?`, value, end);
  }
  text(column: string, match: TextMatch): void {
    if (match.op === 'EXACT') this.add(`${this.col(column)} = ?`, match.value);
    else if (match.op === 'PREFIX') this.prefix(column, match.value);
    else if (match.op === 'SUFFIX') this.suffix(column, match.value);
    else this.add(`instr(${column}, ?) > 0`, match.value);
  }
  /** substr from the end counts characters (code points); an empty suffix matches every row. */
  suffix(column: string, value: string): void {
    if (value !== '') this.add(`substr(${column}, ?) = ?`, -[...value].length, value);
  }
  /** One of the values: a list of parameters, so that SQLite knows the list and looks each value up in an index. */
  among(column: string, values: readonly string[]): void {
    if (values.length === 0) this.add('0');
    else this.add(`${column} IN (${values.map(() => '?').join(', ')})`, ...values);
  }
  /** A nested conjunction as one term. */
  nested(inner: Where): string {
    this.params.push(...inner.params);
    return inner.expression;
  }
  /** The terms ANDed, in parentheses; `1` (true) when there are none. */
  get expression(): string {
    return this.terms.length > 0 ? `(${this.terms.join(' AND ')})` : '1';
  }
  get sql(): string {
    return this.terms.length > 0 ? `WHERE ${this.terms.join(' AND ')}` : '';
  }
}

function conditions(c: UserConditions, w = new Where()): Where {
  if (c.username) w.text('u.username', c.username);
  if (c.email) w.text('u.email', c.email);
  if (c.displayName) w.text('u.display_name', c.displayName);
  if (c.firstName) w.text('u.first_name', c.firstName);
  if (c.lastName) w.text('u.last_name', c.lastName);
  if (c.displayNamePrefix !== undefined) w.prefix('u.display_name', c.displayNamePrefix);
  if (c.firstNamePrefix !== undefined) w.prefix('u.first_name', c.firstNamePrefix);
  if (c.lastNamePrefix !== undefined) w.prefix('u.last_name', c.lastNamePrefix);
  if (c.state !== undefined) w.add(`${w.col('u.state')} = ?`, c.state);
  if (c.emailVerified !== undefined) w.add(`${w.col('u.email_verified')} = ?`, c.emailVerified ? 1 : 0);
  if (c.createdFrom) w.add(`${w.col('u.created')} >= ?`, c.createdFrom.getTime());
  if (c.createdTo) w.add(`${w.col('u.created')} < ?`, c.createdTo.getTime());
  if (c.ids) w.among('u.id', c.ids);
  if (c.emails) w.among('u.email', c.emails);
  for (const sub of c.allOf ?? []) conditions(sub, w);
  if (c.anyOf) {
    // Parameters in the order the terms are written: each branch's as it is added.
    const branches = c.anyOf.map((sub) => w.nested(conditions(sub, new Where(w.driven))));
    w.terms.push(branches.length > 0 ? `(${branches.join(' OR ')})` : '0');
  }
  if (c.not) w.terms.push(`NOT ${w.nested(conditions(c.not, new Where(w.driven)))}`);
  return w;
}

/** True when an id or email list must hold (at the top, or in an allOf there): at most its length of rows match. */
const listed = (c: UserConditions): boolean => c.ids !== undefined || c.emails !== undefined || (c.allOf ?? []).some(listed);

/**
 * With a list to hold, the list is looked up (primary key, email index) and its at most 1000
 * rows sorted: without stats SQLite would rather walk the organization's range of the order's
 * index (or a prefix's range) to save the sort, every user of it for a page of a few. So every
 * other column of such a search is written `+column`, which no index serves.
 */
function where(filter: UserFilter, driven: boolean): Where {
  const w = new Where(driven);
  if (filter.orgId !== undefined) w.add(`${w.col('u.org')} = ?`, filter.orgId);
  return conditions(filter, w);
}

/**
 * The matching users' ids and state sequences, in the search's order, after its key, at most
 * its limit. No state comes back: the store takes the users it holds in memory at those
 * sequences from there, and loads only the others (a console asks for the same pages again).
 */
export function searchQuery(search: UserSearch): { sql: string; params: SQLInputValue[] } {
  const driven = listed(search.filter);
  const w = where(search.filter, driven);
  const sorted = `u.${sortColumn[search.sort]}`;
  const direction = search.descending ? 'DESC' : 'ASC';
  if (search.after)
    w.add(`(${w.col(sorted)}, ${w.col('u.id')}) ${search.descending ? '<' : '>'} (?, ?)`, search.after.value, search.after.id);
  // The page is chosen on user_search alone, and only its rows are joined to their states:
  // joining first would read the state of every match (90 ms for a prefix matching 6,250).
  const sql = `SELECT s.id, s.sequence
    FROM (SELECT u.id, ${sorted} AS k FROM user_search u ${w.sql} ORDER BY ${sorted} ${direction}, u.id ${direction} LIMIT ?) p
    CROSS JOIN states s ON s.type = 'user' AND s.id = p.id
    ORDER BY p.k ${direction}, p.id ${direction}`;
  return { sql, params: [...w.params, Math.max(0, Math.floor(search.limit))] };
}

export function countQuery(filter: UserFilter): { sql: string; params: SQLInputValue[] } {
  const w = where(filter, listed(filter));
  return { sql: `SELECT count(*) AS n FROM user_search u ${w.sql}`, params: w.params };
}
