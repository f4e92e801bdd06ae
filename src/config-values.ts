// How a setting's text becomes a value (src/config.ts, src/config-upstream.ts): a typo stops the
// start naming the variable, instead of becoming a default or NaN.

export type Env = Record<string, string | undefined>;

/** Node's timers take at most this many ms; a longer delay fires after 1 ms (so *_MS settings stop here). */
const TIMER_MAX_MS = 2_147_483_647;
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * A setting that must be a whole number (digits only, surrounding blanks ignored) in min..max when set:
 * a typo or an out-of-range value stops the start, naming the variable, instead of becoming NaN (which
 * turns limits off), a truncated number ("12abc") or a late error that does not say which setting.
 */
export function wholeNumber(name: string, v: string | undefined, d: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined || v === '') return d;
  if (!/^\d+$/.test(v.trim())) throw new Error(`${name}: "${v}" is not a whole number`);
  const n = Number(v.trim());
  if (n < min || n > max) {
    throw new Error(`${name}: "${v}" is out of range: ${max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`}`);
  }
  return n;
}
/** A duration in ms: a whole number up to what Node's timers take. */
export const ms = (name: string, v: string | undefined, d: number, min = 0) => wholeNumber(name, v, d, min, TIMER_MAX_MS);
/** A yes/no setting: true/false, 1/0, yes/no, on/off (any case); anything else stops the start. */
export function bool(name: string, v: string | undefined, d: boolean): boolean {
  if (v === undefined || v === '') return d;
  const t = v.trim().toLowerCase();
  if (TRUE.has(t)) return true;
  if (FALSE.has(t)) return false;
  throw new Error(`${name}: "${v}" is not a boolean (true/false, 1/0, yes/no, on/off)`);
}
