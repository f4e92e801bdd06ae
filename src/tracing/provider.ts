// Registers OpenTelemetry's SDK when the configuration has an OTLP endpoint (src/config-tracing.ts):
// a tracer provider with a batch span processor and the OTLP/protobuf exporter, the async-hooks
// context manager (so a span started in a request is the parent of what the request awaits) and
// the W3C trace-context propagator. Without an endpoint this module is never loaded and the API
// keeps its no-op tracer. One provider per process: gateways started in the same process (tests,
// the bench) share it, and the last one to stop flushes and removes it.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config-tracing.ts';
import { setTracingOn } from './spans.ts';

export interface Tracing {
  /** Exports the spans still queued and stops (the last user of the provider unregisters it). */
  shutdown(): Promise<void>;
}

let shared: { provider: TracerProvider; users: number } | undefined;

function samplerOf(config: TracingConfig): Sampler {
  const root = (name: string): Sampler =>
    name.endsWith('always_off')
      ? new AlwaysOffSampler()
      : name.endsWith('traceidratio')
        ? new TraceIdRatioBasedSampler(config.ratio)
        : new AlwaysOnSampler();
  return config.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root: root(config.sampler) }) : root(config.sampler);
}

function register(config: TracingConfig): TracerProvider {
  const exporter = new OTLPTraceExporter({ url: config.url, headers: config.headers });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.scheduleDelayMs })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingOn(true);
  return provider;
}

export function startTracing(config: TracingConfig): Tracing {
  shared ??= { provider: register(config), users: 0 };
  shared.users++;
  const mine = shared;
  let stopped = false;
  return {
    async shutdown() {
      if (stopped) return;
      stopped = true;
      if (--mine.users > 0) return void (await mine.provider.forceFlush());
      if (shared === mine) shared = undefined;
      setTracingOn(false);
      await mine.provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
