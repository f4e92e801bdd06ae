// OpenTelemetry's standard variables, read with the rest of the configuration (the test and the
// bench hand the gateway an environment of their own, so the SDK's own reading of process.env
// would miss them). An OTLP endpoint turns tracing on; without one nothing is registered and
// every span call stays the API's no-op (src/tracing/).
import { ms, type Env } from './config-values.ts';

export type SamplerName =
  'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

export interface TracingConfig {
  /** Where spans are POSTed (OTLP over HTTP, protobuf): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS (key=value,…): a collector's credentials, never logged. */
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME (default identity-gateway). */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES (key=value,…), under the service name. */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER (default parentbased_always_on) and OTEL_TRACES_SAMPLER_ARG (the ratio, default 1). */
  sampler: SamplerName;
  ratio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: the batch span processor's delay between exports, in ms (default 5000). */
  scheduleDelayMs: number;
}

/** key=value pairs separated by commas, values percent-decoded (the OTel environment's format). */
function pairs(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (raw ?? '').split(',')) {
    if (!item.trim()) continue;
    const at = item.indexOf('=');
    if (at <= 0) throw new Error(`${name}: expected key=value pairs separated by commas`);
    try {
      out[decodeURIComponent(item.slice(0, at).trim())] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new Error(`${name}: a key or value is not percent-encoded correctly`);
    }
  }
  return out;
}

function endpoint(env: Env): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const [name, url] = traces
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
    : base
      ? ['OTEL_EXPORTER_OTLP_ENDPOINT', `${base.replace(/\/+$/, '')}/v1/traces`]
      : [];
  if (!name || !url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${name}: "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${name}: "${url}" must be http:// or https://`);
  return url;
}

function sampler(env: Env): { sampler: SamplerName; ratio: number } {
  const raw = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  const found = SAMPLERS.find((s) => s === raw);
  if (!found) throw new Error(`OTEL_TRACES_SAMPLER: "${raw}" is not supported (${SAMPLERS.join(', ')})`);
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : 1;
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new Error(`OTEL_TRACES_SAMPLER_ARG: "${arg}" is not a ratio between 0 and 1`);
  return { sampler: found, ratio };
}

/** The tracing settings, or null: no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. */
export function tracingConfig(env: Env): TracingConfig | null {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? 'otlp').trim().toLowerCase();
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER: "${exporter}" is not supported (otlp, none)`);
  const url = endpoint(env);
  if (!url) return null;
  return {
    url,
    headers: {
      ...pairs('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS),
      ...pairs('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'identity-gateway',
    resourceAttributes: pairs('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES),
    scheduleDelayMs: ms('OTEL_BSP_SCHEDULE_DELAY', env.OTEL_BSP_SCHEDULE_DELAY, 5000, 1),
    ...sampler(env),
  };
}
