// One upstream call of an operation: the caller checked as the commands check it (a token sent and
// not valid, or none: answered here, without a round trip), then the call with its credentials.
import type { CallOptions } from '@connectrpc/connect';
import { unauthenticated } from '../errors.ts';
import type { UpstreamContext } from './context.ts';
import type { FieldRenames } from './errors.ts';

/** Throws what the commands' authenticate throws before any read: the token's error, or no token. */
export function requireCaller(ctx: UpstreamContext): void {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.callerId) throw unauthenticated();
}

/** A write: sent once, never again (src/upstream/client.ts). */
export function write<T>(ctx: UpstreamContext, method: string, send: (o: CallOptions) => Promise<T>, renames?: FieldRenames): Promise<T> {
  requireCaller(ctx);
  return ctx.upstream.call(method, ctx.credentials, send, renames ? { renames } : {});
}

/** A read: sent again once on UNAVAILABLE. */
export function read<T>(ctx: UpstreamContext, method: string, send: (o: CallOptions) => Promise<T>): Promise<T> {
  requireCaller(ctx);
  return ctx.upstream.call(method, ctx.credentials, send, { read: true });
}
