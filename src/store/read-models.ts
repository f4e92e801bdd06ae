// The read side of an admin console (issue 13), as a port every EventStore adapter
// answers: user search with keyset paging, and a window of one aggregate's events.
//
// The store is generic over its states, so what a user search looks at is handed to
// it as a projection (userSearchFields in src/model/users.ts): every adapter keeps
// those fields beside the state document, written with it, so a reader never sees a
// user half-written.

import type { UserSearchFields } from '../model/users.ts';

// A user's searchable fields are the model's (src/model/users.ts), text case-folded with its `fold`.
export type { UserSearchFields };

/**
 * Case-insensitive text matching; `value` is already folded. Literal, code point by code
 * point, with no wildcards: EXACT is equality, PREFIX "the field starts with value",
 * SUFFIX "the field ends with value", CONTAINS "value is a substring of the field"
 * (PREFIX, SUFFIX and CONTAINS with an empty value match every row).
 */
export interface TextMatch {
  op: 'EXACT' | 'PREFIX' | 'SUFFIX' | 'CONTAINS';
  value: string;
}

/**
 * Conditions on a user, all of which must hold (an empty object: every user). They nest:
 * `allOf` (every one holds), `anyOf` (at least one holds; an empty list: none) and `not`
 * (it does not hold), the wire's and/or/not queries. How deep and how many is bounded by
 * the command (user-search-inputs.ts), not here.
 */
export interface UserConditions {
  username?: TextMatch;
  email?: TextMatch;
  displayName?: TextMatch;
  firstName?: TextMatch;
  lastName?: TextMatch;
  /** Prefixes, folded (the GraphQL filter's; the same as a PREFIX match above). */
  displayNamePrefix?: string;
  firstNamePrefix?: string;
  lastNamePrefix?: string;
  state?: string;
  emailVerified?: boolean;
  /** creationDate >= createdFrom and < createdTo. */
  createdFrom?: Date;
  createdTo?: Date;
  /** The user's id is one of these (an empty list: none): one index lookup per id. */
  ids?: string[];
  /** The folded email is one of these, exactly (an empty list: none). */
  emails?: string[];
  allOf?: UserConditions[];
  anyOf?: UserConditions[];
  not?: UserConditions;
}

export interface UserFilter extends UserConditions {
  /** The owning organization; undefined searches every organization (instance roles only). */
  orgId?: string;
}

export type UserSortField = 'USERNAME' | 'CREATION_DATE' | 'CHANGE_DATE';

/**
 * A position in one order: the sort value of a row (folded username, or a date's
 * epoch milliseconds) and its id, the tie-breaker. Rows are ordered by (value, id),
 * both ascending or both descending. Strings (usernames, ids) compare by Unicode code
 * point, which is UTF-8 byte order: MongoDB's without a collation, SQLite's BINARY (in
 * JS, not `<` on UTF-16 units, which differs past U+FFFF).
 */
export interface UserKey {
  value: string | number;
  id: string;
}

export interface UserSearch {
  filter: UserFilter;
  sort: UserSortField;
  descending: boolean;
  /** Only rows strictly after this key in the order above. */
  after?: UserKey;
  /** At most this many rows (the caller asks one more than a page to learn whether there is a next). */
  limit: number;
  /**
   * At most this weight of user states (weight.ts): the store stops before the row that
   * would pass it and throws ReadLimitError with the number of rows that fit.
   */
  maxBytes?: number;
}

/** The sort key of a user row, for cursors: the same value the adapters order by. */
export function userKey(sort: UserSortField, row: { id: string; fields: UserSearchFields; creationDate: Date; changeDate: Date }): UserKey {
  const value =
    sort === 'USERNAME' ? row.fields.username : sort === 'CREATION_DATE' ? row.creationDate.getTime() : row.changeDate.getTime();
  return { value, id: row.id };
}
