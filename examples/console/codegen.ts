// GraphQL Code Generator for the console: `npx graphql-codegen --config examples/console/codegen.ts`
// (from the repository root or from here). Paths are taken from this file's folder so the
// command works from either place and the test can run it in memory.
import { fileURLToPath } from 'node:url';
import type { CodegenConfig } from '@graphql-codegen/cli';

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

const config: CodegenConfig = {
  // The gateway's printed schema (npm run schema at the repository root rewrites it).
  schema: here('../../schema.graphql'),
  documents: [here('src/**/*.ts'), `!${here('src/gql/**')}`],
  ignoreNoDocuments: false,
  generates: {
    [here('src/gql/')]: {
      preset: 'client',
      presetConfig: {
        // Components read a fragment's fields only through getFragmentData, so a page can't
        // depend on fields that another page's query happened to select.
        fragmentMasking: { unmaskFunctionName: 'getFragmentData' },
        // Hashes for the gateway's trusted documents; src/client.ts can send the hash alone.
        persistedDocuments: { hashAlgorithm: 'sha256' },
      },
      config: {
        // Documents as strings: fetch sends the text as it is, no graphql runtime in the bundle.
        documentMode: 'string',
        enumsAsTypes: true,
        useTypeImports: true,
        scalars: {
          DateTime: 'string',
          UInt64: 'string',
          Base64: 'string',
          JSONObject: 'Record<string, unknown>',
          _Any: 'unknown',
        },
      },
    },
  },
};

export default config;
