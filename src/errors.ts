// The error model (docs/graphql.md, Errors) in one place. Commands throw AppError,
// adapters UnavailableError; each transport maps them with what is here
// (GraphQL: extensionsOf; the status table carries gRPC codes and HTTP statuses).
import type { ZodError } from 'zod';

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
  /** An HTTP status other than the code's (a body over the cap: 413 with RESOURCE_EXHAUSTED). */
  readonly httpStatus?: number;

  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = [], httpStatus?: number) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    if (httpStatus !== undefined) this.httpStatus = httpStatus;
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
export const unavailable = (message = 'A backing service is unavailable, try again') => new AppError('UNAVAILABLE', message);

/** A backing server (MongoDB, Redis, the embedded store's disk) cannot be reached: every adapter throws this. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
}

/**
 * A read would hold more state than its budget (`maxBytes`): thrown by a store's loadMany and
 * searchUsers before they read past it. `fitted`: how many of a search's rows, in its order,
 * fit (a loadMany's order is the store's own: its callers do not use it).
 */
export class ReadLimitError extends Error {
  override name = 'ReadLimitError';
  readonly maxBytes: number;
  readonly fitted: number;
  constructor(maxBytes: number, fitted: number) {
    super(`the read would hold more than ${maxBytes} bytes of state`);
    this.maxBytes = maxBytes;
    this.fitted = fitted;
  }
}

export const readTooLarge = (maxBytes: number) =>
  new AppError(
    'RESOURCE_EXHAUSTED',
    `This request would read more than ${Math.round(maxBytes / 1048576)} MB of stored state at once (users can carry large metadata): ask for fewer in one request.`,
  );

/** The AppError a thrown value stands for, or null when it is unexpected. */
export function asAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (err instanceof UnavailableError) return unavailable();
  if (err instanceof ReadLimitError) return readTooLarge(err.maxBytes);
  return null;
}

/** Failed input rules: every violated field, its path under `root` (the transport renames paths as it needs). */
export function zodToAppError(error: ZodError, root = 'input'): AppError {
  return invalidArgument(error.issues.map((issue) => ({ field: [root, ...issue.path.map(String)].join('.'), description: issue.message })));
}

/** The GraphQL error extensions of a code (docs/graphql.md, Errors). */
export function extensionsOf(code: ErrorCode, details: unknown[] = [], httpStatus?: number) {
  const { grpcCode, status } = errorCodes[code];
  return { code, grpcCode, details, http: { status: httpStatus ?? status } };
}
