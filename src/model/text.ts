// Text measures of input validation (src/commands/rules.ts). "chars" in ZITADEL's field limits are Unicode code points.

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

/**
 * Nothing a person can see: white space, the default-ignorable code points (zero-width space and
 * joiners, the Hangul fillers, U+180E, soft hyphen, BOM, …) and the blank Braille pattern.
 */
const INVISIBLE = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]*$/u;

/** True for '' and for text with nothing visible in it ("non-empty" means not blank). */
export function isBlank(s: string): boolean {
  return INVISIBLE.test(s);
}

/** The one case-folding every search, uniqueness key and store adapter uses (NFKC, lower case). */
export const fold = (s: string): string => s.normalize('NFKC').toLowerCase();
