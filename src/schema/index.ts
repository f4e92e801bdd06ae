// The whole GraphQL schema, built from code.
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import type { Config } from '../config.ts';
import { userInputRules } from '../commands/user-inputs.ts';
import { createBuilder } from './builder.ts';
import { addCommon } from './common.ts';
import { addIdps } from './idps.ts';
import { addOrgs } from './orgs.ts';
import { addProjects } from './projects.ts';
import { addResend } from './resend.ts';
import { projectInputRules } from '../commands/project-inputs.ts';
import { addScalars } from './scalars.ts';
import { addU2F } from './u2f.ts';
import { addUsers } from './users.ts';

export function buildSchema(config: Config): GraphQLSchema {
  const builder = createBuilder();
  addScalars(builder);
  const common = addCommon(builder);
  addUsers(builder, common, userInputRules(config));
  addOrgs(builder, common);
  addProjects(builder, common, projectInputRules(config));
  addU2F(builder, common, config);
  addIdps(builder, common);
  addResend(builder, common);
  return builder.toSchema({ sortSchema: true });
}

export const printSortedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));
