// Building blocks for input rules: lengths in code points, "non-empty" meaning not blank (nothing visible).
import { z } from 'zod';
import { base64ByteLength, isStandardBase64 } from '../model/base64.ts';
import { codePoints, isBlank as blank } from '../model/text.ts';

/**
 * C0 and C1 controls and DEL, line and paragraph separators, and the bidi
 * embedding, override and isolate controls (text that displays as another).
 */
const CONTROL = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

interface TextOptions {
  /** Rejects blank values. */
  required?: boolean;
  /** A name shown to people (names, usernames): no control characters. */
  name?: boolean;
}

/**
 * A string of at most `max` code points, always well-formed Unicode: a lone
 * surrogate cannot be stored faithfully (MongoDB hands it back as U+FFFD).
 */
export function text(max: number, { required = false, name = false }: TextOptions = {}) {
  let schema = z
    .string()
    .refine((s) => s.isWellFormed(), { message: 'must be well-formed Unicode (it holds a lone surrogate)', abort: true })
    .refine((s) => codePoints(s) <= max, { message: `must be at most ${max} characters` });
  if (required) schema = schema.refine((s) => !blank(s), { message: 'must not be empty' });
  // A blank value is already 'must not be empty' (or allowed): one violation per field.
  if (name) schema = schema.refine((s) => blank(s) || !CONTROL.test(s), { message: 'must not contain control characters' });
  return schema;
}

/** Optional text: absent or null is fine; given, it follows text(). */
export const optionalText = (max: number, opts?: TextOptions) => text(max, opts).nullish();

/** Standard base64 decoding to 1..max bytes. */
export function base64Bytes(max: number) {
  return z
    .string()
    .refine(isStandardBase64, { message: 'must be standard base64', abort: true })
    .refine(
      (s) => {
        const bytes = base64ByteLength(s);
        return bytes >= 1 && bytes <= max;
      },
      { message: `must decode to 1 to ${max} bytes` },
    );
}

export const gender = z.enum(['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE']);

/** Counts the given ones of several mutually exclusive options; `false` counts as absent. */
export const countGiven = (...values: unknown[]) => values.filter((v) => v !== undefined && v !== null && v !== false).length;
