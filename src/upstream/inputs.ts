// The operations' input rules, the commands' own (src/commands/*-inputs.ts), run at the gateway
// before any upstream call: an invalid input never costs a round trip, and its error is the one
// the embedded mode gives (INVALID_ARGUMENT, field violations at the GraphQL input's paths).
import type { z } from 'zod';
import { idpInputRules } from '../commands/idp-inputs.ts';
import { orgInputRules } from '../commands/org-inputs.ts';
import { projectInputRules } from '../commands/project-inputs.ts';
import { resendInputRules } from '../commands/resend-inputs.ts';
import { u2fInputRules } from '../commands/u2f-inputs.ts';
import { userInputRules } from '../commands/user-inputs.ts';
import type { Config } from '../config.ts';
import { zodToAppError } from '../errors.ts';

export function inputRules(config: Config) {
  return {
    ...userInputRules(config),
    ...idpInputRules(config),
    ...projectInputRules(config),
    ...orgInputRules(config),
    ...u2fInputRules(config),
    ...resendInputRules(config),
  };
}

export type InputRules = ReturnType<typeof inputRules>;

/** The input as the rules accept it, or their INVALID_ARGUMENT. */
export async function checked<S extends z.ZodType>(schema: S, input: unknown): Promise<z.output<S>> {
  const parsed = await schema.safeParseAsync(input);
  if (!parsed.success) throw zodToAppError(parsed.error);
  return parsed.data;
}
