// The edge's state of a request (src/http/request-state.ts), keyed by yoga's Request object:
// the node handler hands its state in as server context and useRequestState files it under
// the Request; calls that enter yoga without the node handler (yoga.fetch) get one made on
// first sight.
import type { Plugin } from 'graphql-yoga';
import { newRequestState, type RequestState } from '../http/request-state.ts';

/** The server context the GraphQL face passes to yoga with each request. */
export interface EdgeContext {
  requestState?: RequestState;
}

const byRequest = new WeakMap<Request, RequestState>();

/** First plugin: files the node handler's state under yoga's Request. */
export function useRequestState(): Plugin {
  return {
    onRequest({ request, serverContext }) {
      const state = (serverContext as EdgeContext | undefined)?.requestState;
      if (state) byRequest.set(request, state);
    },
  };
}

/** The state of this request: the node handler's, else one made on first sight of the Request. */
export function stateOf(request: Request): RequestState {
  const current = byRequest.get(request);
  if (current) return current;
  const made = newRequestState(request.headers.get('x-request-id'), 'unknown', 'graphql');
  byRequest.set(request, made);
  return made;
}
