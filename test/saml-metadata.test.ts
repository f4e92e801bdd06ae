// SAML metadata parsing on real-looking documents: the entityID comes out of
// an SP EntityDescriptor whatever its prefix; DTDs, entity tricks and anything
// that is not one EntityDescriptor of the SAML 2.0 metadata namespace are refused.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.ts';
import { MAX_WAITING, parseSamlMetadata, parseSamlMetadataOffLoop, SAML_METADATA_NS } from '../src/model/saml-metadata.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/saml/${name}`, import.meta.url));
const parse = (doc: string | Buffer, maxBytes = 1024 * 1024) =>
  parseSamlMetadata(typeof doc === 'string' ? Buffer.from(doc) : doc, { maxBytes });
const refusedFor = (doc: string | Buffer, maxBytes?: number) => {
  const r = parse(doc, maxBytes);
  if (r.ok) throw new Error(`accepted with entityID ${r.entityId}`);
  return r.reason;
};

describe('parseSamlMetadata on the fixtures', () => {
  it('reads the entityID of an SP EntityDescriptor with signing and encryption keys', () => {
    const doc = fixture('sp-entity-descriptor.xml');
    expect(doc.toString()).toContain('<md:KeyDescriptor use="encryption">');
    expect(doc.toString()).toMatch(/<ds:X509Certificate>\s+MII/);
    expect(parse(doc)).toEqual({ ok: true, entityId: 'https://sp.example.com/saml/metadata' });
  });

  it('reads the entityID whatever the prefix of the metadata namespace, or with it as the default namespace', () => {
    expect(parse(fixture('sp-prefixed.xml'))).toEqual({ ok: true, entityId: 'urn:example:sp:payroll' });
    expect(parse(fixture('sp-default-namespace.xml'))).toEqual({ ok: true, entityId: 'https://wiki.example.net/sp' });
  });

  it('refuses an EntitiesDescriptor (an aggregate) with a reason that says so', () => {
    expect(refusedFor(fixture('entities-descriptor.xml'))).toMatch(/EntitiesDescriptor/);
  });

  it('refuses a document with a DOCTYPE, even a harmless internal entity', () => {
    expect(refusedFor(fixture('doctype.xml'))).toMatch(/DOCTYPE/);
  });

  it('refuses a billion-laughs document at once, without expanding anything', () => {
    const doc = fixture('billion-laughs.xml');
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const reason = refusedFor(doc);
    const elapsed = performance.now() - started;
    expect(reason).toMatch(/DOCTYPE/);
    expect(reason).not.toContain('lol');
    expect(elapsed, 'no expansion (its heap, below, is the sharper check)').toBeLessThan(2_000);
    // Expanded, &lol9; is 3 GB; refused, the parse costs almost nothing.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(20 * 1024 * 1024);
  });

  it('refuses an external entity (SYSTEM "file:///etc/passwd") and never reads the file', () => {
    const reason = refusedFor(fixture('external-entity.xml'));
    expect(reason).toMatch(/DOCTYPE/);
    expect(reason).not.toContain('root:');
  });

  it('refuses an entity reference used without any DTD: no entity is ever defined', () => {
    const doc = `<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="https://a.example/&xxe;"/>`;
    expect(refusedFor(doc)).toMatch(/not well-formed/);
  });
});

