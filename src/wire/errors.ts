// AppError to a gRPC status (docs/graphql.md, Errors): the code from errorCodes, field
// violations as google.rpc.BadRequest in the wire's field names, and ZITADEL's
// zitadel.v1.ErrorDetail{id, message} with a stable id per error site. Anything
// else is masked as INTERNAL "Unexpected error." and logged; no stack reaches a client.
import { createHash } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { AppError, asAppError, BAD_REQUEST_TYPE, errorCodes, type ErrorCode, type FieldViolation } from '../errors.ts';
import type { Logger } from '../log.ts';
import { BadRequestSchema, RetryInfoSchema } from '../proto/error-details.ts';

/** Renames of command field paths (after `input.`) that are not simply snake_case, e.g. `profile.firstName` -> `profile.given_name`. */
export type FieldRenames = Record<string, string>;

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The wire name of a command field path: `input.profile.firstName` -> `profile.first_name`,
 * `input.metadata.0.key` -> `metadata[0].key`; the longest matching rename prefix first.
 */
export function wireFieldPath(path: string, renames: FieldRenames = {}): string {
  let rest = path.startsWith('input.') ? path.slice('input.'.length) : path === 'input' ? '' : path;
  let head = '';
  const parts = rest.split('.');
  for (let n = parts.length; n > 0; n--) {
    const prefix = parts.slice(0, n).join('.');
    if (renames[prefix] !== undefined) {
      head = renames[prefix]!;
      rest = parts.slice(n).join('.');
      break;
    }
  }
  const tail = rest === '' ? [] : rest.split('.');
  let out = head;
  for (const segment of tail) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += (out ? '.' : '') + snake(segment);
  }
  return out;
}

const GRPC_CODES: Record<number, Code> = Object.fromEntries(
  Object.values(Code)
    .filter((v) => typeof v === 'number')
    .map((v) => [v, v as Code]),
);

/**
 * A stable id per error site: the code and a short hash of the message with its
 * variable parts (quoted text, numbers, ids) taken out, e.g. `NOT_FOUND-3kq9z`.
 */
export function errorId(error: AppError): string {
  const template = error.message.replace(/"[^"]*"/g, '"#"').replace(/\b[\w.@-]*\d[\w.@-]*\b/g, '#');
  const hash = createHash('sha256').update(`${error.code}:${template}`).digest().readUInt32BE(0).toString(36).padStart(7, '0').slice(0, 7);
  return `${error.code}-${hash}`;
}

function fieldViolations(error: AppError): FieldViolation[] {
  return error.details
    .filter((d) => d['@type'] === BAD_REQUEST_TYPE)
    .flatMap((d) => (Array.isArray(d.fieldViolations) ? (d.fieldViolations as FieldViolation[]) : []));
}

/** The ConnectError for what a wire method threw. */
export function toConnectError(
  err: unknown,
  logger: Logger,
  where: { method: string; renames?: FieldRenames; requestId?: string },
): ConnectError {
  if (err instanceof ConnectError) return err;
  const known = asAppError(err);
  if (!known) {
    logger.log('error', 'unexpected error', {
      requestId: where.requestId ?? null,
      method: where.method,
      error: String((err as Error)?.stack ?? err),
    });
    return new ConnectError('Unexpected error.', Code.Internal, undefined, [
      { desc: ErrorDetailSchema, value: { id: 'INTERNAL', message: 'Unexpected error. (INTERNAL)' } },
    ]);
  }
  const violations = fieldViolations(known).map((v) => ({ field: wireFieldPath(v.field, where.renames), description: v.description }));
  // The summary of invalidArgument() names the fields: in the wire's names here.
  const text =
    violations.length > 0 && known.message.startsWith('Invalid input: ')
      ? `Invalid input: ${violations.map((v) => `${v.field}: ${v.description}`).join('; ')}`
      : known.message;
  const id = errorId(new AppError(known.code, text));
  const message = `${text} (${id})`;
  const details: ConstructorParameters<typeof ConnectError>[3] = [{ desc: ErrorDetailSchema, value: { id, message } }];
  if (violations.length > 0) details.push({ desc: BadRequestSchema, value: { fieldViolations: violations } as never });
  const retry = retryDelaySeconds(known);
  if (retry !== undefined) details.push({ desc: RetryInfoSchema, value: { retryDelay: { seconds: BigInt(retry), nanos: 0 } } as never });
  return new ConnectError(message, GRPC_CODES[errorCodes[known.code].grpcCode] ?? Code.Internal, undefined, details);
}

const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

/** Whole seconds of a google.rpc.RetryInfo detail (`{ retryDelay: "2s" }`), if the error has one. */
function retryDelaySeconds(error: AppError): number | undefined {
  const delay = error.details.find((d) => d['@type'] === RETRY_INFO_TYPE)?.retryDelay;
  const seconds = typeof delay === 'string' ? /^(\d+)s$/.exec(delay)?.[1] : undefined;
  return seconds === undefined ? undefined : Number(seconds);
}

const CODE_NAMES = new Map<number, ErrorCode>(Object.entries(errorCodes).map(([name, { grpcCode }]) => [grpcCode, name as ErrorCode]));

/** The error model's name of a ConnectError's code (INVALID_ARGUMENT, ...), for logs and metrics. */
export const codeName = (error: ConnectError): string => CODE_NAMES.get(error.code) ?? Code[error.code]?.toUpperCase() ?? 'UNKNOWN';
