// Trusted documents (TRUSTED_DOCUMENTS): the GraphQL face runs only the documents of the
// manifest, named by their sha256, with yoga's persisted-operations plugin. The id is read
// where the clients put it: `documentId` (GraphQL over HTTP's persisted documents, as the
// client preset's documents carry it: "sha256:<hex>"; in a GET's query string too) or Apollo's
// `extensions.persistedQuery.sha256Hash` (as urql's persisted exchange sends it too).
//
// The plugin's refusals carry the gateway's error extensions (docs/graphql.md, Errors) and keep the
// plugin's names as their messages, which Apollo's and urql's links look for:
//   an unknown id         NOT_FOUND         "PersistedQueryNotFound"  (404: nothing ran)
//   a raw `query`         INVALID_ARGUMENT  "PersistedQueryOnly: …"   (400)
//   neither query nor id  INVALID_ARGUMENT  "PersistedQueryKeyNotFound: …" (400)
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { documentHash, type TrustedDocuments } from '../config-trusted-documents.ts';
import { AppError } from '../errors.ts';
import { graphqlError } from './errors.ts';

/** The id a client named its document by, as it sent it (checked against the manifest later). */
function documentIdOf(params: GraphQLParams & { documentId?: unknown }, request: Request): string | null {
  if (typeof params.documentId === 'string') return params.documentId;
  const persisted = (params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery;
  if (typeof persisted?.sha256Hash === 'string') return persisted.sha256Hash;
  // yoga's GET parser keeps only query, variables, operationName and extensions.
  if (request.method === 'GET') return new URL(request.url).searchParams.get('documentId');
  return null;
}

export function useTrustedDocuments(documents: TrustedDocuments): Plugin {
  const refusal = (code: 'NOT_FOUND' | 'INVALID_ARGUMENT', message: string) => () => graphqlError(new AppError(code, message));
  return usePersistedOperations({
    allowArbitraryOperations: false,
    extractPersistedOperationId: documentIdOf,
    getPersistedOperation: (id) => documents.get(documentHash(id) ?? '') ?? null,
    customErrors: {
      notFound: refusal('NOT_FOUND', 'PersistedQueryNotFound'),
      persistedQueryOnly: refusal(
        'INVALID_ARGUMENT',
        'PersistedQueryOnly: this gateway runs trusted documents only; send the document\'s "documentId" instead of its "query"',
      ),
      keyNotFound: refusal('INVALID_ARGUMENT', 'PersistedQueryKeyNotFound: send a trusted document\'s "documentId"'),
    },
  }) as Plugin;
}
