// The request body cap (docs/graphql.md, HTTP: limits): the largest legal input is accepted,
// anything larger is 413 before it is parsed. Sized from the input limits, for a
// request encoded the way JSON.stringify does it (UTF-8, no gratuitous \u escapes):
// every code point at most 4 bytes. A client that \u-escapes plain text can hit the
// cap below the limits; none does.
//
// That cap is for callers with a valid token. Without one, a body may be at most
// UNAUTHENTICATED_BODY_BYTES: the edge checks the token first and refuses a larger
// Content-Length before reading anything (edge.ts); a body of unknown length
// (chunked, or HTTP/2 without Content-Length) is counted by the edge's meter as it
// streams in and refused at that size.
import type { Config } from '../config.ts';
import { AppError, unauthenticated } from '../errors.ts';
import type { RequestState } from './request-state.ts';
import {
  MAX_IDP_LINKS,
  MAX_METADATA_ENTRIES,
  MAX_METADATA_URL_LENGTH,
  METADATA_KEY_MAX,
  METADATA_VALUE_MAX_BYTES,
  PUBLIC_KEY_CREDENTIAL_MAX,
} from '../limits.ts';

const UTF8_MAX = 4;
/** A JSON string of n code points with its quotes, its field name and punctuation. */
const textField = (codePoints: number) => codePoints * UTF8_MAX + 64;
const base64Field = (bytes: number) => Math.ceil(bytes / 3) * 4 + 64;
/** Query text, operation name, the other small fields of any input, JSON structure. */
const ALLOWANCE = 64 * 1024;

export function largestLegalBodies(config: Config) {
  const metadataEntry = textField(METADATA_KEY_MAX) + base64Field(METADATA_VALUE_MAX_BYTES) + 32;
  const idpLink = 3 * textField(200) + 32;
  return {
    // metadata and idpLinks at their counts, and 30 more 200-character fields (profile, email, username, password, …)
    addHumanUser: MAX_METADATA_ENTRIES * metadataEntry + MAX_IDP_LINKS * idpLink + 30 * textField(200),
    verifyU2FRegistration: PUBLIC_KEY_CREDENTIAL_MAX * UTF8_MAX + 3 * textField(200),
    addSAMLApp: base64Field(config.samlMetadata.maxBytes) + textField(MAX_METADATA_URL_LENGTH) + 2 * textField(200),
  };
}

/** Bytes of the largest request body accepted. */
export function maxRequestBodyBytes(config: Config): number {
  return Math.max(...Object.values(largestLegalBodies(config))) + ALLOWANCE;
}

/** The answer to a body over the cap of a caller with a valid token: RESOURCE_EXHAUSTED, HTTP 413 (docs/graphql.md, HTTP: limits). */
export const bodyTooLarge = (maxBytes: number) =>
  new AppError('RESOURCE_EXHAUSTED', `Request body too large: at most ${maxBytes} bytes`, [], 413);

/** Largest body accepted without a valid token: any query without big inputs (GraphiQL's introspection query is about 3 KB). */
export const UNAUTHENTICATED_BODY_BYTES = 64 * 1024;

/** The answer to a body over UNAUTHENTICATED_BODY_BYTES: the token's problem (missing, expired, forged; UNAVAILABLE when keys cannot be fetched). */
export function bodyNeedsToken(state: RequestState): AppError {
  const why = state.authError instanceof AppError ? state.authError : unauthenticated();
  return new AppError(why.code, `${why.message}: a request body over ${UNAUTHENTICATED_BODY_BYTES} bytes needs a valid bearer token.`);
}
