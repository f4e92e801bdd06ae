// How many objects and arrays a JSON text holds, counted before it is parsed. JSON.parse of a
// request body of 13 MB of `{},{},…` made 4.4 million objects: 600 MB of heap and 2 s, from
// one authenticated request. The largest legal input holds a few dozen containers; a batch of
// federation representations a few thousand. Plain functions, for every face: GraphQL applies
// them to a request body (src/graphql/json-containers.ts), the wire API to its JSON messages
// (src/wire/request-limits.ts, rest-request.ts).

/** Objects and arrays a request body may hold. */
export const MAX_JSON_CONTAINERS = 10_000;

/** Bodies this small cannot hold enough containers to matter (3 bytes each at least): not scanned. */
export const UNSCANNED_JSON_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * True when `text` holds more than `limit` `{` and `[` outside strings. One pass, no
 * allocation, stops at the first one past the limit; malformed JSON is left to JSON.parse.
 */
export function tooManyJsonContainers(text: string, limit = MAX_JSON_CONTAINERS): boolean {
  if (text.length <= limit) return false;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if ((c === OPEN_BRACE || c === OPEN_BRACKET) && ++containers > limit) return true;
  }
  return false;
}
