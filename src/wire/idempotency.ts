// Idempotency-Key on the wire API (gRPC, gRPC-web, Connect, REST/JSON): a wrapper of the four
// services' methods over the same core as GraphQL's (src/http/idempotency-core.ts: the key rule, the caller's
// scope, claim / wait / conflict, the sealed answer, the outcome counter). Here, what a wire
// request is:
// - a mutation: a method of the four ZITADEL services that isReadMethod (context.ts) does not
//   count as a read: Get…, List…, Healthz (as requestFacts classifies them); grpc.health and
//   reflection never look at the key;
// - its fingerprint input: the service and method and the canonical proto3 JSON of the request
//   message, so one request is the same request over gRPC, Connect or REST (a retry may switch
//   transport), and never the same as a GraphQL body (one key names one request);
// - its answer: the response message (binary) or the error (code, message, details);
//   UNAVAILABLE, INTERNAL, RESOURCE_EXHAUSTED, UNKNOWN, CANCELED, DEADLINE_EXCEEDED and ABORTED
//   are not kept: a retry could get another answer.
// A replay is the same message, or the same error, with the response header (error metadata)
// `idempotency-replayed: true`; refusals are AppErrors through toConnectError, as every wire error.
import { create, fromBinary, isMessage, toBinary, toJson, type DescMessage, type Message } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext } from '@connectrpc/connect';
import { canonical, type Idempotency } from '../http/idempotency-core.ts';
import type { Logger } from '../log.ts';
import { isReadMethod, requestStateKey } from './context.ts';
import { toConnectError } from './errors.ts';

/** What is kept of a wire answer (sealed by the core). */
export type WireAnswer = { message: string } | { error: { code: Code; message: string; details: { type: string; value: string }[] } };

const NOT_KEPT = new Set<Code>([
  Code.Unavailable,
  Code.Internal,
  Code.ResourceExhausted,
  Code.Unknown,
  Code.Canceled,
  Code.DeadlineExceeded,
  Code.Aborted,
]);

const REPLAYED = 'idempotency-replayed';

/** The field violation names the header as it is sent, not as a snake_case message field. */
const KEY_FIELD = { 'Idempotency-Key': 'Idempotency-Key' };

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

function errorAnswer(error: ConnectError): WireAnswer {
  return {
    error: {
      code: error.code,
      message: error.rawMessage,
      details: error.details.map((d) =>
        'desc' in d
          ? { type: d.desc.typeName, value: base64(toBinary(d.desc, isMessage(d.value, d.desc) ? d.value : create(d.desc, d.value))) }
          : { type: d.type, value: base64(d.value) },
      ),
    },
  };
}

function replay(output: DescMessage, answer: WireAnswer, ctx: HandlerContext): Message {
  if ('error' in answer) {
    const { code, message, details } = answer.error;
    const error = new ConnectError(message, code, { [REPLAYED]: 'true' });
    // As they were sent (ErrorDetail, BadRequest, ...): each Any's type and bytes.
    error.details.push(...details.map((d) => ({ type: d.type, value: bytesOf(d.value) })));
    throw error;
  }
  ctx.responseHeader.set(REPLAYED, 'true');
  return fromBinary(output, bytesOf(answer.message));
}

type Method = (request: Message, ctx: HandlerContext) => Promise<unknown>;

/**
 * One method of the four services with the key applied. It runs inside the method (not as an
 * interceptor), so the answer it returns goes through each protocol's own framing and headers.
 */
function idempotentMethod(run: Method, idempotency: Idempotency, logger: Logger): Method {
  return async (message, ctx) => {
    const { service, method } = ctx;
    const state = ctx.values.get(requestStateKey);
    const where = { method: method.name, requestId: state?.requestId };
    const mutation = !isReadMethod(method.name);
    const fingerprint = () => (mutation ? `wire\n${service.typeName}/${method.name}\n${canonical(toJson(method.input, message))}` : null);
    let claim;
    try {
      claim = await idempotency.begin<WireAnswer>(state?.caller, ctx.requestHeader.get('idempotency-key'), fingerprint);
    } catch (err) {
      throw toConnectError(err, logger, where); // a stored answer that does not open: INTERNAL, logged
    }
    switch (claim.kind) {
      case 'ignore':
        return run(message, ctx);
      case 'replay':
        return replay(method.output, claim.answer, ctx);
      case 'proceed':
        break;
      default:
        throw toConnectError(claim.error, logger, { ...where, renames: KEY_FIELD });
    }

    let answer: unknown;
    try {
      answer = await run(message, ctx);
    } catch (err) {
      let kept: WireAnswer | undefined;
      try {
        const error = ConnectError.from(err);
        if (!NOT_KEPT.has(error.code)) kept = errorAnswer(error);
      } catch {
        // a detail that does not serialize: not kept
      }
      await claim.finish(kept);
      throw err;
    }
    let kept: WireAnswer | undefined;
    try {
      const out = isMessage(answer, method.output) ? answer : create(method.output, answer as never);
      kept = { message: base64(toBinary(method.output, out)) };
    } catch {
      // not kept; the answer goes out all the same
    }
    await claim.finish(kept);
    return answer;
  };
}

/** A service implementation whose methods apply the Idempotency-Key (unchanged without a core). */
export function withIdempotency<T extends object>(impl: T, options: { idempotency?: Idempotency; logger: Logger }): T {
  const { idempotency, logger } = options;
  if (!idempotency) return impl;
  return Object.fromEntries(
    Object.entries(impl).map(([name, run]) => [
      name,
      typeof run === 'function' ? idempotentMethod(run as Method, idempotency, logger) : run,
    ]),
  ) as T;
}
