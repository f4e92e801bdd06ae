// One unary call of a service implementation outside connect-node's router (REST/JSON:
// rest.ts): the handler context connect would make (the edge's request state in its context
// values, as the router's calls carry it: context.ts) and the interceptors run around the
// implementation in connect's order, so a REST call is seen by them as a gRPC call is.
import { create, isMessage, type DescMessage, type DescMethod, type DescService, type MessageShape } from '@bufbuild/protobuf';
import {
  createContextValues,
  type ConnectError,
  type HandlerContext,
  type Interceptor,
  type UnaryRequest,
  type UnaryResponse,
} from '@connectrpc/connect';
import type { NodeRequest } from '../http/face.ts';
import type { RequestState } from '../http/request-state.ts';
import { requestStateKey } from './context.ts';

export interface UnaryCall {
  service: DescService;
  method: DescMethod;
  /** The method's implementation; absent only when `early` is set. */
  impl: ((req: unknown, ctx: HandlerContext) => unknown) | undefined;
  protocolName: string;
  requestMethod: string;
  url: string;
  signal: AbortSignal;
  header: Headers;
  state: RequestState | undefined;
  interceptors: readonly Interceptor[];
  message: MessageShape<DescMessage>;
  /** A failure found before the call (parsing the request): thrown inside the interceptors, so they see the method and the code. */
  early?: ConnectError;
}

/**
 * The handler context connect would make for the call; `init` presets its response headers and
 * trailers (the gRPC face's). Built here rather than by connect's createHandlerContext, which
 * copies the request's headers once more and links a second abort controller (with a deadline
 * timer) to the request's signal: the callers own both already, and no implementation reads a
 * deadline.
 */
export function unaryContext(call: UnaryCall, init: { responseHeader?: HeadersInit; responseTrailer?: HeadersInit } = {}): HandlerContext {
  return {
    service: call.service,
    method: call.method,
    protocolName: call.protocolName,
    requestMethod: call.requestMethod,
    url: call.url,
    signal: call.signal,
    timeoutMs: () => undefined,
    requestHeader: call.header,
    responseHeader: new Headers(init.responseHeader),
    responseTrailer: new Headers(init.responseTrailer),
    values: createContextValues().set(requestStateKey, call.state),
  };
}

/**
 * Runs the call through the interceptors; the answer, or the error thrown (a ConnectError, or
 * whatever the implementation threw). Headers and trailers the implementation sets land on
 * `context`'s, also when it throws.
 */
export async function invokeUnary(call: UnaryCall, context: HandlerContext = unaryContext(call)): Promise<UnaryResponse> {
  const { service, method, impl, early } = call;
  const output = method.output;
  const run = async (r: UnaryRequest): Promise<UnaryResponse> => {
    if (early) throw early;
    const out = await impl!(r.message, {
      ...context,
      service: r.service,
      requestHeader: r.header,
      signal: r.signal,
      values: r.contextValues,
    });
    return {
      stream: false,
      service,
      method: r.method,
      header: context.responseHeader,
      trailer: context.responseTrailer,
      message: isMessage(out, output) ? out : create(output, out as never),
    } as UnaryResponse;
  };
  const next = call.interceptors.reduceRight<(r: UnaryRequest) => Promise<UnaryResponse>>((n, i) => i(n as never) as never, run);
  return next({
    stream: false,
    service,
    method: method as UnaryRequest['method'],
    requestMethod: call.requestMethod,
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    contextValues: context.values,
    message: call.message,
  });
}

/** A node request's headers as connect hands them to a handler (HTTP/2 pseudo-headers left out). */
export function headersOf(req: NodeRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(':') || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, String(value));
  }
  return headers;
}
