// One structured log line per request (GraphQL or the wire API), when its answer has gone out:
//   {"level":"info","msg":"request","requestId":…,"protocol":…,"operationName":…,"operationType":…,
//    "rootField":…,"caller":…,"ip":…,"status":…,"durationMs":…,"errors":["NOT_FOUND"]}
// Never the query's variables, headers or answer: those carry passwords, tokens and codes.
// The faces fill in what they know of the request (operation, root field, error codes: for
// GraphQL src/graphql/request-facts.ts, for the wire API src/wire/context.ts).
import type { Logger } from '../log.ts';
import type { RequestState } from './request-state.ts';

export function logRequest(logger: Logger, state: RequestState, fields: { method: string; path: string; status: number }): void {
  const durationMs = Math.round(Number(process.hrtime.bigint() - state.startedAt) / 1e4) / 100;
  logger.log(fields.status >= 500 ? 'error' : 'info', 'request', {
    requestId: state.requestId,
    method: fields.method,
    path: fields.path,
    protocol: state.protocol,
    operationName: state.operationName ?? null,
    operationType: state.operationType ?? null,
    rootField: state.rootField ?? null,
    caller: state.caller,
    ip: state.ip,
    status: fields.status,
    durationMs,
    ...(state.errorCodes.length ? { errors: [...new Set(state.errorCodes)] } : {}),
  });
}
