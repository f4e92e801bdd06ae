// Authentication at the edge, for every path it serves (GraphQL and the wire API alike): the
// bearer token is checked once per request, by the node handler before the rate limit and
// before the body is read (edge.ts), so that the rate limit and the body caps can be per
// verified caller (a forged `sub` buys nothing). The result stays on the request's state;
// the faces read it from there (a later `authenticate` of the same request is a no-op).
import type { TokenVerifier } from '../auth/tokens.ts';
import type { RequestState } from './request-state.ts';

/** Who is calling, as the bearer token says. */
export interface VerifiedCaller {
  /** The verified `sub`, or null without a valid token. */
  callerId: string | null;
  /** A token was sent and is not valid (every operation answers it: UNAUTHENTICATED, or UNAVAILABLE when keys cannot be fetched). */
  authError?: Error;
}

/** The caller of an `Authorization: Bearer …` header; no header: no caller, and no error. */
export async function verifyCaller(tokens: TokenVerifier, authorization: string | null | undefined): Promise<VerifiedCaller> {
  if (!authorization) return { callerId: null };
  try {
    return { callerId: (await tokens.verify(authorization)).userId };
  } catch (err) {
    return { callerId: null, authError: err as Error };
  }
}

/** Checks the request's token once, onto its state (caller, authError, authChecked). */
export async function authenticate(state: RequestState, authorization: string | null, tokens: TokenVerifier): Promise<void> {
  if (state.authChecked) return;
  state.authChecked = true;
  const verified = await verifyCaller(tokens, authorization);
  state.caller = verified.callerId;
  if (verified.authError) state.authError = verified.authError;
}

/** The caller as the edge verified it, for the request context of a face. */
export const callerOf = (state: RequestState): VerifiedCaller => ({
  callerId: state.caller,
  ...(state.authError ? { authError: state.authError } : {}),
});
