import { parsePhoneNumberFromString, isSupportedCountry, type CountryCode } from 'libphonenumber-js/max';

export interface PhoneOptions {
  /** ISO 3166 region for numbers written without a country code, e.g. 'CH'. */
  defaultRegion: string;
  /** Require a global number (RFC 3966): a leading '+' after trimming. */
  requireGlobal?: boolean;
}

// Digits and common separators only: libphonenumber-js would otherwise pull a
// number out of arbitrary text ("call +41 ...") or accept extensions.
const PHONE_CHARS = /^\+?[0-9\s\-.()/]+$/u;

/** The number in E.164 form, or null when it is not a valid phone number. */
export function normalizePhone(input: string, { defaultRegion, requireGlobal = false }: PhoneOptions): string | null {
  const s = input.trim();
  if (!PHONE_CHARS.test(s)) return null;
  if (requireGlobal && !s.startsWith('+')) return null;
  const region = isSupportedCountry(defaultRegion) ? (defaultRegion as CountryCode) : undefined;
  const parsed = parsePhoneNumberFromString(s, region);
  return parsed?.isValid() ? parsed.number : null;
}
