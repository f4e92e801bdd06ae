// The whole GraphQL schema, built from code.
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import type { Config } from '../config.ts';
import { userInputRules } from '../commands/user-inputs.ts';
import { createBuilder } from './builder.ts';
import { addCommon } from './common.ts';
import { addOrgs } from './orgs.ts';
import { addScalars } from './scalars.ts';
import { addUsers } from './users.ts';

export function buildSchema(config: Config): GraphQLSchema {
  const builder = createBuilder();
  addScalars(builder);
  const common = addCommon(builder);
  addUsers(builder, common, userInputRules(config));
  addOrgs(builder, common);
  return builder.toSchema({ sortSchema: true });
}

export const printSortedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
