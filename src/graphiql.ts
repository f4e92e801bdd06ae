// GraphiQL and introspection, per environment (GRAPHIQL, INTROSPECTION).
//
// The page comes from @graphql-yoga/render-graphiql: GraphiQL, its CSS and fonts
// and the Monaco editor workers are inlined in the HTML (the workers start from
// blob: URLs), so nothing is fetched from a CDN and it works with no internet.
// In quick start (not production, no JWKS_URL) the page opens with an example
// operation and, for a browser on the same machine, an administrator token in
// the Authorization header.
import type { IncomingMessage } from 'node:http';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { createLocalTokenSigner } from './auth/tokens.ts';
import { instanceAdminId } from './commands/bootstrap.ts';
import type { Deps } from './commands/context.ts';
import type { Config } from './config.ts';

/** Loaded on the first page view: the inlined GraphiQL bundle costs ~85 MB of memory a production gateway never needs. */
export const renderGraphiQL = async (options: GraphiQLOptions) =>
  (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options);

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

const TOKEN_PLACEHOLDER = 'Bearer <the administrator token npm start printed>';
/** The pre-filled token is minted on first use and renewed well before it expires (24 h). */
const TOKEN_REUSE_MS = 12 * 3600_000;

export const isQuickStart = (config: Config) => !config.production && !config.jwksUrl;

/** Loopback peers only: whoever can open the page from another machine gets no token. */
export function isLoopbackPeer(serverContext: unknown): boolean {
  const address = (serverContext as { req?: IncomingMessage } | undefined)?.req?.socket?.remoteAddress ?? '';
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** yoga's `graphiql` option: false when GRAPHIQL is off, else the page options per request. */
export function graphiqlOption(config: Config, deps: Deps) {
  if (!config.graphiql) return false as const;
  const base: GraphiQLOptions = { title: 'Identity gateway' };
  if (!isQuickStart(config)) return base;

  const signer = createLocalTokenSigner(config);
  let cached: { token: string; at: number } | null = null;
  const adminToken = async (): Promise<string | null> => {
    if (cached && Date.now() - cached.at < TOKEN_REUSE_MS) return cached.token;
    const adminId = await instanceAdminId({ deps });
    if (!adminId) return null;
    cached = { token: await signer.sign(adminId), at: Date.now() };
    return cached.token;
  };

  return async (_request: Request, serverContext?: unknown): Promise<GraphiQLOptions> => {
    const token = isLoopbackPeer(serverContext) ? await adminToken().catch(() => null) : null;
    return {
      ...base,
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify({ Authorization: token ? `Bearer ${token}` : TOKEN_PLACEHOLDER }, null, 2),
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    };
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
