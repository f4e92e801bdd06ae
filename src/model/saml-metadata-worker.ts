// The worker thread behind parseSamlMetadataOffLoop: parses one document per
// message and answers its MetadataResult. Loaded by Node itself (not by tsx or
// vitest), so this file and what it imports use erasable TypeScript only.
import { parentPort } from 'node:worker_threads';
import { parseSamlMetadata } from './saml-metadata.ts';

parentPort!.on('message', ({ bytes, maxBytes }: { bytes: Uint8Array; maxBytes: number }) => {
  parentPort!.postMessage(parseSamlMetadata(bytes, { maxBytes }));
});
