// AppError → GraphQLError with the extensions of src/errors.ts; what graphql-js
// raises itself is classified; anything unexpected is masked with the request id.
import { GraphQLError } from 'graphql';
import { extensionsOf, type AppError } from '../errors.ts';

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
  if ((error.extensions?.http as { status?: number } | undefined)?.status === 413) {
    // yoga's body limit (maxRequestBodySize, sized in src/http/body-limit.ts): keep its 413 (DESIGN.md section 8); gRPC calls an oversized message RESOURCE_EXHAUSTED.
    return new GraphQLError(error.message, { extensions: { ...extensionsOf('RESOURCE_EXHAUSTED'), http: { status: 413 } } });
  }
  const http = error.extensions?.http as { status?: number; headers?: Record<string, string> } | undefined;
  if (http?.status === 403) {
    // yoga's CSRF prevention: a request without application/json or the x-graphql-yoga-csrf header.
    return new GraphQLError(error.message, { extensions: extensionsOf('PERMISSION_DENIED') });
  }
  if (http?.status === 405) {
    // A mutation over GET: the client's mistake, but HTTP's status (with Allow: POST) is kept.
    return new GraphQLError(error.message, { extensions: { ...extensionsOf('INVALID_ARGUMENT'), http } });
  }
  const message = withoutEchoedValues(error);
  const field = variablePath(error);
  const description = message.slice(message.indexOf('; ') + 2);
  return new GraphQLError(message, {
    nodes: error.nodes,
    positions: error.positions,
    path: error.path,
    extensions: extensionsOf('INVALID_ARGUMENT', [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: field ? [{ field, description }] : [] }]),
  });
}

const NAME = '[_A-Za-z][_0-9A-Za-z]*';
const TYPE = '[_A-Za-z][_0-9A-Za-z!\\[\\]]*';
/**
 * The reasons graphql-jit gives after the value that end its message with names only. The
 * others ("Expected type Int; Int cannot represent …: <value>") end with the value itself,
 * where a client's text could imitate any shape: they are dropped.
 */
const JIT_REASONS = [
  new RegExp(`; (Field "${NAME}" is not defined by type ${NAME}\\.)$`),
  new RegExp(`; (Field value(?:\\.${NAME}|\\[\\d+\\])* of required type ${TYPE} was not provided\\.)$`),
];

/**
 * graphql-js writes the offending value into its messages, for a variable the
 * whole object ('Variable "$input" got invalid value { password: "…" }; Field
 * "userId" … was not provided.'), which would echo secrets back. Keep the
 * variable, the path and the reason; drop the values.
 */
export function withoutEchoedValues(error: GraphQLError): string {
  const dropValue = (reason: string) =>
    reason
      .replace(/^(.* cannot represent (?:a )?[^:]*value): [\s\S]*$/, '$1.')
      .replace(/^(Expected value of type "[^"]*"), found [\s\S]*$/, '$1.')
      // The client's own enum value or object key: kept when it is a short name, else left out.
      .replace(/^Value "([\s\S]*)" does not exist in "([_A-Za-z][_0-9A-Za-z]*)" enum\.[\s\S]*$/, (_, value: string, type: string) => `Value ${clientName(value)}does not exist in "${type}" enum.`)
      .replace(/^Field "([\s\S]*)" is not defined by type "([_A-Za-z][_0-9A-Za-z]*)"\.[\s\S]*$/, (_, key: string, type: string) => `Field ${clientName(key)}is not defined by type "${type}".`)
      .replace(/^Field "([\s\S]*)" must be non-null\.$/, (_, key: string) => `Field ${clientName(key)}must be non-null.`);
  const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)" got invalid value /.exec(error.message);
  const inner = error.originalError instanceof GraphQLError ? error.originalError.message : undefined;
  if (!variable) return dropValue(error.message);
  if (inner === undefined || !error.message.endsWith(`; ${inner}`)) {
    // graphql-jit's messages carry no original error: their reason is read from the end, in
    // shapes made of names only (a value may imitate one, but the real reason comes last).
    const reason = JIT_REASONS.map((shape) => shape.exec(error.message)?.[1]).find((r) => r !== undefined);
    return `Variable "$${variable[1]}" got an invalid value${reason ? `; ${reason}` : '.'}`;
  }
  const prefix = error.message.slice(0, -(inner.length + 2));
  const at = / at "[_0-9A-Za-z$.[\]]+"$/.exec(prefix)?.[0] ?? '';
  return `Variable "$${variable[1]}" got an invalid value${at}; ${dropValue(inner)}`;
}

/** A name the client sent, quoted when it is a short GraphQL name; anything else is not echoed. */
const clientName = (text: string) => (/^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(text) ? `"${text}" ` : '');

/** The variable path of a graphql-js coercion error ('input.metadata.0.value'), for its field violation. */
export function variablePath(error: GraphQLError): string | undefined {
  const inner = error.originalError instanceof GraphQLError ? error.originalError.message : undefined;
  if (inner === undefined || !error.message.endsWith(`; ${inner}`) || !error.message.startsWith('Variable "$')) return undefined;
  const prefix = error.message.slice(0, -(inner.length + 2));
  const at = / at "([_0-9A-Za-z$.[\]]+)"$/.exec(prefix)?.[1] ?? /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)"/.exec(prefix)?.[1];
  return at?.replace(/\[(\d+)\]/g, '.$1');
}

export function maskedInternal(requestId: string, source?: GraphQLError): GraphQLError {
  return new GraphQLError('Unexpected error.', {
    nodes: source?.nodes,
    positions: source?.positions,
    path: source?.path,
    extensions: { ...extensionsOf('INTERNAL'), requestId },
  });
}
