// What the upstream answered, as the error the embedded mode gives: the code (gRPC codes outside
// the error model as their nearest: DEADLINE_EXCEEDED and CANCELLED as UNAVAILABLE), the message
// without the " (ID)" ZITADEL appends, google.rpc.BadRequest's field violations renamed from the
// wire's names to the GraphQL input's paths, google.rpc.RetryInfo kept, and ZITADEL's
// zitadel.v1.ErrorDetail id kept in details.
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '@zitadel/proto/zitadel/message_pb.js';
import { AppError, BAD_REQUEST_TYPE, type ErrorCode, type ErrorDetail, type FieldViolation } from '../errors.ts';
import { BadRequestSchema, RetryInfoSchema, type BadRequest } from '../proto/error-details.ts';

/** Command field paths (after `input.`) whose wire names are not their snake_case, as the wire face names them. */
export type FieldRenames = Record<string, string>;

export const ERROR_DETAIL_TYPE = 'type.googleapis.com/zitadel.v1.ErrorDetail';
const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';

const CODES: Partial<Record<Code, ErrorCode>> = {
  [Code.InvalidArgument]: 'INVALID_ARGUMENT',
  [Code.OutOfRange]: 'INVALID_ARGUMENT',
  [Code.Unauthenticated]: 'UNAUTHENTICATED',
  [Code.PermissionDenied]: 'PERMISSION_DENIED',
  [Code.NotFound]: 'NOT_FOUND',
  [Code.AlreadyExists]: 'ALREADY_EXISTS',
  [Code.FailedPrecondition]: 'FAILED_PRECONDITION',
  [Code.Aborted]: 'FAILED_PRECONDITION',
  [Code.ResourceExhausted]: 'RESOURCE_EXHAUSTED',
  [Code.Unavailable]: 'UNAVAILABLE',
  [Code.DeadlineExceeded]: 'UNAVAILABLE',
  [Code.Canceled]: 'UNAVAILABLE',
};

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * The GraphQL input path of a wire field path: `profile.given_name` -> `input.profile.firstName`
 * (by the renames), `metadata[0].key` -> `input.metadata.0.key`, `user_id` -> `input.userId`.
 */
export function inputFieldPath(wirePath: string, renames: FieldRenames = {}): string {
  let head = '';
  let rest = wirePath;
  let best = -1;
  for (const [command, wire] of Object.entries(renames)) {
    if ((rest === wire || rest.startsWith(`${wire}.`) || rest.startsWith(`${wire}[`)) && wire.length > best) {
      best = wire.length;
      head = command;
    }
  }
  if (best >= 0) rest = rest.slice(best);
  const tail = rest
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)
    .map((segment) => (/^\d+$/.test(segment) ? segment : camel(segment)));
  return ['input', ...(head ? [head] : []), ...tail].join('.');
}

/** The AppError for what a call to the upstream threw; anything that is not a ConnectError is left as it is. */
export function fromUpstream(err: unknown, renames?: FieldRenames): unknown {
  if (!(err instanceof ConnectError)) return err;
  const code = CODES[err.code];
  const detail = err.findDetails(ErrorDetailSchema)[0];
  if (!code) {
    // UNKNOWN, UNIMPLEMENTED, INTERNAL, DATA_LOSS: the gateway's own INTERNAL (masked and logged by the face).
    return new Error(`upstream answered ${Code[err.code]}: ${err.rawMessage}${detail ? ` (${detail.id})` : ''}`);
  }
  const violations: FieldViolation[] = (err.findDetails(BadRequestSchema) as unknown as BadRequest[]).flatMap((b) =>
    b.fieldViolations.map((v) => ({ field: inputFieldPath(v.field, renames), description: v.description })),
  );
  let message = detail && err.rawMessage.endsWith(` (${detail.id})`) ? err.rawMessage.slice(0, -` (${detail.id})`.length) : err.rawMessage;
  if (violations.length > 0 && message.startsWith('Invalid input: '))
    message = `Invalid input: ${violations.map((v) => `${v.field}: ${v.description}`).join('; ')}`;
  const details: ErrorDetail[] = [];
  if (violations.length > 0) details.push({ '@type': BAD_REQUEST_TYPE, fieldViolations: violations });
  const retry = (err.findDetails(RetryInfoSchema) as { retryDelay?: { seconds: bigint } }[])[0]?.retryDelay;
  if (retry) details.push({ '@type': RETRY_INFO_TYPE, retryDelay: `${retry.seconds}s` });
  if (detail) details.push({ '@type': ERROR_DETAIL_TYPE, id: detail.id, message: detail.message });
  if (err.code === Code.DeadlineExceeded) message = 'The upstream did not answer in time, try again';
  return new AppError(code, message, details);
}
