// A local HTTP server that plays the SMS webhook provider: it records every
// POST (headers and JSON body) and answers with the status the test sets.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInbox } from './inbox.ts';

export interface SmsRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: { to?: string; text?: string } & Record<string, unknown>;
  /** What the provider answered. */
  status: number;
}

export interface SmsProvider {
  url: string;
  requests: SmsRequest[];
  /** Status of the next answers (200 by default); every request is recorded with the status it got. */
  status: number;
  waitFor(match: (r: SmsRequest) => boolean, timeoutMs?: number): Promise<SmsRequest>;
  close(): Promise<void>;
}

export async function startSmsProvider(): Promise<SmsProvider> {
  const inbox = createInbox<SmsRequest>();
  const provider: SmsProvider = {
    url: '',
    requests: inbox.items,
    status: 200,
    waitFor: (match, timeoutMs = 15_000) => inbox.waitFor(match, timeoutMs, (all) => `${all.length} SMS`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: SmsRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // recorded as empty
      }
      const status = provider.status;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: status < 300 }));
      inbox.add({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, status });
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return provider;
}
