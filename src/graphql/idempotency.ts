// Idempotency-Key on GraphQL mutations: the yoga plugin over the transport-neutral core
// (src/http/idempotency-core.ts: the rules, the stores, the fingerprint and the sealed answer).
// Here: what a GraphQL request is (a POST whose operation is a mutation; its fingerprint is
// the query, operation name and variables), what is kept (the HTTP answer as it went out: status,
// content type, body), which answers are not kept (any 5xx or 429, and errors UNAVAILABLE,
// INTERNAL or RESOURCE_EXHAUSTED, and any answer over the core's maxAnswerBytes), and a replay:
// the kept answer with `Idempotency-Replayed: true`.
//
// Whether a request is a mutation is asked before armor's limits run (they run inside yoga's
// parse, later): the query is parsed here under armor's own token limit, so a huge document
// costs at most that many tokens; a document over the limit is not an idempotent mutation
// (the key is ignored) and yoga answers it with armor's usual error.
import { getOperationAST, parse, type GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { AppError } from '../errors.ts';
import { armorLimits } from './armor.ts';
import { canonical, type Idempotency } from '../http/idempotency-core.ts';
import { graphqlError } from './errors.ts';
import { stateOf } from './request-state.ts';

export {
  canonical,
  createIdempotency,
  createMemoryIdempotencyStore,
  createRedisIdempotencyStore,
  MAX_KEPT_ANSWER_BYTES,
  MEMORY_STORE_MAX_BYTES,
  type Idempotency,
  type IdempotencyOptions,
  type IdempotencyRecord,
  type IdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from '../http/idempotency-core.ts';

/** An answer as it went out. */
interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

const NOT_STORED_CODES = new Set(['UNAVAILABLE', 'INTERNAL', 'RESOURCE_EXHAUSTED']);

function isMutation(query: unknown, operationName: unknown): boolean {
  if (typeof query !== 'string') return false;
  try {
    const document = parse(query, { maxTokens: armorLimits.maxTokens.n, noLocation: true });
    const op = getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
    return op?.operation === 'mutation';
  } catch {
    return false; // yoga answers the syntax error (or armor the token limit)
  }
}

/** Whether an answer is the final word on this request (not an outage, a crash or a rate limit). */
function keepable(answer: StoredAnswer): boolean {
  if (answer.status >= 500 || answer.status === 429) return false;
  try {
    const body = JSON.parse(answer.body) as { errors?: { extensions?: { code?: string } }[] };
    return !(body.errors ?? []).some((e) => NOT_STORED_CODES.has(String(e.extensions?.code)));
  } catch {
    return false;
  }
}

export function useIdempotency(idempotency: Idempotency): Plugin {
  /** Requests that hold their key, and requests answered from the store. */
  const owners = new WeakMap<Request, (answer?: StoredAnswer) => Promise<void>>();
  const replays = new WeakMap<Request, StoredAnswer>();
  const refuse = (setResult: (r: { errors: GraphQLError[] }) => void, error: AppError) => setResult({ errors: [graphqlError(error)] });

  return {
    async onParams({ request, params, setResult }) {
      const header = request.headers.get('idempotency-key');
      if (header === null || request.method !== 'POST') return;
      // The fingerprint input: the query, the operation name and the variables (canonical JSON).
      const claim = await idempotency.begin<StoredAnswer>(stateOf(request).caller, header, () =>
        isMutation(params.query, params.operationName)
          ? canonical({ query: params.query, operationName: params.operationName ?? null, variables: params.variables ?? null })
          : null,
      );
      switch (claim.kind) {
        case 'ignore':
          return;
        case 'proceed':
          owners.set(request, claim.finish);
          return;
        case 'replay':
          replays.set(request, claim.answer);
          return setResult({ data: null });
        default:
          return refuse(setResult, claim.error);
      }
    },

    onResultProcess({ request, setResultProcessor }) {
      const answer = replays.get(request);
      if (!answer) return;
      setResultProcessor(
        (_result, fetchAPI) =>
          new fetchAPI.Response(answer.body, {
            status: answer.status,
            headers: { 'content-type': answer.contentType, 'idempotency-replayed': 'true' },
          }),
        answer.contentType,
      );
    },

    async onResponse({ request, response }) {
      const finish = owners.get(request);
      if (!finish) return;
      owners.delete(request);
      // Too large to keep (the core refuses it too): release the key without reading the body again.
      if (Number(response.headers.get('content-length')) > idempotency.maxAnswerBytes) return finish();
      const answer: StoredAnswer = {
        status: response.status,
        contentType: response.headers.get('content-type') ?? 'application/json',
        body: await response.clone().text(),
      };
      await finish(answer.body.length <= idempotency.maxAnswerBytes && keepable(answer) ? answer : undefined);
    },
  };
}
