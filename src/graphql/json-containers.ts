// How many objects and arrays a GraphQL request body holds, counted before yoga parses it
// (the count itself: src/http/json-containers.ts).
import type { Plugin } from 'graphql-yoga';
import { invalid } from '../errors.ts';
import { MAX_JSON_CONTAINERS, tooManyJsonContainers, UNSCANNED_JSON_BYTES } from '../http/json-containers.ts';
import { graphqlError } from './errors.ts';

/**
 * GraphQL's side: a POST body past UNSCANNED_JSON_BYTES (or of unknown length) is counted
 * before yoga parses it; past the limit, INVALID_ARGUMENT and nothing runs. Listed before the
 * body meter, whose parser hands this one the metered request.
 */
export function useJsonContainerLimit(limit = MAX_JSON_CONTAINERS): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser || request.method !== 'POST') return;
      const length = request.headers.get('content-length');
      if (length !== null && Number(length) <= UNSCANNED_JSON_BYTES) return;
      setRequestParser((req) => {
        // yoga's JSON parser calls json(): the same parse, after the count. A SyntaxError
        // still becomes yoga's "POST body sent invalid JSON.".
        req.json = async () => {
          const text = await req.text();
          if (tooManyJsonContainers(text, limit)) throw graphqlError(invalid('body', `must hold at most ${limit} JSON objects and arrays`));
          return JSON.parse(text);
        };
        return requestParser(req);
      });
    },
  };
}
