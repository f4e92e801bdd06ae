// GraphQL over HTTP as GraphQL clients read it. yoga would answer a failed field with the
// error's HTTP status (a duplicate username: 409), which Apollo Client and urql turn into a
// network error that hides the GraphQL errors; and it leaves `extensions.http` out of the body.
// Here, for the regular (non-streamed) answers:
// - a request that was executed answers 200, with its errors in the body: on application/json
//   as the spec recommends, and on application/graphql-response+json as it requires when there
//   is `data` — except a request of a caller without a valid token (every error UNAUTHENTICATED,
//   no data), which is 401 there, as a request that did not execute;
// - a well-formed request (its document was read: it reached the parser) that did not execute
//   (unparsable, invalid: validation, armor's limits, variables) answers 200 on
//   application/json and its error's 4xx on application/graphql-response+json;
// - a request that is not well-formed (a body that is not JSON, no query string) and HTTP's
//   own refusals (`http.refusal`, src/graphql/errors.ts: a body too large or too deep, CSRF, a
//   mutation over GET, the Idempotency-Key header's conflicts) keep their status on both.
// Every error's extensions show `httpStatus`: the status the REST face gives the same failure.
// Not `http.status`: yoga, and so the Hive gateway in front of this subgraph, reads an error's
// `extensions.http` as the status of its own answer, and would turn a subgraph's 409 back into
// the non-2xx answer this file exists to avoid.
import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, processRegularResult, type Plugin } from 'graphql-yoga';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const JSON_MEDIA = 'application/json';
const REGULAR = [GRAPHQL_RESPONSE, JSON_MEDIA];

/** What the face's errors carry under extensions.http (src/errors.ts extensionsOf, src/graphql/errors.ts). */
interface HttpExtension {
  status?: number;
  headers?: Record<string, string>;
  /** HTTP's own refusal: its status stands on every media type. */
  refusal?: boolean;
}

const httpOf = (error: GraphQLError): HttpExtension | undefined => error.extensions?.http as HttpExtension | undefined;

/**
 * The media type of a regular answer as yoga negotiates it: the first entry of Accept (UTF-8
 * only) that one of the two serves, application/json for a wildcard or no Accept at all.
 */
export function regularMediaType(accept: string | null): string | undefined {
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    const charset = params.find((p) => p.startsWith('charset='));
    if (charset && charset !== 'charset=utf-8') continue;
    const [pre, suf] = type.split('/');
    const served = REGULAR.filter((m) => {
      const [mPre, mSuf] = m.split('/');
      return (pre === '*' || pre === mPre) && (suf === '*' || suf === mSuf);
    });
    if (served.length) return served.at(-1);
  }
  return undefined;
}

/** The answer's HTTP status by the rules above; `wellFormed`: the request's document reached the parser. */
export function statusOf(result: ExecutionResult, mediaType: string, wellFormed: boolean): number {
  const errors = (result.errors ?? []) as readonly GraphQLError[];
  if (!errors.length) return 200;
  const statusOfError = (e: GraphQLError) => httpOf(e)?.status ?? 500;
  const refusals = errors.filter((e) => httpOf(e)?.refusal || !wellFormed);
  if (refusals.length) return Math.max(...refusals.map(statusOfError));
  const executed = 'data' in result && result.data !== undefined;
  if (mediaType !== GRAPHQL_RESPONSE) return 200;
  if (executed) return result.data === null && errors.every((e) => e.extensions?.code === 'UNAUTHENTICATED') ? 401 : 200;
  return Math.max(...errors.map(statusOfError));
}

/** An error as the body shows it: its extensions, `http` shown as `httpStatus`. */
function bodyError(error: GraphQLError): Record<string, unknown> {
  const { http, unexpected: _unexpected, ...extensions } = (error.toJSON?.() ?? error).extensions ?? {};
  const status = (http as HttpExtension | undefined)?.status;
  return {
    message: error.message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { ...extensions, ...(status ? { httpStatus: status } : {}) },
  };
}

function answer(
  result: ExecutionResult & { stringify?: (r: unknown) => string },
  fetchAPI: { Response: typeof Response },
  mediaType: string,
  wellFormed: boolean,
) {
  const errors = (result.errors ?? []) as readonly GraphQLError[];
  const headers: Record<string, string> = {};
  for (const e of errors) Object.assign(headers, httpOf(e)?.headers);
  headers['content-type'] = `${mediaType}; charset=utf-8`;
  const { extensions, ...rest } = result;
  const { http: _http, ...ownExtensions } = (extensions ?? {}) as Record<string, unknown>;
  const body = {
    ...(errors.length ? { errors: errors.map(bodyError) } : {}),
    ...('data' in rest ? { data: rest.data } : {}),
    ...(Object.keys(ownExtensions).length ? { extensions: ownExtensions } : {}),
  };
  // graphql-jit's serializer of this document's data, when it compiled one.
  const text = (result.stringify ?? JSON.stringify)(body);
  return new fetchAPI.Response(text, { status: statusOf(result, mediaType, wellFormed), headers });
}

export function useGraphQLOverHttp(): Plugin {
  /** Requests whose document reached the parser: JSON with a query string, parameters as the spec has them. */
  const wellFormed = new WeakSet<Request>();
  return {
    onParse({ context }) {
      const { request, params } = context as { request?: Request; params?: { operationName?: unknown } };
      // yoga reads an operationName of another type as none; GraphQL over HTTP calls the request malformed.
      const name = params?.operationName;
      if (request && (name === undefined || name === null || typeof name === 'string')) wellFormed.add(request);
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      // Streams, batches and answers another plugin chose (an idempotent replay) are left as they are.
      if (resultProcessor !== processRegularResult || Array.isArray(result) || isAsyncIterable(result)) return;
      const mediaType = regularMediaType(request.headers.get('accept'));
      if (!mediaType) return;
      const read = wellFormed.has(request);
      setResultProcessor((r, fetchAPI) => answer(r as ExecutionResult, fetchAPI, mediaType, read), mediaType);
    },
  };
}
