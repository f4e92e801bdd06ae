// A bound on how deep a request's variables and extensions nest. JSON.parse
// copes with any depth, but recursive consumers (the idempotency fingerprint,
// JSON.stringify, scalar coercion) overflowed the stack on a document of
// 200,000 nested objects and answered 500. The deepest legal input (a WebAuthn
// credential inside an input object) nests about 6 levels.
import type { Plugin } from 'graphql-yoga';
import { invalid } from '../errors.ts';
import { graphqlError } from './errors.ts';

export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a parsed JSON value, counted without recursion, stopping past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  // Containers only, each with its level in a parallel stack: a list of millions of scalars
  // costs no allocation per element.
  const items: object[] = [value];
  const levels: number[] = [1];
  while (items.length > 0) {
    const item = items.pop()!;
    const level = levels.pop()!;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    const children = Array.isArray(item) ? item : Object.values(item);
    for (let i = 0; i < children.length; i++) {
      const child: unknown = children[i];
      if (child !== null && typeof child === 'object') {
        items.push(child);
        levels.push(level + 1);
      }
    }
  }
  return deepest;
}

/** Checked right after parsing, before any other plugin walks the parameters. */
export function useJsonDepthLimit(limit = MAX_JSON_DEPTH): Plugin {
  return {
    onRequestParse() {
      return {
        onRequestParseDone({ requestParserResult }) {
          for (const params of Array.isArray(requestParserResult) ? requestParserResult : [requestParserResult]) {
            for (const part of ['variables', 'extensions'] as const) {
              if (jsonDepth(params[part], limit) > limit) throw graphqlError(invalid(part, `must not nest deeper than ${limit} levels`));
            }
          }
        },
      };
    },
  };
}
