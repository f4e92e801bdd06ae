// The edge's meter (src/http/edge.ts, RequestState.meter) on the bodies yoga reads.
import type { Plugin } from 'graphql-yoga';
import { graphqlError } from './errors.ts';
import { stateOf } from './request-state.ts';

/**
 * A body of unknown length (chunked; HTTP/2 without Content-Length) through the edge's meter
 * (RequestState.meter) as yoga reads it: counted in the body budgets as it arrives, and cut
 * at UNAUTHENTICATED_BODY_BYTES without a valid token.
 */
export function useBodyMeter(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const { meter } = stateOf(request);
      if (!meter || !requestParser || !request.body) return;
      // As yoga's own cap (use-limit-request-body-size.js): a native stream needs the native TransformStream.
      const Transform = request.body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
      setRequestParser((req) => {
        const body = req.body!.pipeThrough(
          new Transform<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              const refused = meter(chunk.byteLength);
              if (refused) controller.error(graphqlError(refused));
              else controller.enqueue(chunk);
            },
          }),
        );
        return requestParser(
          new fetchAPI.Request(req.url, {
            method: req.method,
            headers: req.headers,
            signal: req.signal,
            body,
            duplex: 'half',
          } as RequestInit),
        );
      });
    },
  };
}
