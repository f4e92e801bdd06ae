// The node handler for the RPC paths: connect's router (gRPC, gRPC-web, Connect) over node's
// requests, as connect-node's adapter does, plus what the edge needs: a body of unknown length
// (every gRPC call: HTTP/2 sends no Content-Length) passes each chunk through the edge's
// meter before the router reads it, so it counts in the body budgets as it arrives. gRPC-web
// text (application/grpc-web-text), which connect does not serve, is rewritten into binary
// gRPC-web before the router and its answer back into text after (grpc-web-text.ts). A request
// message that would decode into far more objects than any legal one holds, or that does not
// decode, is refused before the router decodes it (request-limits.ts): JSON by the router's
// text decoder, binary by a scan of the body on its way to the router (request-scan.ts), which
// also decompresses compressed messages within the caller's cap.
// A gRPC or gRPC-web request in a grpc-encoding the router cannot decompress is answered here,
// UNIMPLEMENTED with grpc-accept-encoding in the answer's headers (connect puts the list in the
// trailers only, where gRPC's compression.md has a server send it as a header). So is a method
// or service the router does not have: UNIMPLEMENTED in the request's protocol (gRPC and gRPC-web
// trailers-only with HTTP 200, Connect 404 with its JSON error), as a gRPC server answers, where
// an HTTP 404 left grpc-js with "Received HTTP status code 404". Every grpc-message goes out as
// grpc-go writes it (grpc-message.ts).
import {
  Code,
  ConnectError,
  createConnectRouter,
  type ConnectRouter,
  type ConnectRouterOptions,
  type ContextValues,
} from '@connectrpc/connect';
import type { UniversalHandler } from '@connectrpc/connect/protocol';
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from '@connectrpc/connect-node';
import type { UniversalServerRequest } from '@connectrpc/connect/protocol';
import { bodyNeedsToken, bodyTooLarge, UNAUTHENTICATED_BODY_BYTES } from '../http/body-limit.ts';
import type { RequestState } from '../http/request-state.ts';
import type { Logger } from '../log.ts';
import { ACCEPTED_MESSAGE_ENCODINGS, unknownMessageEncoding } from './decode-errors.ts';
import { codeName, toConnectError } from './errors.ts';
import { grpcGoMessages } from './grpc-message.ts';
import { grpcWebTextRequest, grpcWebTextResponse, isGrpcWebText } from './grpc-web-text.ts';
import type { NodeRequest } from '../http/face.ts';
import type { NodeHandler } from './node-handler.ts';
import { rpcProtocolOf } from './paths.ts';
import { writeRpcError } from './refusal.ts';
import { guardedRouter } from './request-limits.ts';
import { scanRequest, type ScanOptions } from './request-scan.ts';
import { fastPathFits, mayBeSingleMessage, serveGrpcUnary, singleMessage, type GrpcUnaryOptions, type UnaryMethod } from './grpc-unary.ts';
import { metered, readWhole, replay } from './whole-body.ts';

export interface RpcAdapterOptions extends ConnectRouterOptions {
  routes(router: ConnectRouter): void;
  contextValues(state: RequestState | undefined): ContextValues;
  logger: Logger;
}

/** True for a gRPC or gRPC-web request (binary or text) whose grpc-encoding is not one the router decompresses. */
function unknownGrpcEncoding(req: NodeRequest): boolean {
  if (rpcProtocolOf(req.headers['content-type']) === 'connect') return false;
  const encoding = req.headers['grpc-encoding'];
  if (encoding === undefined || encoding === 'identity') return false;
  return !(ACCEPTED_MESSAGE_ENCODINGS as readonly string[]).includes(String(encoding));
}

/** grpc-go's words for a path it has no handler for: an unknown service, or an unknown method of a known one. */
function unknownMethod(path: string, services: ReadonlySet<string>): ConnectError {
  const [, service = '', method = ''] = /^\/([^/]*)\/?(.*)$/.exec(path) ?? [];
  const text = services.has(service) ? `unknown method ${method} for service ${service}` : `unknown service ${service}`;
  return new ConnectError(text, Code.Unimplemented);
}

