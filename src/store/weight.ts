// What a state weighs, for the read budget (src/commands/context.ts): about the length of
// its JSON. The SQLite store stops reads by that length itself, having the JSON at hand; the
// other adapters, and the budget's count of what was read, use `weightOf`, which never says
// more than the JSON's length (so a read the SQLite store let through is never counted past
// its budget). Only strings can be large (a user's metadata values reach 500,000
// characters): they count exactly, every other leaf as little as its JSON can be.
export function weightOf(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return 1;
  if (value instanceof Date) return 26;
  if (ArrayBuffer.isView(value)) return Math.ceil((value.byteLength * 4) / 3);
  let total = 1;
  if (Array.isArray(value)) {
    for (const item of value) total += weightOf(item) + 1;
    return total;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) total += key.length + 4 + weightOf(item); // JSON leaves undefined out
  }
  return total;
}

const weighed = new WeakMap<object, number>();

/** What a store knows a state weighs (the SQLite store: its JSON's length), so that nobody works it out again. */
export function noteWeight(state: unknown, bytes: number): void {
  if (state !== null && typeof state === 'object') weighed.set(state, bytes);
}

/** weightOf a snapshot's state, worked out once per state object (committed states are shared and frozen). */
export function snapshotWeight(snapshot: { state: unknown }): number {
  const state = snapshot.state;
  if (state === null || typeof state !== 'object') return weightOf(state);
  let weight = weighed.get(state);
  if (weight === undefined) weighed.set(state, (weight = weightOf(state)));
  return weight;
}
