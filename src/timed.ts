// Latency observation without a metrics library: what the stores, the code store and the
// rate limiter are wrapped in where they are opened (src/stores.ts). The observer is handed
// down by the server's wiring (src/http/metrics.ts makes it from prom-client), so nothing
// below the edge imports the edge to be measured.

/** Told of each call: its name, how long it took, whether it succeeded. */
export type Observe = (operation: string, seconds: number, ok: boolean) => void;

/**
 * The same object, with the named async methods timed. Everything else (other
 * methods, properties) passes through untouched.
 */
export function timed<T extends object>(target: T, methods: readonly (keyof T & string)[], observe: Observe): T {
  const wrapped = new Map<PropertyKey, unknown>();
  for (const name of methods) {
    const fn = target[name];
    if (typeof fn !== 'function') continue;
    wrapped.set(name, async (...args: unknown[]) => {
      const start = process.hrtime.bigint();
      let ok = false;
      try {
        const result = await (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        ok = true;
        return result;
      } finally {
        observe(name, Number(process.hrtime.bigint() - start) / 1e9, ok);
      }
    });
  }
  return new Proxy(target, { get: (t, p, r) => (wrapped.has(p) ? wrapped.get(p) : Reflect.get(t, p, r)) });
}
