// What the HTTP edge knows about one request: made by the node handler (edge.ts) and handed
// to the face that serves the request (GraphQL files it under yoga's Request:
// src/graphql/request-state.ts; the wire API in its calls' context values), which adds what
// it learns (operation, root field, error codes) for the log line and the metrics. (No
// AsyncLocalStorage: its promise hooks cost about a fifth of the gateway's time per request
// on Node 20.)
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AppError } from '../errors.ts';

export interface RequestState {
  requestId: string;
  startedAt: bigint;
  /** Client address (X-Forwarded-For only as far as TRUST_PROXY allows). */
  ip: string;
  /** Set once the bearer token is checked: the verified `sub`, or null. */
  caller: string | null;
  /** A token was sent and is not valid (every operation answers UNAUTHENTICATED). */
  authError?: Error;
  authChecked: boolean;
  /** How the request came, as the face serving it names it: graphql, or the wire's grpc, grpc-web, grpc-web-text, connect, rest (for logs and metric labels). */
  protocol: string;
  operationName?: string;
  operationType?: 'query' | 'mutation' | 'subscription';
  /** The single root field executed, or 'multiple'; bounded by the schema, so fit for metric labels. */
  rootField?: string;
  /** The `code` of every error in the answer. */
  errorCodes: string[];
  /**
   * Set by the edge for a body of unknown length (chunked HTTP/1.1; HTTP/2 without
   * Content-Length, as every gRPC call): whoever reads the body passes each chunk's size
   * here before keeping it. null: go on; an AppError: stop reading and answer it (the
   * caller's body cap, or the client's or the process's budget of body bytes in flight).
   */
  meter?: (bytes: number) => AppError | null;
  /**
   * Set by the edge when it rate-limits the request: counts one more request of this caller (or
   * client address) in the same window, for a stream that carries several (server reflection:
   * src/wire/reflection.ts). The refusal (RESOURCE_EXHAUSTED with its RetryInfo), or null.
   */
  countAnother?: () => Promise<AppError | null>;
}

/** Client-chosen ids are kept when they are short and harmless in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestIdFrom(header: string | null | undefined): string {
  return header && REQUEST_ID.test(header) ? header : randomUUID();
}

/** `protocol`: the face's name for it, once the edge knows which face serves the request. */
export function newRequestState(requestId: string | null | undefined, ip: string, protocol = 'unknown'): RequestState {
  return {
    requestId: requestIdFrom(requestId),
    startedAt: process.hrtime.bigint(),
    ip,
    caller: null,
    authChecked: false,
    errorCodes: [],
    protocol,
  };
}

/**
 * The client address. Without trust in proxies it is the TCP peer. With `true`
 * it is the leftmost X-Forwarded-For entry (whatever the client claims: only for
 * a proxy that overwrites the header); with n it is the address n hops in from
 * the peer, i.e. the one the outermost of n trusted proxies saw.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean | number): string {
  const peer = normalizeIp(req.socket.remoteAddress ?? 'unknown');
  if (trustProxy === false) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (forwarded.length === 0) return peer;
  if (trustProxy === true) return normalizeIp(forwarded[0]!);
  const chain = [...forwarded, peer];
  return normalizeIp(chain[Math.max(0, chain.length - 1 - trustProxy)]!);
}

const normalizeIp = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip);
