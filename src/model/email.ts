// Pragmatic address form check (docs/graphql.md, HTTP: limits): local@domain, the domain a
// valid host name. Nothing is lower-cased; this only answers yes or no.
import { domainToASCII, domainToUnicode } from 'node:url';

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

// RFC 5322 atext, plus any non-ASCII character that is not a control, format or space character (RFC 6531).
const ATOM = "(?:[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~]|(?![\\p{C}\\p{Z}])[\\u{80}-\\u{10FFFF}])+";
const DOT_ATOM = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');
// Quoted local part: printable ASCII and space, with backslash escapes.
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// Non-ASCII domains may hold letters, marks and digits only; IDNA turns them into xn-- labels.
const IDN_CHARS = /^[A-Za-z0-9.\-\p{L}\p{M}\p{N}]+$/u;

export function isValidHostName(domain: string): boolean {
  if (!IDN_CHARS.test(domain)) return false;
  const ascii = /[^\x00-\x7f]/.test(domain) ? domainToASCII(domain) : domain;
  if (ascii === '' || ascii.length > 253) return false;
  const labels = ascii.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((l) => LABEL.test(l) && validPunycode(l))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1] ?? '');
}

/**
 * An xn-- label must decode to Unicode that encodes back to it. (Node 24's URL
 * parser no longer refuses a label like xn--zz; it leaves it as it is.)
 */
function validPunycode(label: string): boolean {
  if (!/^xn--/i.test(label)) return true;
  const unicode = domainToUnicode(label);
  return unicode !== '' && unicode.toLowerCase() !== label.toLowerCase() && domainToASCII(unicode) === label.toLowerCase();
}

export function isValidEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at < 0 || at !== s.lastIndexOf('@')) return false;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  if (local === '' || utf8Length(local) > 64) return false;
  if (!DOT_ATOM.test(local) && !QUOTED.test(local)) return false;
  return isValidHostName(domain);
}
