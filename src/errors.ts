// The error model (DESIGN.md section 7) in one place. Commands throw AppError;
// the GraphQL layer turns it into a GraphQLError with these extensions.

export const errorCodes = {
  INVALID_ARGUMENT: { grpcCode: 3, status: 400 },
  UNAUTHENTICATED: { grpcCode: 16, status: 401 },
  PERMISSION_DENIED: { grpcCode: 7, status: 403 },
  NOT_FOUND: { grpcCode: 5, status: 404 },
  ALREADY_EXISTS: { grpcCode: 6, status: 409 },
  FAILED_PRECONDITION: { grpcCode: 9, status: 409 },
  RESOURCE_EXHAUSTED: { grpcCode: 8, status: 429 },
  UNAVAILABLE: { grpcCode: 14, status: 503 },
  INTERNAL: { grpcCode: 13, status: 500 },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export interface FieldViolation {
  field: string;
  description: string;
}

export type ErrorDetail = { '@type': string } & Record<string, unknown>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

export function invalidArgument(violations: FieldViolation[], message?: string): AppError {
  const summary = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new AppError('INVALID_ARGUMENT', message ?? `Invalid input: ${summary}`, [
    { '@type': BAD_REQUEST_TYPE, fieldViolations: violations },
  ]);
}

export const invalid = (field: string, description: string) => invalidArgument([{ field, description }]);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const alreadyExists = (what: string) => new AppError('ALREADY_EXISTS', `${what} already exists`);
export const failedPrecondition = (message: string) => new AppError('FAILED_PRECONDITION', message);
export const permissionDenied = (message = 'Permission denied') => new AppError('PERMISSION_DENIED', message);
export const unauthenticated = (message = 'Authentication required') => new AppError('UNAUTHENTICATED', message);
export const unavailable = (message = 'A backing service is unavailable, try again') =>
  new AppError('UNAVAILABLE', message);
