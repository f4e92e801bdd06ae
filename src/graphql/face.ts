// The GraphQL face: graphql-yoga over the schema (src/schema), with its plugins — GraphiQL,
// error classification and masking, GraphQL over HTTP's statuses, the introspection switch, CSRF,
// the one content type, armor, the request's cost, the JSON limits as GraphQL applies them, the
// edge's body meter, trusted documents, Idempotency-Key, request facts, variable coercion and
// graphql-jit — and the Face the edge hands GraphQL's requests to (src/http/face.ts).
import { useGraphQlJit } from '@envelop/graphql-jit';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { TokenVerifier } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import { extensionsOf, type AppError } from '../errors.ts';
import { authenticate, callerOf } from '../http/authentication.ts';
import type { Face } from '../http/face.ts';
import { sendJson } from '../http/health.ts';
import type { Idempotency } from '../http/idempotency-core.ts';
import type { Logger } from '../log.ts';
import type { FaceOperations } from '../operations.ts';
import { useArmor } from './armor.ts';
import { useBodyMeter } from './body-meter.ts';
import { useJsonRequests } from './content-type.ts';
import type { GraphQLContext } from './context.ts';
import { corsOptions } from './cors.ts';
import { useRequestCost } from './cost.ts';
import { classifyGraphQLError } from './errors.ts';
import { introspectionSwitch, useGraphiQLPage } from './graphiql.ts';
import { useGraphQLOverHttp } from './http-status.ts';
import { useIdempotency } from './idempotency.ts';
import { useJsonContainerLimit } from './json-containers.ts';
import { useJsonDepthLimit } from './json-depth.ts';
import { maskError, useErrorClassification } from './masking.ts';
import { useRequestFacts } from './request-facts.ts';
import { isSeveralMutations } from './several-mutations.ts';
import { useTrustedDocuments } from './trusted-documents.ts';
import { stateOf, useRequestState, type EdgeContext } from './request-state.ts';
import { useVariableCoercion } from './variable-coercion.ts';

export interface GraphQLFaceOptions {
  config: Config;
  logger: Logger;
  schema: GraphQLSchema;
  tokens: TokenVerifier;
  /** The edge's Idempotency-Key core, shared with the wire API. */
  idempotency: Idempotency;
  /** What serves the operations the resolvers call, with the factory of each request's context for them. */
  operations: FaceOperations;
  /** The user the quick start's GraphiQL token is for (src/graphql/graphiql.ts). */
  instanceAdminId(): Promise<string | null>;
}

export type GraphQLYoga = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

/** The edge's refusal (rate limit, body caps, admission) as GraphQL answers errors: `{ errors: [{ message, extensions }] }` with its HTTP status. */
export function writeGraphQLRefusal(res: Parameters<typeof sendJson>[0], error: AppError, headers: Record<string, string>): void {
  const { http, ...extensions } = extensionsOf(error.code, error.details, error.httpStatus);
  sendJson(res, http.status, { errors: [{ message: error.message, extensions: { ...extensions, httpStatus: http.status } }] }, headers);
}

/** The hardening and bookkeeping every GraphQL request goes through, in this order. */
function edgePlugins(config: Config, idempotency: Idempotency): Plugin[] {
  return [
    useRequestState(),
    // Every request is application/json (preflighted by browsers) or carries x-graphql-yoga-csrf;
    // a form or text/plain POST and a plain GET from another site are refused (403).
    useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf'] }),
    // Then the one body format: application/graphql and other preflighted types get 415.
    useJsonRequests(),
    useArmor({ blockFieldSuggestions: !config.introspection }),
    useJsonContainerLimit(),
    useBodyMeter(),
    useJsonDepthLimit(),
    // Before useIdempotency: a document sent by its id has no query until this plugin sets the
    // manifest's text, and the idempotency plugin reads the query to tell a mutation.
    ...(config.trustedDocuments ? [useTrustedDocuments(config.trustedDocuments)] : []),
    useIdempotency(idempotency),
    useRequestFacts(),
  ];
}

export function createGraphQLFace(options: GraphQLFaceOptions): { yoga: GraphQLYoga; face: Face } {
  const { config, logger, tokens } = options;
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Served by useGraphiQLPage (below): compressed, cached, and the quick start's token only where it belongs.
    graphiql: false,
    logging: false,
    // CORS as the edge's rule says; the body cap is the edge's (src/http/admission.ts: from Content-Length, or
    // metered as the body arrives): yoga's own limit would pipe every body through one more web stream, which
    // costs a DOMException a request.
    cors: corsOptions(config.http.corsOrigins),
    maxRequestBodySize: false,
    batching: false,
    maskedErrors: { maskError },
    context: async ({ request }): Promise<GraphQLContext> => {
      // The token was checked at the edge (src/http/admission.ts), before the rate limit: here a no-op then.
      const state = stateOf(request);
      await authenticate(state, request.headers.get('authorization'), tokens);
      // x-service-orgid or x-zitadel-orgid, read as every face reads them (two different ones: INVALID_ARGUMENT).
      const { operations } = options;
      return { cmd: operations.requestContext(request.headers, callerOf(state)), ops: operations.ops, requestId: state.requestId };
    },
    plugins: [
      useGraphiQLPage(config, options.instanceAdminId),
      useErrorClassification(logger),
      useGraphQLOverHttp(),
      introspectionSwitch(config),
      ...edgePlugins(config, options.idempotency),
      useVariableCoercion(classifyGraphQLError),
      // After the variables are known to be valid: the cost is counted with their page sizes.
      useRequestCost(),
      useGraphQlJit({}, { enableIf: (args) => !isSeveralMutations(args) }),
    ],
  });
  const face: Face = {
    handler: (req, res, state) => void yoga(req as never, res as never, { requestState: state } satisfies EdgeContext),
    protocolOf: () => 'graphql',
    refuse: (_req, res, _path, error, headers) => writeGraphQLRefusal(res as Parameters<typeof sendJson>[0], error, headers),
  };
  return { yoga, face };
}
