// Verification-link templates with Go-template style placeholders: {{.UserID}}, {{ .Code }}, {{.OrgID}}.

export interface UrlTemplateValues {
  userId: string;
  code: string;
  orgId: string;
}

const FIELDS = { UserID: 'userId', Code: 'code', OrgID: 'orgId' } as const;
type Field = keyof typeof FIELDS;
type Part = string | { field: Field };

const SAMPLE: UrlTemplateValues = { userId: '100000000000000000', code: 'ABC123', orgId: '100000000000000001' };

type Parsed = { ok: true; parts: Part[] } | { ok: false; reason: string };

/** Longest piece of the template quoted in a reason: reasons never echo unbounded input. */
const QUOTED_MAX = 40;
const clip = (s: string) => (s.length > QUOTED_MAX ? `${s.slice(0, QUOTED_MAX)}…` : s);

function tokenize(t: string): Parsed {
  const parts: Part[] = [];
  let i = 0;
  while (i < t.length) {
    const open = t.indexOf('{{', i);
    const close = t.indexOf('}}', i);
    if (close >= 0 && (open < 0 || close < open)) return { ok: false, reason: `unexpected "}}" at position ${close}` };
    if (open < 0) {
      parts.push(t.slice(i));
      break;
    }
    if (open > i) parts.push(t.slice(i, open));
    const end = t.indexOf('}}', open + 2);
    const nested = t.indexOf('{{', open + 2);
    if (end < 0 || (nested >= 0 && nested < end)) return { ok: false, reason: `unclosed "{{" at position ${open}` };
    const inner = t.slice(open + 2, end);
    const m = /^\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(inner);
    if (!m) return { ok: false, reason: `unsupported action "{{${clip(inner)}}}"` };
    const name = m[1] ?? '';
    if (!Object.hasOwn(FIELDS, name)) {
      return { ok: false, reason: `unknown placeholder "{{${clip(inner)}}}", allowed are {{.UserID}}, {{.Code}} and {{.OrgID}}` };
    }
    parts.push({ field: name as Field });
    i = end + 2;
  }
  return { ok: true, parts };
}

function substitute(parts: Part[], values: UrlTemplateValues): string {
  return parts.map((p) => (typeof p === 'string' ? p : encodeURIComponent(values[FIELDS[p.field]]))).join('');
}

/** Checks the syntax and that the template renders to an absolute http(s) URL. */
export function parseUrlTemplate(t: string): { ok: true } | { ok: false; reason: string } {
  const parsed = tokenize(t);
  if (!parsed.ok) return parsed;
  const rendered = substitute(parsed.parts, SAMPLE);
  // URL() alone would also take 'https:///x' or leading spaces; require the plain form.
  if (!/^https?:\/\/[^/\\\s]/i.test(rendered)) return { ok: false, reason: 'must be an absolute http or https URL' };
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    return { ok: false, reason: 'must be an absolute http or https URL' };
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    return { ok: false, reason: 'must be an absolute http or https URL' };
  }
  return { ok: true };
}

/** Substitutes the URI-encoded values; throws on a template parseUrlTemplate rejects. */
export function renderUrlTemplate(t: string, values: UrlTemplateValues): string {
  const parsed = tokenize(t);
  if (!parsed.ok) throw new TypeError(`invalid URL template: ${parsed.reason}`);
  return substitute(parsed.parts, values);
}
