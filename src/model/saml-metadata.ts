// Reads the entityID out of a SAML 2.0 metadata document, safely:
// - no DTD at all: a document with a DOCTYPE is refused as soon as the parser
//   reports it, before any content (and so any entity reference) is read; no
//   internal or external entity is ever defined, expanded or fetched;
// - a size cap before parsing, strict well-formedness (saxes), namespaces;
// - the root must be md:EntityDescriptor (any prefix, or the default
//   namespace) in urn:oasis:names:tc:SAML:2.0:metadata with a non-empty
//   entityID. An EntitiesDescriptor (an aggregate of many entities) is refused:
//   an application is one service provider, so DESIGN.md's "root must be an
//   EntityDescriptor" is applied as written.
import { SaxesParser } from 'saxes';

export const SAML_METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
/** SAML 2.0 metadata schema: entityID is an anyURI of at most 1024 characters. */
export const MAX_ENTITY_ID_LENGTH = 1024;

export type MetadataResult = { ok: true; entityId: string } | { ok: false; reason: string };

class Refusal extends Error {}

const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

/** The document as text: UTF-8 (with or without BOM), UTF-16 with a BOM, or a declared ISO-8859-1 / US-ASCII. */
function decode(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be', { fatal: true }).decode(bytes.subarray(2));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le', { fatal: true }).decode(bytes.subarray(2));
  const head = Buffer.from(bytes.subarray(0, 200)).toString('latin1');
  const declared = /^(?:\uFEFF|\xEF\xBB\xBF)?<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase();
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  if (declared === undefined || ['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(declared)) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start));
    } catch {
      return refuse('is not valid UTF-8 text');
    }
  }
  if (['iso-8859-1', 'latin1', 'latin-1', 'l1'].includes(declared)) return Buffer.from(bytes).toString('latin1');
  return refuse(`declares the unsupported encoding ${declared} (use UTF-8)`);
}

/**
 * The entityID of a SAML metadata document, or why it is refused. Never
 * throws for bad input; `maxBytes` caps the work done.
 */
export function parseSamlMetadata(input: Uint8Array, options: { maxBytes: number }): MetadataResult {
  try {
    if (input.byteLength === 0) refuse('is empty');
    if (input.byteLength > options.maxBytes) refuse(`is larger than ${options.maxBytes} bytes`);
    return { ok: true, entityId: readEntityId(decode(input)) };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.message };
    // saxes reports well-formedness errors as "line:column: message".
    return { ok: false, reason: `is not well-formed XML (${(err as Error).message.split('\n')[0]})` };
  }
}

function readEntityId(xml: string): string {
  const parser = new SaxesParser({ xmlns: true, position: true });
  let entityId: string | undefined;
  let rootSeen = false;

  parser.on('doctype', () => refuse('contains a DOCTYPE; DTDs and entity declarations are not accepted'));
  parser.on('opentag', (tag) => {
    if (rootSeen) return;
    rootSeen = true;
    if (tag.local === 'EntitiesDescriptor' && tag.uri === SAML_METADATA_NS) {
      refuse('is an EntitiesDescriptor (an aggregate of entities); give the EntityDescriptor of the one service provider');
    }
    if (tag.local !== 'EntityDescriptor') refuse(`has the root element ${tag.name}, expected md:EntityDescriptor`);
    if (tag.uri !== SAML_METADATA_NS) {
      refuse(`has its EntityDescriptor in the namespace "${tag.uri ?? ''}", expected ${SAML_METADATA_NS}`);
    }
    const attr = Object.values(tag.attributes).find((a) => a.local === 'entityID' && (a.uri ?? '') === '');
    const value = attr?.value.trim() ?? '';
    if (!value) refuse('has no entityID on its EntityDescriptor');
    if ([...value].length > MAX_ENTITY_ID_LENGTH) refuse(`has an entityID longer than ${MAX_ENTITY_ID_LENGTH} characters`);
    entityId = value;
  });
  parser.write(xml).close();
  if (!rootSeen || entityId === undefined) refuse('has no root element');
  return entityId!;
}
