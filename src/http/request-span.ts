// The server span of one request at the edge, for every face: it continues the caller's W3C
// traceparent, and the request's work (admission, the face, the operation and its store calls)
// runs in its context, so every span below is its child. The face's facts are read from the
// request's state once the answer has gone out: GraphQL's operation name and type, or the RPC's
// service and method. Never a header's value, a query string or a REST path (its ids are values).
import type { IncomingMessage } from 'node:http';
import { markFailed, runIn, startServerSpan, type Attributes } from '../tracing/spans.ts';
import type { RequestState } from './request-state.ts';

export interface RequestSpan {
  /** Runs `fn` in the span's context. */
  run<T>(fn: () => T): T;
  /** Ends the span with the answer's status and what the face learnt. */
  end(state: RequestState, status: number): void;
}

const RPC_SYSTEMS: Record<string, string> = {
  grpc: 'grpc',
  'grpc-web': 'grpc',
  'grpc-web-text': 'grpc',
  connect: 'connect_rpc',
  rest: 'grpc',
};

function faceAttributes(state: RequestState): { name?: string; attributes: Attributes } {
  if (state.protocol === 'graphql') {
    const attributes: Attributes = {};
    if (state.operationType) attributes['graphql.operation.type'] = state.operationType;
    if (state.operationName) attributes['graphql.operation.name'] = state.operationName;
    const name = state.operationType ? `${state.operationType}${state.operationName ? ` ${state.operationName}` : ''}` : undefined;
    return { name, attributes };
  }
  const system = RPC_SYSTEMS[state.protocol];
  // The wire face names the method as service/method in rootField (src/wire/context.ts).
  const slash = state.rootField?.lastIndexOf('/') ?? -1;
  if (!system || !state.rootField || slash < 0) return { attributes: {} };
  const service = state.rootField.slice(0, slash);
  const method = state.rootField.slice(slash + 1);
  return { name: state.rootField, attributes: { 'rpc.system': system, 'rpc.service': service, 'rpc.method': method } };
}

/** Null while tracing is off: the edge then runs the request as it always did. */
export function startRequestSpan(req: IncomingMessage, path: string, state: RequestState): RequestSpan | null {
  const method = req.method ?? 'GET';
  const started = startServerSpan(req.headers, `${method} ${state.protocol}`, {
    'http.request.method': method,
    'network.protocol.version': req.httpVersion,
    'gateway.protocol': state.protocol,
    ...(state.protocol === 'rest' ? {} : { 'url.path': path }),
  });
  if (!started) return null;
  const { span, context } = started;
  return {
    run: (fn) => runIn(context, fn),
    end(state, status) {
      const face = faceAttributes(state);
      if (face.name) span.updateName(face.name);
      span.setAttributes({ ...face.attributes, 'http.response.status_code': status });
      if (state.errorCodes.length > 0) markFailed(span, state.errorCodes[0]!);
      else if (status >= 500) markFailed(span, String(status));
      span.end();
    },
  };
}

/** `fn` in the span's context, or as it is without one. */
export const runInSpan = <T>(span: RequestSpan | null, fn: () => T): T => (span ? span.run(fn) : fn());
