// TRUSTED_DOCUMENTS: the persisted-documents manifest GraphQL Code Generator's client preset
// writes (`{ "sha256:<hex>": "<document>" }`), read and checked at start. A wrong path, a file
// that is not such a manifest, or a document that does not hash to its key stops the start
// naming the setting: otherwise the gateway would come up and refuse every request.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Env } from './config-values.ts';

/** The documents the GraphQL face runs, by the lowercase hex of their sha256. */
export type TrustedDocuments = ReadonlyMap<string, string>;

const HINT = 'generate it with the client preset and persistedDocuments: { hashAlgorithm: "sha256" }';

/**
 * The hex of a document id as clients send it: "sha256:<hex>" (the client preset, GraphQL over
 * HTTP's documentId) or "<hex>" (Apollo's persistedQuery.sha256Hash); null for anything else.
 */
export function documentHash(id: string): string | null {
  const match = /^(?:sha256:)?([0-9a-f]{64})$/i.exec(id);
  return match ? match[1]!.toLowerCase() : null;
}

export function trustedDocuments(env: Env): TrustedDocuments | undefined {
  const file = env.TRUSTED_DOCUMENTS || undefined;
  if (!file) return undefined;
  const fail = (why: string) => new Error(`TRUSTED_DOCUMENTS: ${file} ${why}`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const cause = (err as NodeJS.ErrnoException).code ? 'cannot be read' : 'is not JSON';
    throw fail(`${cause} (${(err as Error).message})`);
  }
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    throw fail(`is not a persisted-documents manifest, an object of "sha256:<hex>": "<document>" (${HINT})`);
  }
  const documents = new Map<string, string>();
  for (const [key, document] of Object.entries(manifest)) {
    const hex = documentHash(key);
    if (hex === null) throw fail(`has the key "${key.slice(0, 80)}", which is not a sha256 hash (${HINT})`);
    if (typeof document !== 'string') throw fail(`maps ${key} to something other than a document's text`);
    // A hand-edited document, or one hashed another way, would run under a hash clients cannot know.
    if (createHash('sha256').update(document).digest('hex') !== hex) throw fail(`maps ${key} to a document that does not hash to it`);
    documents.set(hex, document);
  }
  if (documents.size === 0) throw fail('holds no document: every GraphQL request would be refused');
  return documents;
}