export function createRpcAdapter(options: RpcAdapterOptions): NodeHandler {
  const { routes, contextValues, logger, ...routerOptions } = options;
  // connect's default when none is given.
  const readMaxBytes = routerOptions.readMaxBytes ?? 0xffffffff;
  const compressions = [compressionGzip, compressionBrotli];
  const unaryMethods = new Map<string, UnaryMethod>();
  const router = guardedRouter(createConnectRouter, { acceptCompression: compressions, ...routerOptions }, unaryMethods);
  routes(router);
  const fastOptions: GrpcUnaryOptions = {
    interceptors: routerOptions.interceptors ?? [],
    compressions,
    compressMinBytes: routerOptions.compressMinBytes ?? 1024,
  };
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  /** Decompressed messages count against the caller's cap, as the edge caps the bytes sent (64 KiB without a valid token). */
  const scanOptions = (state: RequestState | undefined): ScanOptions => {
    if (!state?.authChecked) return { readMaxBytes, compressions };
    const bytes = state.caller ? readMaxBytes : Math.min(UNAUTHENTICATED_BODY_BYTES, readMaxBytes);
    const refusal = () => toConnectError(state.caller ? bodyTooLarge(bytes) : bodyNeedsToken(state), logger, { method: 'edge' });
    return { readMaxBytes, compressions, cap: { bytes, refusal } };
  };
  const services = new Set(router.handlers.map((h) => h.service.typeName));
  return (req, res, state) => {
    const path = (req.url ?? '').split('?', 1)[0]!;
    const handler = handlers.get(path);
    if (!handler) {
      // Connect: 404, what a Connect server's mux answers for a path it has no handler for (and what
      // Connect clients read as unimplemented), with the error in its JSON too. A method of a served
      // service that is not implemented is connect's own answer: 501.
      const error = unknownMethod(path, services);
      state?.errorCodes.push(codeName(error));
      writeRpcError(req, res, error, {}, 404);
      return;
    }
    if (unknownGrpcEncoding(req)) {
      const error = unknownMessageEncoding();
      state?.errorCodes.push(codeName(error));
      writeRpcError(req, res, error, { 'grpc-accept-encoding': ACCEPTED_MESSAGE_ENCODINGS.join(',') });
      return;
    }
    const fast = unaryMethods.get(path);
    if (fast && fastPathFits(req, fast.method)) {
      readWhole(req, state?.meter, (chunks, size) => mayBeSingleMessage(chunks, size, readMaxBytes), logger)
        .then((read) => {
          if (read.kind === 'closed') return; // the client went before the end of its request: no one to answer
          const message = read.kind === 'whole' ? singleMessage(read.body, readMaxBytes) : undefined;
          if (message) return serveGrpcUnary(req, res, state, fast, message, fastOptions);
          viaRouter(req, res, state, handler, replay(req, read, state?.meter, logger));
        })
        .catch((reason: unknown) => {
          // Nothing above should throw; if it does, the stream ends rather than the process.
          logger.log('error', 'rpc handler failed', {
            requestId: state?.requestId ?? null,
            method: `${fast.method.parent.typeName}/${fast.method.name}`,
            error: String((reason as Error)?.message ?? reason),
          });
          res.destroy();
        });
      return;
    }
    viaRouter(req, res, state, handler);
  };

  /** connect's router serves the request; `body`: its bytes when something read them already (metered then). */
  function viaRouter(
    req: NodeRequest,
    res: Parameters<NodeHandler>[1],
    state: RequestState | undefined,
    handler: UniversalHandler,
    body?: AsyncIterable<Uint8Array>,
  ): void {
    let uReq: UniversalServerRequest = universalRequestFromNodeRequest(req as never, res as never, undefined, contextValues(state));
    if (body) uReq = { ...uReq, body };
    else if (state?.meter && typeof uReq.body === 'object' && uReq.body !== null && Symbol.asyncIterator in uReq.body) {
      uReq = { ...uReq, body: metered(uReq.body as AsyncIterable<Uint8Array>, state.meter, logger) };
    }
    // Metered above as it arrives (the text), decoded here for the router.
    const text = isGrpcWebText(uReq.header.get('content-type'));
    if (text) uReq = grpcWebTextRequest(uReq, readMaxBytes);
    uReq = scanRequest(uReq, handler.method.input, scanOptions(state));
    const protocol = rpcProtocolOf(req.headers['content-type']);
    handler(uReq)
      .then((uRes) => {
        const grpcGo = protocol === 'connect' ? uRes : grpcGoMessages(uRes, protocol === 'grpc' ? 'grpc' : 'grpc-web');
        return universalResponseToNodeResponse(text ? grpcWebTextResponse(grpcGo) : grpcGo, res as never);
      })
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        logger.log('error', 'rpc handler failed', {
          requestId: state?.requestId ?? null,
          method: `${handler.service.typeName}/${handler.method.name}`,
          error: String((reason as Error)?.message ?? reason),
        });
      });
  }
}
