// Input rules of the U2F operations (operation 3 and the field limits, docs/graphql.md, HTTP: limits).
// Checked before any I/O; every violated field is reported.
import { z } from 'zod';
import type { Config } from '../config.ts';
import { text } from './rules.ts';
import { PUBLIC_KEY_CREDENTIAL_MAX, PUBLIC_KEY_CREDENTIAL_MIN } from '../limits.ts';

const id = text(200, { required: true });

const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The normalized form of a `domain` argument: trimmed, lower case, without a trailing dot. */
export const normalizeDomain = (domain: string) => domain.trim().toLowerCase().replace(/\.$/, '');

/** `host` is `rpId` or a subdomain of it (the WebAuthn rule between an origin's host and an rp id). */
export const hostFitsRpId = (host: string, rpId: string) => host === rpId || host.endsWith(`.${rpId}`);

/** The configured origins a browser may use with `rpId`. */
export function originsFor(config: Config, rpId: string): string[] {
  return config.webauthn.origins.filter((origin) => {
    try {
      return hostFitsRpId(new URL(origin).hostname.toLowerCase(), rpId);
    } catch {
      return false;
    }
  });
}

/**
 * The credential's shape, bounded the same on every face: a real one nests 3 levels and holds
 * a few dozen members. Each face's own parser limits lie beyond these (GraphQL variables nest
 * 32 levels; a binary Struct holds 1,000 entries a map and 10,000 fields), so what one face
 * accepts, every face does.
 */
export const PUBLIC_KEY_CREDENTIAL_MAX_DEPTH = 16;
export const PUBLIC_KEY_CREDENTIAL_MAX_MEMBERS = 1000;

/** What is wrong with the credential's shape: deeper than MAX_DEPTH or more members (object members and array elements, at every depth) than MAX_MEMBERS. */
function shapeProblem(value: unknown): string | undefined {
  let members = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > PUBLIC_KEY_CREDENTIAL_MAX_DEPTH) return `must not nest deeper than ${PUBLIC_KEY_CREDENTIAL_MAX_DEPTH} levels`;
    const children = Array.isArray(v) ? v : Object.values(v);
    members += children.length;
    if (members > PUBLIC_KEY_CREDENTIAL_MAX_MEMBERS) return `must hold at most ${PUBLIC_KEY_CREDENTIAL_MAX_MEMBERS} members and elements`;
    for (const child of children) stack.push([child, depth + 1]);
  }
  return undefined;
}

/** Code points of the credential's JSON text; stops counting early once past the limit. */
function jsonLength(value: unknown): number {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return -1;
  }
  if (json === undefined) return -1;
  if (json.length < PUBLIC_KEY_CREDENTIAL_MIN) return json.length; // UTF-16 units >= code points
  let n = 0;
  for (const _ of json) if (++n > PUBLIC_KEY_CREDENTIAL_MAX) break;
  return n;
}

export function u2fInputRules(config: Config) {
  const rpId = config.webauthn.rpId.toLowerCase();
  return {
    registerU2F: z.object({
      userId: id,
      /**
       * The relying-party id for this token: the configured one or a subdomain of it, and at
       * least one configured origin must be able to use it (else no browser could finish).
       */
      domain: text(253)
        .superRefine((d, ctx) => {
          const domain = normalizeDomain(d);
          if (domain === '') return; // blank means "the configured one"
          if (!HOST_NAME.test(domain)) {
            ctx.addIssue({ code: 'custom', message: 'must be a host name' });
          } else if (!hostFitsRpId(domain, rpId)) {
            ctx.addIssue({ code: 'custom', message: `must be the relying-party id ${rpId} or a subdomain of it` });
          } else if (originsFor(config, domain).length === 0) {
            ctx.addIssue({ code: 'custom', message: 'no configured origin may use this relying-party id' });
          }
        })
        .nullish(),
    }),

    verifyU2FRegistration: z.object({
      userId: id,
      u2fId: id,
      publicKeyCredential: z.record(z.string(), z.unknown()).superRefine((credential, ctx) => {
        const n = jsonLength(credential);
        if (n < PUBLIC_KEY_CREDENTIAL_MIN || n > PUBLIC_KEY_CREDENTIAL_MAX) {
          ctx.addIssue({
            code: 'custom',
            message: `must be ${PUBLIC_KEY_CREDENTIAL_MIN} to ${PUBLIC_KEY_CREDENTIAL_MAX} characters as JSON`,
          });
          return;
        }
        const problem = shapeProblem(credential);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
      tokenName: text(200, { required: true, name: true }),
    }),
  };
}

export type U2FInputRules = ReturnType<typeof u2fInputRules>;
export type RegisterU2FInput = z.infer<U2FInputRules['registerU2F']>;
export type VerifyU2FRegistrationInput = z.infer<U2FInputRules['verifyU2FRegistration']>;
