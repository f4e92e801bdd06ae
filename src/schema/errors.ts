// AppError → GraphQLError with the extensions of DESIGN.md section 7; anything
// unexpected is masked and logged with the request id.
import { GraphQLError } from 'graphql';
import type { ZodError } from 'zod';
import { CodeStoreUnavailableError } from '../codes/codes.ts';
import { AppError, errorCodes, invalidArgument, unavailable, type ErrorCode } from '../errors.ts';
import { StoreUnavailableError } from '../store/port.ts';

export function extensionsOf(code: ErrorCode, details: unknown[] = []) {
  const { grpcCode, status } = errorCodes[code];
  return { code, grpcCode, details, http: { status } };
}

export function toGraphQLError(err: AppError, source?: GraphQLError): GraphQLError {
  return new GraphQLError(err.message, {
    nodes: source?.nodes,
    positions: source?.positions,
    path: source?.path,
    extensions: extensionsOf(err.code, err.details),
  });
}

/** The AppError a thrown value stands for, or null when it is unexpected. */
export function asAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (err instanceof StoreUnavailableError || err instanceof CodeStoreUnavailableError) return unavailable();
  return null;
}

export function zodToAppError(error: ZodError): AppError {
  return invalidArgument(
    error.issues.map((issue) => ({ field: issue.path.map(String).join('.') || 'input', description: issue.message })),
  );
}

/**
 * Errors graphql-js raises itself (syntax, validation, variable coercion) are
 * client mistakes: INVALID_ARGUMENT, with the text graphql-js wrote.
 */
export function classifyGraphQLError(error: GraphQLError): GraphQLError {
  if (error.extensions?.grpcCode !== undefined) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    positions: error.positions,
    path: error.path,
    extensions: extensionsOf('INVALID_ARGUMENT', [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [] }]),
  });
}

export function maskedInternal(requestId: string, source?: GraphQLError): GraphQLError {
  return new GraphQLError('Unexpected error.', {
    nodes: source?.nodes,
    positions: source?.positions,
    path: source?.path,
    extensions: { ...extensionsOf('INTERNAL'), requestId },
  });
}