describe('parseSamlMetadata refuses what is not one SAML EntityDescriptor', () => {
  it('text that is not XML', () => {
    expect(refusedFor('this is not XML at all')).toMatch(/not well-formed XML/);
    expect(refusedFor('{"entityID":"https://sp.example.com"}')).toMatch(/not well-formed XML/);
  });

  it('an empty document, and bytes that are not UTF-8', () => {
    expect(refusedFor('')).toMatch(/empty/);
    expect(refusedFor(Buffer.from([0x3c, 0x61, 0xff, 0xfe, 0x3e]))).toMatch(/UTF-8/);
  });

  it('a truncated document', () => {
    const doc = fixture('sp-entity-descriptor.xml');
    expect(refusedFor(doc.subarray(0, doc.length - 40))).toMatch(/not well-formed/);
  });

  it('another root element', () => {
    expect(refusedFor(`<md:SPSSODescriptor xmlns:md="${SAML_METADATA_NS}" protocolSupportEnumeration="x"/>`)).toMatch(
      /root element md:SPSSODescriptor/,
    );
    expect(refusedFor('<html><body>Login</body></html>')).toMatch(/root element html/);
  });

  it('an EntityDescriptor in another namespace, or in none', () => {
    expect(refusedFor('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:1.0:metadata" entityID="https://a.example"/>')).toMatch(
      /namespace "urn:oasis:names:tc:SAML:1\.0:metadata"/,
    );
    expect(refusedFor('<EntityDescriptor entityID="https://a.example"/>')).toMatch(/namespace ""/);
  });

  it('an unbound prefix', () => {
    expect(refusedFor('<md:EntityDescriptor entityID="https://a.example"/>')).toMatch(/unbound namespace prefix/);
  });

  it('a missing, blank, or namespaced-only entityID', () => {
    expect(refusedFor(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}"/>`)).toMatch(/no entityID/);
    expect(refusedFor(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID=" \t "/>`)).toMatch(/no entityID/);
    expect(refusedFor(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" md:entityID="https://a.example"/>`)).toMatch(/no entityID/);
  });

  it('an entityID over 1024 characters (the SAML schema limit); 1024 passes', () => {
    const at = `https://a.example/${'x'.repeat(1024 - 18)}`;
    expect(parse(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="${at}"/>`)).toEqual({ ok: true, entityId: at });
    expect(refusedFor(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="${at}y"/>`)).toMatch(/longer than 1024/);
  });

  it('a document over the size cap, before parsing it', () => {
    const doc = fixture('sp-entity-descriptor.xml');
    expect(parse(doc, doc.length).ok).toBe(true);
    expect(refusedFor(doc, doc.length - 1)).toMatch(new RegExp(`larger than ${doc.length - 1} bytes`));
  });

  it('a second root element after the EntityDescriptor', () => {
    expect(
      refusedFor(
        `<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="a"/><md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="b"/>`,
      ),
    ).toMatch(/not well-formed/);
  });

  it('a declared encoding other than UTF-8, ASCII or ISO-8859-1; a BOM and a declared ISO-8859-1 are fine', () => {
    const body = `<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="https://caf\u00e9.example/sp"/>`;
    expect(refusedFor(`<?xml version="1.0" encoding="Shift_JIS"?>${body}`)).toMatch(/unsupported encoding shift_jis/);
    expect(parse(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]))).toEqual({
      ok: true,
      entityId: 'https://caf\u00e9.example/sp',
    });
    expect(parse(Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${body}`, 'latin1'))).toEqual({
      ok: true,
      entityId: 'https://caf\u00e9.example/sp',
    });
  });
});

const entity = (inner: string, entityId = 'https://big.example/sp') =>
  `<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="${entityId}">${inner}</md:EntityDescriptor>`;
/** `levels` elements nested inside the root EntityDescriptor. */
const nested = (levels: number) => entity('<a>'.repeat(levels) + '</a>'.repeat(levels));
/** Legal depth, wide content: an Extensions element with many children, about `bytes` long. */
const wide = (bytes: number, entityId?: string) => {
  const item = '<x:Item xmlns:x="urn:example:x" n="1">some text</x:Item>';
  return entity(`<md:Extensions>${item.repeat(Math.floor((bytes - 200) / item.length))}</md:Extensions>`, entityId);
};
const MiB = 1024 * 1024;

describe('parseSamlMetadata on deep or large documents: linear, off the event loop', () => {
  it('refuses elements nested more than 64 levels deep, at once; 64 levels pass', () => {
    expect(parse(nested(63))).toEqual({ ok: true, entityId: 'https://big.example/sp' });
    expect(refusedFor(nested(64))).toMatch(/more than 64 levels deep/);
    const doc = nested(100_000);
    expect(doc.length).toBeLessThan(MiB);
    const started = performance.now();
    expect(refusedFor(doc)).toMatch(/more than 64 levels deep/);
    expect(performance.now() - started, 'cut at level 65, not read to the end').toBeLessThan(5_000);
  });

  it('reads the entityID of a ~1 MiB document of legal depth, in the thread and through the worker', async () => {
    const doc = Buffer.from(wide(MiB));
    expect(doc.length).toBeGreaterThan(MiB - 256);
    expect(parse(doc)).toEqual({ ok: true, entityId: 'https://big.example/sp' });
    expect(await parseSamlMetadataOffLoop(doc, { maxBytes: MiB })).toEqual({ ok: true, entityId: 'https://big.example/sp' });
  });

  it('the worker gives the same refusals: too deep, not well-formed, too large', async () => {
    const offLoop = (doc: string, maxBytes = MiB) => parseSamlMetadataOffLoop(Buffer.from(doc), { maxBytes });
    expect(await offLoop(nested(100_000))).toEqual({ ok: false, reason: 'nests elements more than 64 levels deep' });
    expect((await offLoop(wide(100_000).slice(0, -10))).ok).toBe(false);
    expect(await offLoop(wide(100_000), 50_000)).toEqual({ ok: false, reason: 'is larger than 50000 bytes' });
  });

  it('a parse over the timeout is refused, and the next document gets a fresh worker', async () => {
    const doc = Buffer.from(wide(MiB));
    expect(await parseSamlMetadataOffLoop(doc, { maxBytes: MiB, timeoutMs: 1 })).toEqual({
      ok: false,
      reason: 'took longer than 1 ms to parse',
    });
    expect(await parseSamlMetadataOffLoop(doc, { maxBytes: MiB })).toEqual({ ok: true, entityId: 'https://big.example/sp' });
  });

  it('a bounded queue: past MAX_WAITING documents waiting, UNAVAILABLE; the others are parsed', async () => {
    const docs = Array.from({ length: MAX_WAITING + 2 }, (_, i) => Buffer.from(wide(20_000, `urn:queued:${i}`)));
    const results = await Promise.allSettled(docs.map((doc) => parseSamlMetadataOffLoop(doc, { maxBytes: MiB })));
    // one parsing, MAX_WAITING waiting, the last one refused
    expect(results.slice(0, -1).map((r) => r.status === 'fulfilled' && r.value)).toEqual(
      docs.slice(0, -1).map((_, i) => ({ ok: true, entityId: `urn:queued:${i}` })),
    );
    const last = results.at(-1)!;
    expect(last.status === 'rejected' && last.reason instanceof AppError && last.reason.code).toBe('UNAVAILABLE');
  });
});
