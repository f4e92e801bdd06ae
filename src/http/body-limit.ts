// The request body cap (DESIGN.md section 8): the largest legal input is accepted,
// anything larger is 413 before it is parsed. Sized from the input limits, for a
// request encoded the way JSON.stringify does it (UTF-8, no gratuitous \u escapes):
// every code point at most 4 bytes. A client that \u-escapes plain text can hit the
// cap below the limits; none does.
import type { Config } from '../config.ts';
import { MAX_IDP_LINKS, MAX_METADATA_ENTRIES } from '../commands/user-inputs.ts';
import { MAX_METADATA_URL_LENGTH } from '../commands/project-inputs.ts';
import { PUBLIC_KEY_CREDENTIAL_MAX } from '../commands/u2f-inputs.ts';

const UTF8_MAX = 4;
/** A JSON string of n code points with its quotes, its field name and punctuation. */
const textField = (codePoints: number) => codePoints * UTF8_MAX + 64;
const base64Field = (bytes: number) => Math.ceil(bytes / 3) * 4 + 64;
/** Query text, operation name, the other small fields of any input, JSON structure. */
const ALLOWANCE = 64 * 1024;

export function largestLegalBodies(config: Config) {
  const metadataEntry = textField(200) + base64Field(500_000) + 32;
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
