// Starts tracing when the configuration asks for it. The SDK and the exporter are imported only
// then: a gateway without an OTLP endpoint loads none of them and keeps the API's no-op tracer.
import type { Config } from '../config.ts';

export interface TracingHandle {
  /** Exports what is queued and stops; nothing to do when tracing is off. */
  shutdown(): Promise<void>;
}

const OFF: TracingHandle = { shutdown: async () => {} };

export async function startTracingFor(config: Pick<Config, 'tracing'>): Promise<TracingHandle> {
  if (!config.tracing) return OFF;
  const { startTracing } = await import('./provider.ts');
  return startTracing(config.tracing);
}
