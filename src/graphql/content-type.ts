// A POST to /graphql is application/json (UTF-8), the one request media type of
// the GraphQL over HTTP spec; anything else (application/graphql, forms,
// text/plain) is refused with 415 before its body is read. One body format
// means one parser, one size rule and one CSRF rule (browsers preflight it).
import type { Plugin } from 'graphql-yoga';
import { extensionsOf } from '../errors.ts';
import { stateOf } from './request-state.ts';

/** application/json with no parameter but an optional UTF-8 charset. */
export function isJsonRequest(contentType: string | null): boolean {
  if (!contentType) return false;
  const [type, ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
}

export function useJsonRequests(): Plugin {
  return {
    // onRequestParse, as the CSRF plugin: it answers the types a browser sends cross-site (403) first.
    onRequestParse({ request, endResponse, fetchAPI }) {
      if (request.method !== 'POST' || isJsonRequest(request.headers.get('content-type'))) return;
      stateOf(request).errorCodes.push('INVALID_ARGUMENT');
      const message = 'Unsupported Media Type: send the request as Content-Type: application/json (UTF-8).';
      const { http: _http, ...extensions } = extensionsOf('INVALID_ARGUMENT');
      const body = { errors: [{ message, extensions: { ...extensions, httpStatus: 415 } }] };
      endResponse(
        new fetchAPI.Response(JSON.stringify(body), {
          status: 415,
          headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' },
        }),
      );
    },
  };
}
