import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { GraphQLContext } from '../graphql/context.ts';

export type { GraphQLContext };

export type Scalars = {
  DateTime: { Input: Date; Output: Date };
  UInt64: { Input: string; Output: number | bigint | string };
  Base64: { Input: string; Output: string };
  JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
};

/** The builder's type parameters. */
export interface BuilderTypes {
  Context: GraphQLContext;
  Scalars: Scalars;
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
}

/** The schema types of the builder, as Pothos' refs and field builders take them. */
export type Types = PothosSchemaTypes.ExtendDefaultTypes<BuilderTypes>;

/** The field builder of an input type's fields. */
export type InputFields = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;

export function createBuilder() {
  return new SchemaBuilder<BuilderTypes>({
    // Federation last: it must see the resolvers the other plugins wrap.
    plugins: [DirectivesPlugin, RelayPlugin, FederationPlugin],
    defaultFieldNullability: false,
    // Connections only (users, history): no Node interface, no node/nodes queries.
    // PageInfo is shareable: other subgraphs of a supergraph define the same Relay type.
    relay: {
      clientMutationId: 'omit',
      cursorType: 'String',
      nodeQueryOptions: false,
      nodesQueryOptions: false,
      pageInfoTypeOptions: { shareable: true },
    },
  });
}

export type Builder = ReturnType<typeof createBuilder>;
