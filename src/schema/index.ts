// The whole GraphQL schema, built from code.
import { executeSync, lexicographicSortSchema, parse, printSchema, type GraphQLSchema } from 'graphql';
import type { Config } from '../config.ts';
import { createBuilder } from './builder.ts';
import { guardEntities } from './entities.ts';
import { addCommon } from './common.ts';
import { addHistory } from './history.ts';
import { addIdps } from './idps.ts';
import { addOrgs } from './orgs.ts';
import { addProjects } from './projects.ts';
import { addResend } from './resend.ts';
import { addScalars } from './scalars.ts';
import { addU2F } from './u2f.ts';
import { addUsers } from './users.ts';
import { addUserSearch } from './user-search.ts';

export function buildSchema(config: Config): GraphQLSchema {
  const builder = createBuilder();
  addScalars(builder);
  const common = addCommon(builder);
  addUsers(builder, common);
  addOrgs(builder, common);
  addProjects(builder, common);
  addU2F(builder, common);
  addIdps(builder, common);
  addResend(builder, common);
  addHistory(builder);
  addUserSearch(builder);
  // An Apollo Federation 2 subgraph: `_service { sdl }`, `_entities` and the @key entities (schema/entities.ts).
  return guardEntities(builder.toSubGraphSchema({ sortSchema: true, linkUrl: FEDERATION_LINK }));
}

export const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.6';

export const printSortedSchema = (schema: GraphQLSchema) => printSchema(lexicographicSortSchema(schema));

/** The subgraph SDL with its federation directives: what `{ _service { sdl } }` answers. */
export function printSubgraphSdl(schema: GraphQLSchema): string {
  const result = executeSync({ schema, document: parse('{ _service { sdl } }') });
  const sdl = (result.data as { _service?: { sdl?: string } } | null)?._service?.sdl;
  if (result.errors?.length || !sdl) throw new Error(`_service { sdl } failed: ${result.errors?.map(String).join('; ')}`);
  return sdl;
}
