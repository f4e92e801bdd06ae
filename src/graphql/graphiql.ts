// GraphiQL and introspection, per environment (GRAPHIQL, INTROSPECTION).
//
// The page comes from @graphql-yoga/render-graphiql: GraphiQL, its CSS and fonts
// and the Monaco editor workers are inlined in the HTML (the workers start from
// blob: URLs), so nothing is fetched from a CDN and it works with no internet.
// In quick start (not production, no JWKS_URL) the page opens with an example
// operation and, for a browser on this machine that opened the gateway's own
// loopback address (graphiql-access.ts), an administrator token in the
// Authorization header.
//
// The page is 9 MB. It is served here rather than by yoga's graphiql option, which
// renders it again for every request and sends it uncompressed: rendered once,
// compressed once per encoding (encoded-page.ts) and shared by every answer.
//   - Without a token (every page but the one below): br or gzip per Accept-Encoding,
//     ETag and Cache-Control: no-cache (a browser asks again and gets 304 Not Modified),
//     CORS as any other answer (it holds no secret).
//   - With the token: Cache-Control: no-store, Referrer-Policy: no-referrer, no ETag and
//     no CORS headers, whatever CORS_ORIGINS allows.
// It is a request like any other for the edge: counted by the per-address rate limit.
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import type { IncomingMessage } from 'node:http';
import { createLocalTokenSigner } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import { mayReceiveAdminToken } from './graphiql-access.ts';
import { chooseEncoding, encodedPage, matchesIfNoneMatch, type EncodedPage } from './encoded-page.ts';

/** Loaded on the first page view: the inlined GraphiQL bundle costs ~85 MB of memory a production gateway never needs. */
export const renderGraphiQL = async (options: GraphiQLOptions) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options);

export const EXAMPLE_OPERATION = `# Quick start: Headers (below) holds an administrator token.
# Run Me with the ▶ button or Ctrl+Enter.
query Me {
  me {
    id
    username
    email {
      email
      isVerified
    }
  }
}

# Create a user: uncomment, then run AddUser.
# mutation AddUser {
#   addHumanUser(input: {
#     profile: { firstName: "Ada", lastName: "Lovelace" }
#     email: { email: "ada@example.com", isVerified: true }
#   }) {
#     userId
#     details { sequence changeDate resourceOwner }
#   }
# }
`;

export const TOKEN_PLACEHOLDER = 'Bearer <the administrator token: npm start prints it, or see admin-token in the data folder>';
/** The pre-filled token is minted on first use and renewed well before it expires (24 h). */
const TOKEN_REUSE_MS = 12 * 3600_000;

export const isQuickStart = (config: Config) => !config.production && !config.jwksUrl;

/** The page's options: the bare page, or quick start's with the example operation and this Authorization header. */
function pageOptions(authorization: string | null): GraphiQLOptions {
  const base: GraphiQLOptions = { title: 'Identity gateway' };
  if (authorization === null) return base;
  return {
    ...base,
    defaultQuery: EXAMPLE_OPERATION,
    headers: JSON.stringify({ Authorization: authorization }, null, 2),
    defaultEditorToolsVisibility: 'headers',
    shouldPersistHeaders: false,
  };
}

const isPageRequest = (request: Request, pathname: string) =>
  request.method === 'GET' &&
  (pathname === '/graphql' || pathname === '/graphql/') &&
  (request.headers.get('accept') ?? '').includes('text/html');

/**
 * GraphiQL on GET /graphql for browsers (Accept: text/html); nothing when GRAPHIQL is off.
 * `instanceAdminId`: the user the quick start's token is for (null while there is none).
 */
export function useGraphiQLPage(config: Config, instanceAdminId: () => Promise<string | null>): Plugin {
  if (!config.graphiql) return {};
  const quickStart = isQuickStart(config);
  const tls = config.tls !== null;
  const withoutToken = encodedPage(() => renderGraphiQL(pageOptions(quickStart ? TOKEN_PLACEHOLDER : null)));
  /** The page with the current token: made again (and compressed again) only when the token is renewed. */
  let withToken: { token: string; page: EncodedPage } | undefined;

  const signer = quickStart ? createLocalTokenSigner(config) : null;
  let cached: { token: string; at: number } | null = null;
  const adminToken = async (): Promise<string | null> => {
    if (!signer) return null;
    if (cached && Date.now() - cached.at < TOKEN_REUSE_MS) return cached.token;
    const adminId = await instanceAdminId();
    if (!adminId) return null;
    cached = { token: await signer.sign(adminId), at: Date.now() };
    return cached.token;
  };
  const tokenPage = (token: string) => {
    if (withToken?.token !== token) withToken = { token, page: encodedPage(() => renderGraphiQL(pageOptions(`Bearer ${token}`))) };
    return withToken.page;
  };
  /** Answers carrying the token: their CORS headers are taken off once yoga's CORS has added them. */
  const carriesToken = new WeakSet<Response>();

  return {
    async onRequest({ request, serverContext, url, fetchAPI, endResponse }) {
      if (!isPageRequest(request, url.pathname)) return;
      const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
      const token = quickStart && req && mayReceiveAdminToken(req, tls) ? await adminToken().catch(() => null) : null;
      const body = await (token ? tokenPage(token) : withoutToken).get(chooseEncoding(request.headers.get('accept-encoding')));
      // The shared bytes themselves: yoga's node adapter writes a Buffer body as it is, without a copy.
      const bytes = body.bytes as Uint8Array<ArrayBuffer>;
      const headers = {
        'content-type': 'text/html; charset=utf-8',
        vary: 'Origin, Accept-Encoding',
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
        ...(body.encoding !== 'identity' && { 'content-encoding': body.encoding }),
      };
      if (token) {
        const response = new fetchAPI.Response(bytes, {
          status: 200,
          headers: { ...headers, 'cache-control': 'no-store', 'content-length': String(body.bytes.length) },
        });
        carriesToken.add(response);
        return endResponse(response);
      }
      const cacheHeaders = { 'cache-control': 'no-cache', etag: body.etag };
      if (matchesIfNoneMatch(request.headers.get('if-none-match'), body.etag)) {
        return endResponse(new fetchAPI.Response(null, { status: 304, headers: { vary: headers.vary, ...cacheHeaders } }));
      }
      endResponse(
        new fetchAPI.Response(bytes, {
          status: 200,
          headers: { ...headers, ...cacheHeaders, 'content-length': String(body.bytes.length) },
        }),
      );
    },
    onResponse({ response }) {
      if (!carriesToken.has(response)) return;
      const cors = [...response.headers.keys()].filter((name) => name.toLowerCase().startsWith('access-control-'));
      for (const name of cors) response.headers.delete(name);
    },
  };
}

/**
 * INTROSPECTION=false: an operation selecting __schema or __type fails validation
 * (graphql-js's NoSchemaIntrospectionCustomRule); __typename stays allowed.
 */
export function introspectionSwitch(config: Config): Plugin {
  if (config.introspection) return {};
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
