// SAML metadata parsing on real-looking documents: the entityID comes out of
// an SP EntityDescriptor whatever its prefix; DTDs, entity tricks and anything
// that is not one EntityDescriptor of the SAML 2.0 metadata namespace are refused.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSamlMetadata, SAML_METADATA_NS } from '../src/model/saml-metadata.ts';

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
    expect(elapsed).toBeLessThan(100);
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
    expect(refusedFor(`<md:SPSSODescriptor xmlns:md="${SAML_METADATA_NS}" protocolSupportEnumeration="x"/>`)).toMatch(/root element md:SPSSODescriptor/);
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
    expect(refusedFor(`<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="a"/><md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="b"/>`)).toMatch(
      /not well-formed/,
    );
  });

  it('a declared encoding other than UTF-8, ASCII or ISO-8859-1; a BOM and a declared ISO-8859-1 are fine', () => {
    const body = `<md:EntityDescriptor xmlns:md="${SAML_METADATA_NS}" entityID="https://caf\u00e9.example/sp"/>`;
    expect(refusedFor(`<?xml version="1.0" encoding="Shift_JIS"?>${body}`)).toMatch(/unsupported encoding shift_jis/);
    expect(parse(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]))).toEqual({ ok: true, entityId: 'https://caf\u00e9.example/sp' });
    expect(parse(Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${body}`, 'latin1'))).toEqual({ ok: true, entityId: 'https://caf\u00e9.example/sp' });
  });
});
