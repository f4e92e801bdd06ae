// Building blocks for input rules: lengths in code points, "non-empty" meaning not blank.
import { z } from 'zod';

const codePointLength = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
const blank = (s: string) => s.trim().length === 0;

/** A string of at most `max` code points; `required` also rejects blank values. */
export function text(max: number, { required = false } = {}) {
  let schema = z.string().refine((s) => codePointLength(s) <= max, { message: `must be at most ${max} characters` });
  if (required) schema = schema.refine((s) => !blank(s), { message: 'must not be empty' });
  return schema;
}

/** Optional text: absent or null is fine; given, it follows text(). */
export const optionalText = (max: number, opts?: { required?: boolean }) => text(max, opts).nullish();

/** At least `min` and at most `max` code points. */
export const sized = (min: number, max: number) =>
  z.string().refine((s) => {
    const n = codePointLength(s);
    return n >= min && n <= max;
  }, { message: `must be ${min} to ${max} characters` });

/** Standard base64 decoding to 1..max bytes. */
export function base64Bytes(max: number) {
  return z.string().refine((s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s), {
    message: 'must be standard base64',
  }).refine((s) => {
    const bytes = (s.length / 4) * 3 - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
    return bytes >= 1 && bytes <= max;
  }, { message: `must decode to 1 to ${max} bytes` });
}

export const gender = z.enum(['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE']);

/** Counts the given ones of several mutually exclusive options; `false` counts as absent. */
export const countGiven = (...values: unknown[]) => values.filter((v) => v !== undefined && v !== null && v !== false).length;
