// The one place that talks to the gateway: POST application/json with the signed-in token.
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';

const gatewayUrl: string = import.meta.env.VITE_GATEWAY_URL || 'http://localhost:4000/graphql';
// With the gateway's trusted documents on, it refuses query text: send the manifest hash instead.
const sendHashOnly = import.meta.env.VITE_SEND_DOCUMENT_ID === 'true';
const TOKEN_KEY = 'console.token';

export interface GatewayError {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
}

export class RequestFailed extends Error {
  constructor(readonly errors: GatewayError[]) {
    super(errors.map((e) => e.message).join('; '));
  }
}

// sessionStorage: the token lives as long as the tab, and other tabs and sites don't see it.
// 'session-change' on window tells the header (the storage event only reaches other tabs).
export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => {
    sessionStorage.setItem(TOKEN_KEY, token);
    window.dispatchEvent(new Event('session-change'));
  },
  signOut: () => {
    sessionStorage.removeItem(TOKEN_KEY);
    window.dispatchEvent(new Event('session-change'));
  },
};

/** A document made by graphql() in src/gql: its text, its manifest hash and its types. */
type Document<Result, Variables> = DocumentTypeDecoration<Result, Variables> & { __meta__?: Record<string, unknown> };

export async function request<Result, Variables>(document: Document<Result, Variables>, variables: Variables): Promise<Result> {
  const hash = document.__meta__?.hash;
  const body = sendHashOnly && typeof hash === 'string' ? { documentId: hash, variables } : { query: document.toString(), variables };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
  };
  const token = session.token();
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(gatewayUrl, { method: 'POST', headers, body: JSON.stringify(body) });
  // Errors come with a JSON body whatever the HTTP status (400, 401, 409, ...): read it first.
  const json = (await response.json().catch(() => null)) as { data?: Result; errors?: GatewayError[] } | null;
  if (!json) throw new Error(`The gateway answered HTTP ${response.status} without a GraphQL body`);
  if (json.errors?.length) throw new RequestFailed(json.errors);
  if (json.data === undefined || json.data === null) throw new Error('The gateway answered without data');
  return json.data;
}
