// One upstream call of an operation, and the one way a mutation is wired (mutation): the caller checked as the commands check it (a token sent and
// not valid, or none: answered here, without a round trip), then the call with its credentials.
import type { CallOptions } from '@connectrpc/connect';
import type { z } from 'zod';
import { unauthenticated } from '../errors.ts';
import type { Credentials } from './client.ts';
import type { UpstreamContext } from './context.ts';
import type { Details } from '../operations.ts';
import { detailsOf } from './convert.ts';
import type { FieldRenames } from './errors.ts';
import { checked } from './inputs.ts';

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

/**
 * A read: sent again once on UNAVAILABLE. `credentials`: the request's, unless a read is asked in
 * another organization than the header names (a user's parts in the user's own).
 */
export function read<T>(
  ctx: UpstreamContext,
  method: string,
  send: (o: CallOptions) => Promise<T>,
  credentials: Credentials = ctx.credentials,
): Promise<T> {
  requireCaller(ctx);
  return ctx.upstream.call(method, credentials, send, { read: true });
}

/**
 * A mutation, wired the one way every upstream mutation is: the input checked by the commands'
 * rules (the embedded mode's INVALID_ARGUMENT, no call made), then one write, then its answer
 * mapped. Named after the operation, for stacks and profiles.
 */
export function mutation<S extends z.ZodType, R, T>(
  name: string,
  rules: S,
  method: string,
  send: (ctx: UpstreamContext, input: z.output<S>, options: CallOptions) => Promise<R>,
  answer: (response: R) => T,
  renames?: FieldRenames,
): (ctx: UpstreamContext, raw: unknown) => Promise<T> {
  const run = async (ctx: UpstreamContext, raw: unknown): Promise<T> => {
    const input = await checked(rules, raw);
    return answer(await write(ctx, method, (o) => send(ctx, input, o), renames));
  };
  return Object.defineProperty(run, 'name', { value: name });
}

/** The answer of the mutations that answer Details. */
export const details = (r: { details?: Parameters<typeof detailsOf>[0] }): Details => detailsOf(r.details);
