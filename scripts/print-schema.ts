// Prints the schema built from code, sorted, to schema.graphql (`npm run schema`).
import { writeFile } from 'node:fs/promises';
import { loadConfig } from '../src/config.ts';
import { buildSchema, printSortedSchema } from '../src/schema/index.ts';

export const schemaPath = 'schema.graphql';
export const printSchemaFromCode = () => printSortedSchema(buildSchema(loadConfig({}))) + '\n';

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(schemaPath, printSchemaFromCode());
  console.log(`wrote ${schemaPath}`);
}
