// The input limits that size more than their own check: the commands enforce them
// (src/commands/*-inputs.ts) and the HTTP edge sizes its request body cap from them
// (src/http/body-limit.ts). Both import them from here, below both, so the edge does
// not reach up into the commands for a number. "chars" in ZITADEL's field limits are Unicode code points.

/**
 * At most this many metadata entries and idpLinks in one addHumanUser. ZITADEL bounds each
 * entry but not their number; a bound makes the largest legal request finite, and the
 * request body cap is sized to it.
 */
export const MAX_METADATA_ENTRIES = 20;
export const MAX_IDP_LINKS = 20;
/** A metadata entry's key, in code points, and its value, in decoded bytes (the field limits). */
export const METADATA_KEY_MAX = 200;
export const METADATA_VALUE_MAX_BYTES = 500_000;

/** Longest SAML metadataUrl accepted (code points). */
export const MAX_METADATA_URL_LENGTH = 2048;

/** A U2F credential, as JSON text, is 55..1048576 characters (code points). */
export const PUBLIC_KEY_CREDENTIAL_MIN = 55;
export const PUBLIC_KEY_CREDENTIAL_MAX = 1_048_576;
