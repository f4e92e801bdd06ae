// AppError → GraphQLError with the extensions of src/errors.ts (docs/graphql.md, Errors); what
// graphql-js raises itself is classified; anything unexpected is masked with the request id.
import { GraphQLError } from 'graphql';
import { extensionsOf, type AppError } from '../errors.ts';

/**
 * HTTP's own refusal of a request (not JSON, too large or too deep, CSRF, a mutation over GET,
 * the Idempotency-Key header's conflicts): its status stands on every media type, where a
 * GraphQL request that was read answers 200 on application/json (src/graphql/http-status.ts).
 */
const refusal = (extensions: ReturnType<typeof extensionsOf>, headers?: Record<string, string>) => ({
  ...extensions,
  http: { ...extensions.http, ...(headers ? { headers } : {}), refusal: true },
});

/** A refusal of the GraphQL face's own plugins (refused bodies, JSON limits, idempotency conflicts), before any field ran. */
export const graphqlError = (err: AppError): GraphQLError =>
  new GraphQLError(err.message, { extensions: refusal(extensionsOf(err.code, err.details, err.httpStatus)) });

export function toGraphQLError(err: AppError, source?: GraphQLError): GraphQLError {
  return new GraphQLError(err.message, {
    nodes: source?.nodes,
    positions: source?.positions,
    path: source?.path,
    extensions: extensionsOf(err.code, err.details, err.httpStatus),
  });
}

/**
 * Errors graphql-js raises itself (syntax, validation, variable coercion) are
 * client mistakes: INVALID_ARGUMENT, with the text graphql-js wrote.
 */
export function classifyGraphQLError(error: GraphQLError): GraphQLError {
  if (error.extensions?.grpcCode !== undefined) return error;
  const http = error.extensions?.http as { status?: number; headers?: Record<string, string> } | undefined;
  if (http?.status === 413) {
    // yoga's body limit (maxRequestBodySize, sized in src/http/body-limit.ts): keep its 413 (docs/graphql.md, HTTP: limits); gRPC calls an oversized message RESOURCE_EXHAUSTED.
    return new GraphQLError(error.message, { extensions: refusal(extensionsOf('RESOURCE_EXHAUSTED', [], 413)) });
  }
  if (http?.status === 403) {
    // yoga's CSRF prevention: a request without application/json or the x-graphql-yoga-csrf header.
    return new GraphQLError(error.message, { extensions: refusal(extensionsOf('PERMISSION_DENIED')) });
  }
  if (http?.status === 405) {
    // A mutation over GET: the client's mistake, but HTTP's status (with Allow: POST) is kept.
    return new GraphQLError(error.message, { extensions: refusal(extensionsOf('INVALID_ARGUMENT', [], 405), http.headers) });
  }
  const problem = variableProblem(error);
  const message = problem ? describeVariable(problem) : withoutEchoedValues(error.message);
  const violations = problem
    ? [{ field: (problem.path ?? problem.variable).replace(/\[(\d+)\]/g, '.$1'), description: problem.reason }]
    : [];
  return new GraphQLError(message, {
    nodes: error.nodes,
    positions: error.positions,
    path: error.path,
    extensions: extensionsOf('INVALID_ARGUMENT', [badRequest(violations)]),
  });
}

const badRequest = (fieldViolations: { field: string; description: string }[]) => ({
  '@type': 'type.googleapis.com/google.rpc.BadRequest',
  fieldViolations,
});

/** A variable that did not coerce, as graphql-js reports it, its value left out. */
interface VariableProblem {
  variable: string;
  /** Where in the variable ('input.metadata[1].value'); none for the variable itself. */
  path?: string;
  /** Why, with the client's values left out (withoutEchoedValues). */
  reason: string;
}

/**
 * graphql-js writes 'Variable "$input" got invalid value <the value> at "input.path"; <reason>',
 * the value being the client's whole object (passwords too): read back without it. The reason
 * is the original error's message, so the value can be cut without parsing it.
 */
function variableProblem(error: GraphQLError): VariableProblem | undefined {
  const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" got invalid value /.exec(error.message)?.[1];
  const inner = error.originalError instanceof GraphQLError ? error.originalError.message : undefined;
  if (variable === undefined || inner === undefined || !error.message.endsWith(`; ${inner}`)) return undefined;
  const path = / at "([_0-9A-Za-z$.[\]]+)"$/.exec(error.message.slice(0, -(inner.length + 2)))?.[1];
  return { variable, ...(path ? { path } : {}), reason: withoutEchoedValues(inner) };
}

const describeVariable = ({ variable, path, reason }: VariableProblem) =>
  `Variable "$${variable}" got an invalid value${path ? ` at "${path}"` : ''}; ${reason}`;

/**
 * A graphql-js message with the client's values left out: a scalar's or an enum's value, an
 * object key of its own (a short name is kept), or a whole variable in a shape not read above.
 */
function withoutEchoedValues(message: string): string {
  const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" got invalid value /.exec(message)?.[1];
  if (variable !== undefined) return `Variable "$${variable}" got an invalid value.`;
  return message
    .replace(/^(.* cannot represent (?:a )?[^:]*value): [\s\S]*$/, '$1.')
    .replace(/^(Expected value of type "[^"]*"), found [\s\S]*$/, '$1.')
    .replace(
      /^Value "([\s\S]*)" does not exist in "([_A-Za-z][_0-9A-Za-z]*)" enum\.[\s\S]*$/,
      (_, value: string, type: string) => `Value ${clientName(value)}does not exist in "${type}" enum.`,
    )
    .replace(
      /^Field "([\s\S]*)" is not defined by type "([_A-Za-z][_0-9A-Za-z]*)"\.[\s\S]*$/,
      (_, key: string, type: string) => `Field ${clientName(key)}is not defined by type "${type}".`,
    )
    .replace(/^Field "([\s\S]*)" must be non-null\.$/, (_, key: string) => `Field ${clientName(key)}must be non-null.`);
}

/** A name the client sent, quoted when it is a short GraphQL name; anything else is not echoed. */
const clientName = (text: string) => (/^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(text) ? `"${text}" ` : '');

export function maskedInternal(requestId: string, source?: GraphQLError): GraphQLError {
  return new GraphQLError('Unexpected error.', {
    nodes: source?.nodes,
    positions: source?.positions,
    path: source?.path,
    extensions: { ...extensionsOf('INTERNAL'), requestId },
  });
}
