// `history` on User, Organization, Project and IdentityProvider: who changed what,
// newest first, redacted (src/model/history.ts), as a Relay connection.
import type { ObjectRef } from '@pothos/core';
import type { HistoryKind, HistoryPage } from '../operations.ts';
import { summarize, type Change } from '../model/history.ts';
import type { User } from '../model/users.ts';
import type { Snapshot, StoredEvent } from '../store/port.ts';
import type { Builder } from './builder.ts';
import { entityLoader } from './entities.ts';

type Types = Builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * A type implemented in another file, by its name: Pothos resolves names of
 * implemented types, so the field is added without reaching into that file.
 */
const implemented = <Shape>(name: string) => name as unknown as ObjectRef<Types, Shape>;

const owners: [typeName: string, kind: HistoryKind][] = [
  ['User', 'user'],
  ['Organization', 'org'],
  ['Project', 'project'],
  ['IdentityProvider', 'idp'],
];

export function addHistory(builder: Builder) {
  const HistoryChange = builder.objectRef<Change>('HistoryChange').implement({
    description: 'A field an event set. Secrets show that they were set, never their value; metadata shows its keys only.',
    fields: (t) => ({
      field: t.exposeString('field'),
      value: t.exposeString('value', {
        nullable: true,
        description:
          'The new value as text (JSON for lists and objects); null when cleared, or for a secret (password, client secret) that was set.',
      }),
    }),
  });

  const HistoryEvent = builder.objectRef<StoredEvent>('HistoryEvent').implement({
    description: 'One event of an object: what changed, when, and who did it.',
    fields: (t) => ({
      type: t.exposeString('type', { description: 'The event type, e.g. user.email.changed.' }),
      sequence: t.field({ type: 'UInt64', description: "The object's sequence after the event.", resolve: (e) => e.sequence }),
      createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
      editorId: t.exposeID('creator', { description: "The user who made the change, or 'system'." }),
      editor: t.field({
        type: implemented<Snapshot<User>>('User'),
        nullable: true,
        description: "The user who made the change; null for 'system', or a user the caller may not see (or that no longer exists).",
        // Through the entity loader: one batched read for a page's editors, under the read rules of `_entities`.
        resolve: (e, _args, ctx) => (e.creator === 'system' ? null : entityLoader<Snapshot<User>>(ctx, 'user')(e.creator)),
      }),
      changes: t.field({ type: [HistoryChange], resolve: (e) => summarize(e).changes }),
    }),
  });

  const HistoryConnection = builder.connectionObject(
    {
      type: HistoryEvent,
      name: 'HistoryConnection',
      edgesNullable: { list: false, items: false },
      nodeNullable: false,
      fields: (t) => ({
        totalCount: t.int({ description: 'How many events the object has.', resolve: (c) => (c as unknown as HistoryPage).totalCount }),
      }),
    },
    { name: 'HistoryEdge' },
  );

  for (const [typeName, kind] of owners) {
    builder.objectField(implemented<{ id: string }>(typeName), 'history', (t) =>
      t.connection(
        {
          type: HistoryEvent,
          nullable: true,
          description:
            "The object's events, newest first (first/after), or from the oldest (last/before); at most 100 a page, 20 when neither first nor last is given. " +
            (kind === 'user'
              ? 'For the user itself, or a caller holding user.read in its organization.'
              : 'For whoever may read the object.'),
          resolve: (parent, args, ctx) => ctx.ops.history(ctx.cmd, kind, parent.id, args),
        },
        HistoryConnection,
      ),
    );
  }
}
