// Every command checks its own input: the transports hand over what the client
// sent and get AppError back, so GraphQL and the wire API answer the same input
// the same way (docs/architecture.md). Rules are built once per configuration.
import type { z } from 'zod';
import type { Config } from '../config.ts';
import { zodToAppError } from '../errors.ts';
import type { CommandContext } from './context.ts';

export type Command<R> = (ctx: CommandContext, input: unknown) => Promise<R>;

export function command<S extends z.ZodType, R>(
  rules: (config: Config) => S,
  run: (ctx: CommandContext, input: z.output<S>) => Promise<R>,
): Command<R> {
  const built = new WeakMap<Config, S>();
  const checked: Command<R> = async (ctx, input) => {
    const { config } = ctx.deps;
    let schema = built.get(config);
    if (!schema) built.set(config, (schema = rules(config)));
    const parsed = await schema.safeParseAsync(input);
    if (!parsed.success) throw zodToAppError(parsed.error);
    return run(ctx, parsed.data);
  };
  // `run` is a named function (`async function updateHumanProfile(ctx, input)`), so stack traces
  // and profiles name the command; the checked wrapper carries the same name for whoever asks.
  return Object.defineProperty(checked, 'name', { value: run.name });
}
