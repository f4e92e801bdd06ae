// What a state weighs, for the read budgets (ReadLimitError in src/errors.ts): about the
// length of its JSON. The SQLite store has that JSON at hand and uses its length; the other
// adapters estimate it from the decoded value with `weightOf`. Only strings can be large
// (a user's metadata values reach 500,000 characters), so the estimate counts them exactly
// and every other leaf as a few bytes.
export function weightOf(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 8;
  if (value instanceof Date) return 26;
  if (ArrayBuffer.isView(value)) return Math.ceil((value.byteLength * 4) / 3) + 16;
  let total = 2;
  if (Array.isArray(value)) {
    for (const item of value) total += weightOf(item) + 1;
    return total;
  }
  for (const [key, item] of Object.entries(value)) total += key.length + 4 + weightOf(item);
  return total;
}
