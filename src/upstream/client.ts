// The calls to the upstream API: ZITADEL's own service clients (@zitadel/client) over one
// connect-node transport (gRPC or Connect, HTTP/2), one session pool for every call. Each call
// carries the caller's credentials (its Authorization header, and the organization header as
// x-zitadel-orgid), a deadline (ZITADEL_TIMEOUT_MS), and is counted by method and outcome. A read
// that meets UNAVAILABLE is sent once more; a write never is: a write the upstream may have run
// must not run twice behind the caller's back (a retry with the same Idempotency-Key is answered
// by the gateway's record, not sent again).
import { Code, ConnectError, type CallOptions, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { createAuthServiceClient, createManagementServiceClient } from '@zitadel/client/v1';
import { createOrganizationServiceClient, createUserServiceClient } from '@zitadel/client/v2';
import type { UpstreamConfig } from '../config-upstream.ts';
import { unavailable } from '../errors.ts';
import type { Logger } from '../log.ts';
import { fromUpstream, type FieldRenames } from './errors.ts';
import { injectTraceContext, inChildSpan, SpanKind } from '../tracing/spans.ts';

/** The caller's credentials, forwarded as they came. */
export interface Credentials {
  /** The Authorization header (Bearer …), or null. */
  authorization: string | null;
  /** The organization header (x-service-orgid or x-zitadel-orgid), forwarded as x-zitadel-orgid. */
  orgId: string | null;
}

export type UpstreamObserver = (method: string, code: string, seconds: number) => void;

export interface UpstreamClients {
  auth: ReturnType<typeof createAuthServiceClient>;
  management: ReturnType<typeof createManagementServiceClient>;
  users: ReturnType<typeof createUserServiceClient>;
  orgs: ReturnType<typeof createOrganizationServiceClient>;
}

export interface Upstream {
  clients: UpstreamClients;
  /**
   * One call: `send` gets the call options (headers, deadline, signal) and calls one method.
   * `read`: sent again once on UNAVAILABLE. `renames`: the wire's field names of the method's input.
   */
  call<T>(
    method: string,
    credentials: Credentials,
    send: (options: CallOptions) => Promise<T>,
    how?: { read?: boolean; renames?: FieldRenames },
  ): Promise<T>;
  /** Answers when the upstream does (ManagementService Healthz, no credentials), for /ready. */
  ping(): Promise<void>;
  close(): void;
}

/**
 * What connect-node throws when the connection fails under a call, as UNAVAILABLE (so a read is
 * sent again, and the caller is told to try again, not the transport's words or addresses): a
 * stream the dropped connection closed (node resets it with CANCEL: CANCELED), a socket reset or
 * destroyed (ECONNRESET, ERR_STREAM_DESTROYED, ERR_HTTP2_…: ABORTED or INTERNAL, the node error as
 * cause), a refused connection. An answer of the upstream has no node error as cause and keeps its
 * code (ZITADEL's ABORTED is a conflict); neither does an INTERNAL of another cause (a TLS error:
 * a configuration to fix, logged as INTERNAL). The gateway never cancels a call of its own (no
 * signal is passed), so a CANCELED is the connection's.
 */
function connectionFailure(err: unknown): unknown {
  if (!(err instanceof ConnectError)) return err;
  const nodeCode = err.cause instanceof Error ? (err.cause as { code?: unknown }).code : undefined;
  const connection = typeof nodeCode === 'string' && /^(E[A-Z]+|ERR_STREAM_\w+|ERR_HTTP2_\w+)$/.test(nodeCode);
  const failed =
    err.code === Code.Canceled ||
    (typeof nodeCode === 'string' && err.code === Code.Unavailable) ||
    (connection && (err.code === Code.Aborted || err.code === Code.Internal));
  return failed ? new ConnectError('The connection to the upstream failed, try again', Code.Unavailable, undefined, undefined, err) : err;
}

/** The largest answer read from the upstream: its reads are pages of at most 100 users (MAX_PAGE), so this bounds memory, not use. */
const READ_MAX_BYTES = 32 * 1024 * 1024;

export function createUpstream(config: UpstreamConfig, observe: UpstreamObserver = () => {}, logger?: Logger): Upstream {
  // One HTTP/2 session, reused by every call and kept alive by pings; the session's memory raised
  // from node's 10 MB default so that many concurrent answers do not fail as ENHANCE_YOUR_CALM.
  const sessionManager = new Http2SessionManager(
    config.url,
    { pingIntervalMs: 30_000, pingTimeoutMs: 10_000, idleConnectionTimeoutMs: 5 * 60_000 },
    { maxSessionMemory: 64, ...(config.ca ? { ca: config.ca } : {}) },
  );
  const options = {
    baseUrl: config.url,
    httpVersion: '2' as const,
    sessionManager,
    defaultTimeoutMs: config.timeoutMs,
    readMaxBytes: READ_MAX_BYTES,
  };
  const transport: Transport = config.transport === 'connect' ? createConnectTransport(options) : createGrpcTransport(options);
  const clients: UpstreamClients = {
    auth: createAuthServiceClient(transport),
    management: createManagementServiceClient(transport),
    users: createUserServiceClient(transport),
    orgs: createOrganizationServiceClient(transport),
  };

  const rpcSystem = config.transport === 'connect' ? 'connect_rpc' : 'grpc';
  // A client span per attempt (rpc.method only: never the credentials or the message), whose
  // traceparent goes along so the upstream continues the trace.
  const once = <T>(method: string, headers: Record<string, string>, send: (o: CallOptions) => Promise<T>): Promise<T> =>
    inChildSpan(`upstream ${method}`, SpanKind.CLIENT, { 'rpc.system': rpcSystem, 'rpc.method': method }, () => {
      const traced = { ...headers };
      injectTraceContext(traced);
      return attempt(method, traced, send);
    });
  const attempt = async <T>(method: string, headers: Record<string, string>, send: (o: CallOptions) => Promise<T>): Promise<T> => {
    const started = process.hrtime.bigint();
    let code = 'OK';
    try {
      return await send({ headers, timeoutMs: config.timeoutMs });
    } catch (thrown) {
      const err = connectionFailure(thrown);
      code = err instanceof ConnectError ? Code[err.code] : 'ERROR';
      // The client hears "the connection failed"; the operator reads why (no credential is in it).
      if (err !== thrown && thrown instanceof ConnectError)
        logger?.log('warn', 'upstream connection failed', {
          method,
          upstream: config.url,
          cause: String((thrown.cause as Error)?.message ?? thrown.rawMessage),
        });
      throw err;
    } finally {
      observe(method, code, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  return {
    clients,
    async call(method, credentials, send, how = {}) {
      const headers: Record<string, string> = {};
      if (credentials.authorization) headers.authorization = credentials.authorization;
      if (credentials.orgId) headers['x-zitadel-orgid'] = credentials.orgId;
      try {
        try {
          return await once(method, headers, send);
        } catch (err) {
          if (!how.read || !(err instanceof ConnectError) || err.code !== Code.Unavailable) throw err;
          return await once(method, headers, send);
        }
      } catch (err) {
        throw fromUpstream(err, how.renames);
      }
    },
    async ping() {
      try {
        await once('Healthz', {}, (o) => clients.management.healthz({}, o));
      } catch (err) {
        throw err instanceof ConnectError ? unavailable(`upstream: ${Code[err.code]}`) : err;
      }
    },
    close: () => sessionManager.abort(),
  };
}
