// Dates and binaries inside event payloads and states, as JSON: tagged ({ $date: ISO string },
// { $binary: base64 }) so that they come back as Date and Buffer (the SQLite store's rows,
// the old log's lines). Tagging and untagging walk the value themselves (returning it as it
// is when there is nothing to tag) so that JSON.stringify and JSON.parse run without a
// replacer or reviver function, which would take them off their fast paths.

export function mapDeep(value: unknown, leaf: (v: object) => unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const mapped = leaf(value);
  if (mapped !== value) return mapped;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const m = mapDeep(v, leaf);
      if (m !== v) (out ??= [...value])[i] = m;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    const m = mapDeep(v, leaf);
    if (m !== v) (out ??= { ...(value as Record<string, unknown>) })[key] = m;
  }
  return out ?? value;
}

export const tag = (v: object): unknown =>
  v instanceof Date ? { $date: v.toISOString() } : v instanceof Uint8Array ? { $binary: Buffer.from(v).toString('base64') } : v;

export function untag(v: object): unknown {
  const tagged = v as { $date?: unknown; $binary?: unknown };
  if (typeof tagged.$date === 'string' && Object.keys(v).length === 1) return new Date(tagged.$date);
  if (typeof tagged.$binary === 'string' && Object.keys(v).length === 1) return Buffer.from(tagged.$binary, 'base64');
  return v;
}
