import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import ZodPlugin from '@pothos/plugin-zod';
import type { CommandContext } from '../commands/context.ts';
import type { UserInputRules } from '../commands/user-inputs.ts';
import { toGraphQLError, zodToAppError } from './errors.ts';

export interface GraphQLContext {
  cmd: CommandContext;
  requestId: string;
}

export type Scalars = {
  DateTime: { Input: Date; Output: Date };
  UInt64: { Input: string; Output: number | bigint | string };
  Base64: { Input: string; Output: string };
  JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
};

export function createBuilder() {
  return new SchemaBuilder<{ Context: GraphQLContext; Scalars: Scalars; DefaultFieldNullability: false; DefaultInputFieldRequiredness: false }>({
    // Federation last: it must see the resolvers the other plugins wrap.
    plugins: [DirectivesPlugin, ZodPlugin, FederationPlugin],
    defaultFieldNullability: false,
    zod: {
      validationError: (error) => toGraphQLError(zodToAppError(error)),
    },
  });
}

export type Builder = ReturnType<typeof createBuilder>;
export type Rules = UserInputRules;
