// Reads the entityID out of a SAML 2.0 metadata document, safely:
// - no DTD at all: a document with a DOCTYPE is refused as soon as the parser
//   reports it, before any content (and so any entity reference) is read; no
//   internal or external entity is ever defined, expanded or fetched;
// - a size cap before parsing, strict well-formedness (saxes), namespaces;
// - a depth limit: saxes resolves a prefix by walking the open elements, so
//   the cost is linear only while the depth is bounded (docs/performance.md);
// - documents over IN_THREAD_MAX_BYTES are parsed in a worker thread
//   (parseSamlMetadataOffLoop), so even a 1 MiB one never blocks the event loop;
// - the root must be md:EntityDescriptor (any prefix, or the default
//   namespace) in urn:oasis:names:tc:SAML:2.0:metadata with a non-empty
//   entityID. An EntitiesDescriptor (an aggregate of many entities) is refused:
//   an application is one service provider, so the rule "root must be an
//   EntityDescriptor" is applied as written.
import { Worker } from 'node:worker_threads';
import { SaxesParser } from 'saxes';
import { unavailable } from '../errors.ts';

export const SAML_METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
/** SAML 2.0 metadata schema: entityID is an anyURI of at most 1024 characters. */
export const MAX_ENTITY_ID_LENGTH = 1024;
/**
 * Deepest element nesting accepted. Real metadata nests about 7 levels (e.g.
 * EntityDescriptor/Signature/SignedInfo/Reference/Transforms/Transform/
 * InclusiveNamespaces); 64 leaves room for any extension while bounding the
 * prefix lookup to 64 steps per element.
 */
export const MAX_DEPTH = 64;

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
  let depth = 0;

  parser.on('doctype', () => refuse('contains a DOCTYPE; DTDs and entity declarations are not accepted'));
  // opentagstart comes before saxes resolves the element's prefixes: the walk never gets deeper than the limit.
  parser.on('opentagstart', () => {
    if (++depth > MAX_DEPTH) refuse(`nests elements more than ${MAX_DEPTH} levels deep`);
  });
  parser.on('closetag', () => depth--);
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

/**
 * Larger documents go to the worker thread. Measured worst case (64-deep
 * nesting, prefixed attributes) is about 200 ms per MiB, so 16 KiB costs the
 * event loop at most a few ms; real SP metadata (about 5 KB with two
 * certificates) stays here and never pays the worker round trip.
 */
export const IN_THREAD_MAX_BYTES = 16 * 1024;
/** A linear parse of 1 MiB takes well under a second; past this the document is refused. */
export const PARSE_TIMEOUT_MS = 5_000;
/** Documents waiting for the worker; past this a caller gets UNAVAILABLE (each holds up to maxBytes). */
export const MAX_WAITING = 16;

interface Job {
  bytes: Uint8Array;
  maxBytes: number;
  timeoutMs: number;
  timer?: NodeJS.Timeout;
  resolve(result: MetadataResult): void;
  reject(err: Error): void;
}

let worker: Worker | undefined;
let running: Job | undefined;
const waiting: Job[] = [];

/**
 * parseSamlMetadata, with documents over IN_THREAD_MAX_BYTES parsed in one
 * shared worker thread, one at a time, each refused if it takes longer than
 * timeoutMs.
 */
export async function parseSamlMetadataOffLoop(
  input: Uint8Array,
  options: { maxBytes: number; timeoutMs?: number },
): Promise<MetadataResult> {
  if (input.byteLength <= IN_THREAD_MAX_BYTES || input.byteLength > options.maxBytes) return parseSamlMetadata(input, options);
  if (waiting.length >= MAX_WAITING) throw unavailable('Too many SAML metadata documents are being parsed, try again');
  return new Promise((resolve, reject) => {
    waiting.push({ bytes: input, maxBytes: options.maxBytes, timeoutMs: options.timeoutMs ?? PARSE_TIMEOUT_MS, resolve, reject });
    startNext();
  });
}

function startNext(): void {
  if (running || waiting.length === 0) return;
  const job = (running = waiting.shift()!);
  worker ??= startWorker();
  // The worker is unref'd; this (ref'd) timer is what keeps the process alive while a parse is pending.
  job.timer = setTimeout(() => {
    dropWorker(); // the only way to stop a synchronous parse
    finish({ ok: false, reason: `took longer than ${job.timeoutMs} ms to parse` });
  }, job.timeoutMs);
  worker.postMessage({ bytes: job.bytes, maxBytes: job.maxBytes });
}

function finish(outcome: MetadataResult | Error): void {
  const job = running!;
  running = undefined;
  clearTimeout(job.timer);
  if (outcome instanceof Error) job.reject(outcome);
  else job.resolve(outcome);
  startNext();
}

function dropWorker(): void {
  void worker?.terminate();
  worker = undefined;
}

function startWorker(): Worker {
  // tsx and vitest run this file as .ts (Node strips the worker's types), the build as .js.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const w = new Worker(new URL(`./saml-metadata-worker${extension}`, import.meta.url));
  // Events of a worker already dropped (timed out) are ignored.
  w.on('message', (result: MetadataResult) => {
    if (worker === w && running) finish(result);
  });
  w.on('error', (err) => {
    if (worker !== w) return;
    dropWorker();
    if (running) finish(err);
  });
  w.on('exit', (code) => {
    if (worker !== w) return;
    worker = undefined;
    if (running) finish(new Error(`the SAML metadata parser exited with code ${code}`));
  });
  w.unref(); // after on('message'), which refs the worker's port again
  return w;
}
