// A real OpenTelemetry collector for the tracing tests and the bench: Jaeger v2 (the collector
// with Jaeger's memory store), built by scripts/install-jaeger.sh. Started per suite on free
// loopback ports (OTLP/HTTP receiver, query API, and its gRPC query port so that no default port
// is taken), stopped by the suite. Traces are read back from the query API (/api/traces/{id}).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { findBinary, freePort } from './servers-start.ts';

/** jaeger on PATH, JAEGER_BIN, or where scripts/install-jaeger.sh puts it; empty when not found. */
export function findJaegerBinary(): string {
  const home = process.env.HOME ?? '/root';
  return (
    findBinary('jaeger', [
      ...(process.env.JAEGER_BIN ? [process.env.JAEGER_BIN] : []),
      join(home, 'go/bin/jaeger'),
      '/root/go/bin/jaeger',
      ...(process.env.GOPATH ? process.env.GOPATH.split(delimiter).map((p) => join(p, 'bin/jaeger')) : []),
    ]) ?? ''
  );
}

/** A span as Jaeger's query API answers it (its v1 JSON). */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; type: string; value: unknown }[];
  logs: { timestamp: number; fields: { key: string; type: string; value: unknown }[] }[];
  processID: string;
}

export interface Jaeger {
  /** The OTLP/HTTP base URL: what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  otlpEndpoint: string;
  queryUrl: string;
  /** The spans of a trace so far (empty while Jaeger has none). */
  spans(traceId: string): Promise<JaegerSpan[]>;
  /** The spans of every trace Jaeger holds for a service, trace by trace. */
  traces(service: string): Promise<JaegerSpan[][]>;
  /** Polls (bounded) until the trace's spans satisfy `done`; the last spans seen otherwise, in the error. */
  waitFor(traceId: string, done: (spans: JaegerSpan[]) => boolean, timeoutMs?: number): Promise<JaegerSpan[]>;
  stop(): Promise<void>;
}

function config(otlpPort: number, queryPort: number, queryGrpcPort: number): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGrpcPort}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlpPort}
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

export async function startJaeger(bin: string, timeoutMs = 30_000): Promise<Jaeger> {
  const [otlpPort, queryPort, queryGrpcPort] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'jaeger-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, config(otlpPort, queryPort, queryGrpcPort));
  const child: ChildProcess = spawn(bin, ['--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-3000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const queryUrl = `http://127.0.0.1:${queryPort}`;
  const otlpEndpoint = `http://127.0.0.1:${otlpPort}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  // Ready: the query API answers, and the OTLP receiver takes a POST (an empty export).
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`jaeger exited with ${child.exitCode}: ${output.trim()}`);
    }
    if ((await answers(`${queryUrl}/api/services`)) && (await otlpAccepts(otlpEndpoint))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jaeger did not answer within ${timeoutMs} ms: ${output.trim()}`);
    }
    await sleep(100);
  }
  const spans = async (traceId: string): Promise<JaegerSpan[]> => {
    const res = await fetch(`${queryUrl}/api/traces/${traceId}`);
    if (res.status === 404) return [];
    const body = (await res.json()) as { data?: { spans: JaegerSpan[] }[] };
    return body.data?.flatMap((t) => t.spans) ?? [];
  };
  return {
    otlpEndpoint,
    queryUrl,
    spans,
    async traces(service) {
      const res = await fetch(`${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=10000&lookback=1h`);
      const body = (await res.json()) as { data?: { spans: JaegerSpan[] }[] };
      return body.data?.map((t) => t.spans) ?? [];
    },
    async waitFor(traceId, done, waitMs = 20_000) {
      const until = Date.now() + waitMs;
      let last: JaegerSpan[] = [];
      while (Date.now() < until) {
        last = await spans(traceId);
        if (done(last)) return last;
        await sleep(200);
      }
      throw new Error(`trace ${traceId} incomplete after ${waitMs} ms: ${JSON.stringify(last.map((s) => s.operationName))}`);
    },
    stop,
  };
}

async function otlpAccepts(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans":[]}',
      signal: AbortSignal.timeout(1000),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** A span's tag value by key (undefined when absent). */
export const tagOf = (span: JaegerSpan, key: string): unknown => span.tags.find((t) => t.key === key)?.value;
