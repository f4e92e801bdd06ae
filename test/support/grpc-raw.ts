// Raw gRPC over node:http2 for the tests that send bad bytes (test/wire.bad-bytes.test.ts,
// test/wire.h2-findings.test.ts): the length prefix, request headers, and a stream's answer.
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';

/** A gRPC length-prefixed message header: flags 0, then the length as a 32-bit big-endian number. */
export const prefix = (length: number) => {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(length, 1);
  return b;
};

export interface Answer {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  body: Buffer;
  /** grpc-status from the trailers, or from the headers of a trailers-only answer. */
  grpcStatus: number | undefined;
}

/** Collects a stream's answer until it ends or closes. */
export function answerOf(stream: ClientHttp2Stream): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    const done = () => {
      const status = trailers['grpc-status'] ?? headers['grpc-status'];
      resolve({ headers, trailers, body: Buffer.concat(chunks), grpcStatus: status === undefined ? undefined : Number(status) });
    };
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', reject);
  });
}

/** Headers of a gRPC request to `path` with a bearer token. */
export const grpcRequestHeaders = (path: string, token: string, contentType = 'application/grpc') => ({
  ':method': 'POST',
  ':path': path,
  'content-type': contentType,
  te: 'trailers',
  authorization: `Bearer ${token}`,
});

/** One plain HTTP/2 request on an open session: its status and body as text. */
export const h2Request = (session: ClientHttp2Session, headers: Record<string, string>, body?: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const stream = session.request(headers);
    let text = '';
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (d) => (text += d));
    stream.on('end', () => resolve({ status, text }));
    stream.on('error', reject);
    stream.end(body);
  });
