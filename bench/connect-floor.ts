// The floor of the wire faces (connect-durable): bare connect-node serving one method,
// ManagementService/UpdateHumanProfile, whose implementation commits one row through the same
// worker and group commit as yoga-durable (durable-rows.ts) and answers its sequence. Served as
// the gateway serves its port (src/http/one-port.ts: an http1 and an http2 server on one port, the
// HTTP/2 preface sniffed), with node's default http2 settings: gRPC arrives over h2c, Connect over
// HTTP/1.1. No token, permission, validation or log line: what the gateway adds on top of this is
// what separates its gRPC and Connect rows from these.
import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2Session } from 'node:http2';
import type { Server as NetServer } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { timestampNow } from '@bufbuild/protobuf/wkt';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { ObjectDetailsSchema } from '@zitadel/proto/zitadel/object_pb.js';
import { ManagementService, UpdateHumanProfileResponseSchema } from '@zitadel/proto/zitadel/management_pb.js';
import { createOnePortServer } from '../src/http/one-port.ts';
import type { DurableRows } from './durable-rows.ts';

export function connectFloor(rows: DurableRows): { server: NetServer; close: () => Promise<void> } {
  const rpc = connectNodeAdapter({
    routes(router) {
      router.rpc(ManagementService.method.updateHumanProfile, async (req) => {
        const seq = await rows.append(req.userId, JSON.stringify({ firstName: req.firstName, lastName: req.lastName }));
        return create(UpdateHumanProfileResponseSchema, {
          details: create(ObjectDetailsSchema, { sequence: BigInt(seq), changeDate: timestampNow() }),
        });
      });
    },
  });
  // GET /written?prefix=: the rows committed for ids starting with prefix, the bench's read-back.
  const http1 = createHttp1Server((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://floor');
    if (req.method !== 'GET' || url.pathname !== '/written') return rpc(req, res);
    rows.count(url.searchParams.get('prefix') ?? '').then((written) => {
      const body = JSON.stringify({ written });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  const http2 = createHttp2Server(rpc);
  const sessions = new Set<Http2Session>();
  http2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  const server = createOnePortServer(http1, http2);
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      http1.closeAllConnections();
      for (const session of sessions) session.destroy();
    });
  return { server, close };
}
