// graphql-armor limits on every operation, checked at parse (tokens) and
// validation (the rest), before anything executes. Tuned against the real
// documents (test/operations/*.graphql, GraphiQL's introspection query,
// federation `_entities` / `_service` queries; test/http.hardening.test.ts runs
// them all through these limits). The largest real ones: 163 tokens (the
// introspection query), depth 4, no aliases, no directives. A refused operation answers
// INVALID_ARGUMENT naming the limit. The cost limit is src/graphql/cost.ts.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { Plugin } from 'graphql-yoga';

export const armorLimits = {
  /** Lexer tokens per document: about 6× the introspection query. */
  maxTokens: { n: 1000 },
  /**
   * Field nesting; fragments do not add a level of their own (flattenFragments),
   * so a `... on User { … }` inside `_entities` counts like the fields it selects.
   * The schema itself is at most 4 deep; 8 leaves room for gateway-built queries.
   */
  maxDepth: { n: 8, flattenFragments: true, ignoreIntrospection: true },
  /** The cost is counted with the variables' page sizes, at execution (src/graphql/cost.ts), not by armor's rule. */
  costLimit: { enabled: false },
  /**
   * Aliases per operation (armor's default). Keeps one request from running a
   * mutation many times over (`a1: setHumanPassword … a99: …`) past the rate limit.
   */
  maxAliases: { n: 15 },
  maxDirectives: { n: 50 },
} as const;

export function useArmor(options: { blockFieldSuggestions: boolean }): Plugin {
  const config: Parameters<typeof EnvelopArmorPlugin>[0] = {
    ...armorLimits,
    maxDepth: { ...armorLimits.maxDepth },
    // "Did you mean …" would spell out the schema where introspection is off.
    blockFieldSuggestion: { enabled: options.blockFieldSuggestions },
  };
  return EnvelopArmorPlugin(config) as Plugin;
}
