// User search on the SQLite event store (src/store/read-models.ts), as SQL over
// user_search. Every sort has an index (org, value, id) and (value, id), so a page
// is an index range read from its key on. Prefixes are ranges too (value >= p AND
// value < the next string after every one starting with p), so they use the same
// indexes; CONTAINS scans. Loaded in the worker thread: erasable TypeScript only.
import type { SQLInputValue } from 'node:sqlite';
import type { TextMatch, UserFilter, UserSearch } from './read-models.ts';

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
  add(term: string, ...params: SQLInputValue[]): void {
    this.terms.push(term);
    this.params.push(...params);
  }
  prefix(column: string, value: string): void {
    if (value === '') return;
    const end = prefixEnd(value);
    if (end === null) this.add(`${column} >= ?`, value);
    else this.add(`${column} >= ? AND ${column} < ?`, value, end);
  }
  text(column: string, match: TextMatch): void {
    if (match.op === 'EXACT') this.add(`${column} = ?`, match.value);
    else if (match.op === 'PREFIX') this.prefix(column, match.value);
    else this.add(`instr(${column}, ?) > 0`, match.value);
  }
  get sql(): string {
    return this.terms.length > 0 ? `WHERE ${this.terms.join(' AND ')}` : '';
  }
}

function where(filter: UserFilter): Where {
  const w = new Where();
  if (filter.orgId !== undefined) w.add('u.org = ?', filter.orgId);
  if (filter.username) w.text('u.username', filter.username);
  if (filter.email) w.text('u.email', filter.email);
  if (filter.displayNamePrefix !== undefined) w.prefix('u.display_name', filter.displayNamePrefix);
  if (filter.firstNamePrefix !== undefined) w.prefix('u.first_name', filter.firstNamePrefix);
  if (filter.lastNamePrefix !== undefined) w.prefix('u.last_name', filter.lastNamePrefix);
  if (filter.state !== undefined) w.add('u.state = ?', filter.state);
  if (filter.emailVerified !== undefined) w.add('u.email_verified = ?', filter.emailVerified ? 1 : 0);
  if (filter.createdFrom) w.add('u.created >= ?', filter.createdFrom.getTime());
  if (filter.createdTo) w.add('u.created < ?', filter.createdTo.getTime());
  return w;
}

/**
 * The matching users' ids and state sequences, in the search's order, after its key, at most
 * its limit. No state comes back: the store takes the users it holds in memory at those
 * sequences from there, and loads only the others (a console asks for the same pages again).
 */
export function searchQuery(search: UserSearch): { sql: string; params: SQLInputValue[] } {
  const w = where(search.filter);
  const column = `u.${sortColumn[search.sort]}`;
  const direction = search.descending ? 'DESC' : 'ASC';
  if (search.after) w.add(`(${column}, u.id) ${search.descending ? '<' : '>'} (?, ?)`, search.after.value, search.after.id);
  // The page is chosen on user_search alone, and only its rows are joined to their states:
  // joining first would read the state of every match (90 ms for a prefix matching 6,250).
  const sql = `SELECT s.id, s.sequence
    FROM (SELECT u.id, ${column} AS k FROM user_search u ${w.sql} ORDER BY ${column} ${direction}, u.id ${direction} LIMIT ?) p
    CROSS JOIN states s ON s.type = 'user' AND s.id = p.id
    ORDER BY p.k ${direction}, p.id ${direction}`;
  return { sql, params: [...w.params, Math.max(0, Math.floor(search.limit))] };
}

export function countQuery(filter: UserFilter): { sql: string; params: SQLInputValue[] } {
  const w = where(filter);
  return { sql: `SELECT count(*) AS n FROM user_search u ${w.sql}`, params: w.params };
}
