// Prints the schema built from code, sorted, to schema.graphql, and the federation
// subgraph SDL (what `{ _service { sdl } }` answers) to subgraph.graphql (`npm run schema`).
import { writeFile } from 'node:fs/promises';
import { loadConfig } from '../src/config.ts';
import { buildSchema, printSortedSchema, printSubgraphSdl } from '../src/schema/index.ts';

export const schemaPath = 'schema.graphql';
export const subgraphPath = 'subgraph.graphql';
export const printSchemaFromCode = () => printSortedSchema(buildSchema(loadConfig({}))) + '\n';
export const printSubgraphFromCode = () => printSubgraphSdl(buildSchema(loadConfig({}))) + '\n';

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(schemaPath, printSchemaFromCode());
  await writeFile(subgraphPath, printSubgraphFromCode());
  console.log(`wrote ${schemaPath} and ${subgraphPath}`);
}
