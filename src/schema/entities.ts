// Federation entities: User, Organization, Project and IdentityProvider are
// keyed by id, and `_entities` resolves the representations of one type in a
// request through one batched read (commands/entities.ts applies the read rules).
import { visibleMany, type EntityKind } from '../commands/entities.ts';
import type { Builder, GraphQLContext } from './builder.ts';

type Load<V> = (id: string) => Promise<V | null>;

/**
 * A per-request batcher, DataLoader-style: the ids asked for in one tick (the
 * `_entities` resolver asks for all its representations at once) go to `fetch`
 * together; answers are cached for the rest of the request.
 */
export function batcher<V>(fetch: (ids: readonly string[]) => Promise<Map<string, V>>): Load<V> {
  const cache = new Map<string, Promise<V | null>>();
  let pending: Map<string, { resolve: (v: V | null) => void; reject: (e: unknown) => void }> | null = null;
  const dispatch = (batch: NonNullable<typeof pending>) => {
    pending = null;
    fetch([...batch.keys()]).then(
      (found) => batch.forEach((waiter, id) => waiter.resolve(found.get(id) ?? null)),
      (err) => batch.forEach((waiter) => waiter.reject(err)),
    );
  };
  return (id) => {
    let answer = cache.get(id);
    if (!answer) {
      if (!pending) {
        const batch = (pending = new Map());
        // After the current promise jobs, like DataLoader: resolvers started together batch together.
        void Promise.resolve().then(() => process.nextTick(() => dispatch(batch)));
      }
      const batch = pending;
      answer = new Promise<V | null>((resolve, reject) => batch.set(id, { resolve, reject }));
      cache.set(id, answer);
    }
    return answer;
  };
}

const loaders = new WeakMap<GraphQLContext, Map<EntityKind, Load<unknown>>>();

/** The request's loader of one entity kind, created on first use. */
export function entityLoader<S>(ctx: GraphQLContext, kind: EntityKind): Load<S> {
  let byKind = loaders.get(ctx);
  if (!byKind) loaders.set(ctx, (byKind = new Map()));
  let load = byKind.get(kind);
  if (!load) byKind.set(kind, (load = batcher((ids) => visibleMany(ctx.cmd, kind, ids))));
  return load as Load<S>;
}

/** Marks an object type as an entity keyed by id; a representation the caller may not see resolves to null. */
export function asEntity(builder: Builder, ref: Parameters<Builder['asEntity']>[0], kind: EntityKind) {
  builder.asEntity(ref, {
    key: builder.selection<{ id: string }>('id'),
    // A copy: @apollo/subgraph tags the result with __typename, and snapshots may be frozen.
    resolveReference: async (reference, ctx) => {
      const found = await entityLoader<object>(ctx, kind)(String(reference.id));
      return (found && { ...found }) as never;
    },
  });
}
