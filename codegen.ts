// Typed documents for the server's own tests: GraphQL Code Generator's client preset over
// test/operations/*.graphql, the same preset a frontend team runs (docs/codegen.md), so the
// tests hold what a client holds: documents typed by the schema, a persisted-documents
// manifest, and a module that imports only graphql and @graphql-typed-document-node/core.
// `npm run codegen` (graphql-codegen --config codegen.ts) writes it; test/schema.contract.test.ts
// checks that test/generated/ is what this config generates.
import type { CodegenConfig } from '@graphql-codegen/cli';

export const generatedDir = 'test/generated/';

const config: CodegenConfig = {
  // The printed schema (npm run schema; the contract test keeps it equal to the code's).
  schema: 'schema.graphql',
  documents: 'test/operations/*.graphql',
  generates: {
    [generatedDir]: {
      preset: 'client',
      presetConfig: {
        // The test documents share fragments (DetailsFields, UserFields) and the tests read the
        // fragments' fields straight off the answers; masked, every such read would go through
        // useFragment and FragmentType<...>. Masking guards a component tree against reading
        // data it did not ask for, which tests do not have: frontends keep it on (docs/codegen.md).
        fragmentMasking: false,
        // sha256, the hash trusted documents are keyed by (TRUSTED_DOCUMENTS): the manifest
        // test/generated/persisted-documents.json is what test/http.trusted-documents.test.ts serves.
        persistedDocuments: { hashAlgorithm: 'sha256' },
      },
      config: {
        scalars: {
          DateTime: 'string',
          UInt64: 'string',
          Base64: 'string',
          JSONObject: 'Record<string, unknown>',
          // Federation's representations (_entities); no test document sends one, but the type is in the schema.
          _Any: 'unknown',
        },
        enumsAsTypes: true,
        // The schema's own names (AddOIDCIdentityProviderInput, AddSAMLAppDocument): the
        // preset's default pascal-casing would rename them AddOidc…, AddSamlApp….
        namingConvention: 'keep',
        // The repository's tsconfig has verbatimModuleSyntax: a type must be imported as a type.
        useTypeImports: true,
        // module NodeNext: relative imports need their extension, and the tests run the .ts files as they are.
        emitLegacyCommonJSImports: false,
        importExtension: '.ts',
      },
    },
  },
};

export default config;
