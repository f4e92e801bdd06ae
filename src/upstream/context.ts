// What each upstream operation receives: the caller as the edge keyed it (callerId: the subject
// of a verified JWT, or a keyed hash of an opaque token: src/auth/upstream-tokens.ts), the
// credentials it forwards, and the request's memo of what it has read (one call per read, however
// often a query asks for it).
import { orgHeaderOf } from '../commands/org-header.ts';
import type { CallerFacts, HeaderSource, OperationContext } from '../operations.ts';
import type { Credentials, Upstream } from './client.ts';

export interface UpstreamContext extends OperationContext {
  upstream: Upstream;
  credentials: Credentials;
  /** This request's reads by key (`user:<id>`, `metadata:<id>`, …): each asked for once. */
  reads: Map<string, Promise<unknown>>;
}

/** The context of one request: its caller, its credentials as sent (forwarded only to the upstream). */
export function upstreamContext(upstream: Upstream, headers: HeaderSource, caller: CallerFacts): UpstreamContext {
  const orgHeader = orgHeaderOf(headers);
  const ctx: UpstreamContext = {
    callerId: caller.callerId,
    orgHeader,
    upstream,
    credentials: { authorization: headers.get('authorization'), orgId: orgHeader },
    reads: new Map(),
  };
  if (caller.authError) ctx.authError = caller.authError;
  return ctx;
}

/** A read of this request, asked for once: the first call's promise for every later one. */
export function readOnce<T>(ctx: UpstreamContext, key: string, read: () => Promise<T>): Promise<T> {
  let p = ctx.reads.get(key) as Promise<T> | undefined;
  if (!p) ctx.reads.set(key, (p = read()));
  return p;
}
