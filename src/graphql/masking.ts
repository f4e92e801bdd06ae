// What a GraphQL answer may say about a failure (docs/graphql.md, Errors): an AppError with its
// extensions, graphql-js's own errors (syntax, validation, variables) classified as
// INVALID_ARGUMENT, anything else masked ("Unexpected error.", INTERNAL) and logged with the
// request id once the answer is processed.
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { asAppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { classifyGraphQLError, maskedInternal, toGraphQLError } from './errors.ts';
import { stateOf } from './request-state.ts';

/** Masked INTERNAL errors waiting for their request id, with what was thrown. */
const unexpected = new WeakMap<GraphQLError, unknown>();
const PENDING_REQUEST_ID = 'pending';

/** yoga's maskedErrors.maskError. */
export function maskError(error: unknown): GraphQLError {
  const located = error instanceof GraphQLError ? error : undefined;
  const cause: unknown = located?.originalError ?? error;
  if (cause instanceof GraphQLError && cause.extensions?.grpcCode !== undefined) {
    return new GraphQLError(cause.message, {
      nodes: located?.nodes,
      positions: located?.positions,
      path: located?.path,
      extensions: cause.extensions,
    });
  }
  const known = asAppError(cause);
  if (known) return toGraphQLError(known, located);
  if (located && !located.originalError) return classifyGraphQLError(located);
  // Variable coercion (firstName: 42, isVerified: "yes", a missing field, bad Base64):
  // graphql-js wraps its own GraphQLError, before execution, so there is no path.
  if (located && !located.path && cause instanceof GraphQLError) return classifyGraphQLError(located);
  // Logged with its request id once the answer is processed (useErrorClassification).
  const masked = maskedInternal(PENDING_REQUEST_ID, located);
  unexpected.set(masked, cause);
  return masked;
}

/**
 * Syntax, validation and variable errors of graphql-js get the INVALID_ARGUMENT
 * extensions too; masked INTERNAL errors get the request id and are logged with it.
 */
export function useErrorClassification(logger: Logger): Plugin {
  return {
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || !result || typeof result !== 'object' || !('errors' in result) || !result.errors) return;
      const errors = (result.errors as GraphQLError[]).map((e) => {
        if (unexpected.has(e)) {
          const { requestId } = stateOf(request);
          const cause = unexpected.get(e);
          logger.log('error', 'unexpected error', { requestId, error: String((cause as Error)?.stack ?? cause) });
          return maskedInternal(requestId, e);
        }
        return e instanceof GraphQLError && e.extensions?.grpcCode === undefined && !e.originalError ? classifyGraphQLError(e) : e;
      });
      setResult({ ...result, errors } as typeof result);
    },
  };
}
