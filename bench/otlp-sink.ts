// Where the "tracing on" bench rows export their spans: the real collector (Jaeger v2, as the
// tracing test uses it) when scripts/install-jaeger.sh has built it, else a tiny HTTP sink that
// accepts OTLP POSTs and drops them (the gateway's cost is then the SDK's and the export's, not
// a collector's; BENCH_OTLP_SINK=http picks it even with Jaeger built, to tell the gateway's cost
// from the collector's CPU on the same cores). Either way on loopback; the row's log line says which.
import { createServer } from 'node:http';
import { findJaegerBinary, startJaeger } from '../test/support/jaeger.ts';

export interface OtlpSink {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  endpoint: string;
  kind: 'jaeger' | 'http sink';
  stop(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const bin = findJaegerBinary();
  if (bin && process.env.BENCH_OTLP_SINK !== 'http') {
    const jaeger = await startJaeger(bin);
    return { endpoint: jaeger.otlpEndpoint, kind: 'jaeger', stop: () => jaeger.stop() };
  }
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    kind: 'http sink',
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
