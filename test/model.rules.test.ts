import { describe, expect, it } from 'vitest';
import { codePoints, isBlank } from '../src/model/text.ts';
import { normalizePhone } from '../src/model/phone.ts';
import { isValidEmail } from '../src/model/email.ts';
import { parseUrlTemplate, renderUrlTemplate } from '../src/model/url-template.ts';
import { createIdGenerator, idTimestamp } from '../src/model/ids.ts';

describe('text', () => {
  it('counts code points, not UTF-16 units', () => {
    const emoji = '😀'.repeat(200);
    expect(emoji.length).toBe(400);
    expect(codePoints(emoji)).toBe(200);
    expect(codePoints('abc')).toBe(3);
    expect(codePoints('')).toBe(0);
    expect(codePoints('a\uD800b')).toBe(3); // a lone surrogate counts as one
  });

  it('treats Unicode white space as blank', () => {
    expect(isBlank('\u00a0\u2003')).toBe(true);
    expect(isBlank(' \t\n\u3000')).toBe(true);
    expect(isBlank('')).toBe(true);
    expect(isBlank(' a ')).toBe(false);
  });

  it('treats text with nothing visible as blank: zero-width and other invisible characters', () => {
    // U+200B zero-width space, U+200D joiner, U+180E Mongolian vowel separator, U+3164 Hangul
    // filler, U+2800 blank Braille pattern, U+00AD soft hyphen, U+FEFF BOM, U+2060 word joiner.
    for (const invisible of ['\u200b', '\u200d', '\u180e', '\u3164', '\u2800', '\u00ad', '\ufeff', '\u2060', ' \u200b\u3164 ']) {
      expect(isBlank(invisible), JSON.stringify(invisible)).toBe(true);
    }
    for (const visible of ['\u200bA', 'a\u00ad', '\u3164\uAC00', '·', '_']) expect(isBlank(visible), JSON.stringify(visible)).toBe(false);
  });
});

describe('phone', () => {
  const ch = { defaultRegion: 'CH' };
  it('normalizes to E.164', () => {
    expect(normalizePhone('+41 79 123 45 67', ch)).toBe('+41791234567');
    expect(normalizePhone(' +41-79.123 (45) 67 ', ch)).toBe('+41791234567');
    expect(normalizePhone('079 123 45 67', { ...ch, requireGlobal: false })).toBe('+41791234567');
    expect(normalizePhone('+1 (201) 555-0123', { ...ch, requireGlobal: true })).toBe('+12015550123');
  });

  it('requires a leading + for global numbers', () => {
    expect(normalizePhone('079 123 45 67', { ...ch, requireGlobal: true })).toBeNull();
    expect(normalizePhone('0041 79 123 45 67', { ...ch, requireGlobal: true })).toBeNull();
  });

  it('rejects unparsable or invalid numbers', () => {
    for (const s of ['abc', '+1', '', '   ', '+41 00 123 45 67', 'call +41 79 123 45 67', '+41 79 123 45 67 ext. 1']) {
      expect(normalizePhone(s, ch), s).toBeNull();
    }
  });
});

describe('email', () => {
  it('accepts well-formed addresses without changing case', () => {
    for (const s of ['a@b.ch', 'first.last+tag@sub.example.com', 'Ä@bücher.de', 'Mixed.Case@Example.COM', '"a b"@c.ch']) {
      expect(isValidEmail(s), s).toBe(true);
    }
  });

  it('rejects malformed addresses', () => {
    const long = 'x'.repeat(65);
    for (const s of [
      'a',
      'a@',
      '@b.ch',
      'a@b',
      'a b@c.ch',
      'a@-b.ch',
      'a@b..ch',
      'a@b@c.ch',
      '.a@b.ch',
      'a..b@c.ch',
      'a@b.123',
      'a@1.2.3.4',
      `${long}@b.ch`,
      `a@${'b'.repeat(64)}.ch`,
      'a@xn--zz.ch',
      'a\u0001@b.ch',
    ]) {
      expect(isValidEmail(s), s).toBe(false);
    }
  });
});

describe('url template', () => {
  const good = 'https://id.example.com/verify?userID={{.UserID}}&code={{ .Code }}&orgID={{.OrgID}}';

  it('accepts the known placeholders', () => {
    expect(parseUrlTemplate(good)).toEqual({ ok: true });
    expect(parseUrlTemplate('http://localhost:4000/v')).toEqual({ ok: true });
  });

  it('rejects unknown placeholders, unclosed or stray braces', () => {
    const unknown = parseUrlTemplate('https://x.ch/?a={{.Foo}}');
    expect(unknown).toMatchObject({ ok: false, reason: expect.stringContaining('unknown placeholder') });
    expect(parseUrlTemplate('https://x.ch/?a={{.Code')).toMatchObject({ ok: false, reason: expect.stringContaining('unclosed') });
    expect(parseUrlTemplate('https://x.ch/?a={{.Code {{.UserID}}')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('unclosed'),
    });
    expect(parseUrlTemplate('https://x.ch/?a=.Code}}')).toMatchObject({ ok: false, reason: expect.stringContaining('"}}"') });
  });

  it('requires an absolute http(s) URL', () => {
    for (const t of ['/verify?code={{.Code}}', 'ftp://x.ch/{{.Code}}', 'not a url {{.Code}}', '{{.Code}}', 'https:///x']) {
      expect(parseUrlTemplate(t), t).toMatchObject({ ok: false, reason: expect.stringContaining('http') });
    }
  });

  it('renders URI-encoded values', () => {
    expect(renderUrlTemplate(good, { userId: '123', code: 'A&B C', orgId: 'ö/?' })).toBe(
      'https://id.example.com/verify?userID=123&code=A%26B%20C&orgID=%C3%B6%2F%3F',
    );
    expect(() => renderUrlTemplate('{{.Foo}}', { userId: '', code: '', orgId: '' })).toThrow(/unknown placeholder/);
  });
});

describe('ids', () => {
  it('are unique numeric strings in generation order', () => {
    const gen = createIdGenerator();
    const ids = Array.from({ length: 10_000 }, () => gen.next());
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[0-9]+$/.test(id))).toBe(true);
    const big = ids.map(BigInt);
    const sorted = [...big].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(sorted).toEqual(big);
    expect(Math.abs(idTimestamp(ids[0]!).getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('do not collide across node ids', () => {
    const a = createIdGenerator({ nodeId: 1 });
    const b = createIdGenerator({ nodeId: 2 });
    const all = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      all.add(a.next());
      all.add(b.next());
    }
    expect(all.size).toBe(20_000);
  });

  it('stay ordered when the clock steps back and when a millisecond runs out of sequence', () => {
    let t = Date.UTC(2030, 0, 1);
    const gen = createIdGenerator({ nodeId: 7, now: () => t });
    const first = BigInt(gen.next());
    t -= 5_000;
    const ids = Array.from({ length: 5_000 }, () => BigInt(gen.next()));
    expect(ids[0]! > first).toBe(true);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(() => createIdGenerator({ nodeId: 1024 })).toThrow(RangeError);
  });
});
