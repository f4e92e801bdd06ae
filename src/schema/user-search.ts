// Query.users: the user search of admin consoles as a Relay connection. Thin: the
// arguments go to the command as they came (it checks them), the page comes back.
import type { ObjectRef, SchemaTypes } from '@pothos/core';
import { DEFAULT_PAGE, MAX_PAGE } from '../operations.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import type { Builder } from './builder.ts';

type Types = Builder extends PothosSchemaTypes.SchemaBuilder<infer T extends SchemaTypes> ? T : never;

// User and UserState are built in schema/users.ts; Pothos resolves a type named by a string.
const UserRef = 'User' as unknown as ObjectRef<Types, Snapshot<User>>;
const UserState = 'UserState' as never;

export function addUserSearch(builder: Builder) {
  const TextMatchOperator = builder.enumType('TextMatchOperator', {
    description: 'How a text filter matches, case-insensitively (after Unicode NFKC folding), with no wildcards.',
    values: {
      EXACT: { description: 'The whole value.' },
      PREFIX: { description: 'The beginning of the value.' },
      CONTAINS: { description: 'Anywhere in the value; slower than the other two.' },
    } as const,
  });
  const TextMatch = builder.inputType('TextMatch', {
    fields: (t) => ({ value: t.string({ required: true }), op: t.field({ type: TextMatchOperator, defaultValue: 'EXACT' }) }),
  });
  const UserFilter = builder.inputType('UserFilter', {
    description: 'Every given condition must hold. Text is compared case-insensitively.',
    fields: (t) => ({
      username: t.field({ type: TextMatch }),
      email: t.field({ type: TextMatch }),
      displayNamePrefix: t.string(),
      firstNamePrefix: t.string(),
      lastNamePrefix: t.string(),
      state: t.field({ type: UserState }),
      emailVerified: t.boolean(),
      createdAfter: t.field({ type: 'DateTime', description: 'Created at or after this time.' }),
      createdBefore: t.field({ type: 'DateTime', description: 'Created before this time.' }),
    }),
  });
  const UserOrderField = builder.enumType('UserOrderField', { values: ['USERNAME', 'CREATION_DATE', 'CHANGE_DATE'] as const });
  const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });
  const UserOrder = builder.inputType('UserOrder', {
    description: 'Users with the same value are ordered by id, in the same direction.',
    fields: (t) => ({
      field: t.field({ type: UserOrderField, defaultValue: 'USERNAME' }),
      direction: t.field({ type: OrderDirection, defaultValue: 'ASC' }),
    }),
  });

  builder.queryField('users', (t) =>
    t.connection(
      {
        type: UserRef,
        description:
          `Users of the organization selected by x-service-orgid (else the caller's), for callers with user.read there; ` +
          `with allOrganizations, of every organization, for instance administrators. Pages of first (or last) users, ` +
          `${DEFAULT_PAGE} by default, at most ${MAX_PAGE}; a cursor pages only the query (filter, order, organization) that returned it. ` +
          'Paging forward, hasPreviousPage is true when after is given (and backward, hasNextPage when before is).',
        args: {
          filter: t.arg({ type: UserFilter }),
          orderBy: t.arg({ type: UserOrder }),
          allOrganizations: t.arg.boolean(),
        },
        resolve: (_root, args, ctx) => ctx.ops.users(ctx.cmd, args),
      },
      {
        name: 'UserConnection',
        fields: (c) => ({
          totalCount: c.int({ description: 'How many users match, all pages together.', resolve: (page) => page.totalCount() }),
        }),
      },
      { name: 'UserEdge' },
    ),
  );
}
