// Text rules shared by input validation. SPEC.md "chars" are Unicode code points.
import type { FieldViolation } from '../errors.ts';

/** Length in Unicode code points; a lone surrogate counts as one. */
export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** True for '' and strings of only white space (\s covers Unicode spaces such as U+00A0, U+2003, U+3000, U+FEFF). */
export function isBlank(s: string): boolean {
  return /^\s*$/u.test(s);
}

export interface TextRule {
  /** Maximum length in code points. */
  max?: number;
  /** Minimum length in code points (after the blank check). */
  min?: number;
  /** Not blank. */
  required?: boolean;
}

/** The violation of a text rule, or undefined; an absent value passes unless required. */
export function checkText(field: string, value: string | null | undefined, rule: TextRule): FieldViolation | undefined {
  if (value === null || value === undefined || isBlank(value)) {
    return rule.required ? { field, description: 'must not be empty' } : undefined;
  }
  const n = codePoints(value);
  if (rule.max !== undefined && n > rule.max) {
    return { field, description: `must be at most ${rule.max} characters` };
  }
  if (rule.min !== undefined && n < rule.min) {
    return { field, description: `must be at least ${rule.min} characters` };
  }
  return undefined;
}

/** Runs every check and keeps the violations, so an invalid input lists all its problems. */
export function violations(...checks: Array<FieldViolation | FieldViolation[] | undefined>): FieldViolation[] {
  return checks.flatMap((c) => (c === undefined ? [] : c));
}
