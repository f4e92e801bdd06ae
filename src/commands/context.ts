// What every command receives: its dependencies and who is calling.
import type { Config } from '../config.ts';
import type { CodeService } from '../codes/codes.ts';
import type { Notifier } from '../notify/port.ts';
import type { RateLimiter } from '../notify/rate-limit.ts';
import type { EventStore, Snapshot } from '../store/port.ts';
import type { PasswordHasher } from '../model/passwords.ts';

export interface Deps {
  config: Config;
  store: EventStore;
  codes: CodeService;
  notifier: Notifier;
  /** Per-user limits (resendEmailCode / resendPhoneCode); Redis when REDIS_URL is set. */
  rateLimiter: RateLimiter;
  hasher: PasswordHasher;
  newId: () => string;
  /** AES-256-GCM key for OIDC client secrets at rest. */
  idpSecretKey: Buffer;
}

export interface CommandContext {
  deps: Deps;
  /** The authenticated user id, or null when the request carried no valid token. */
  callerId: string | null;
  /** Set when a token was sent but is not valid: every operation answers it. */
  authError?: Error;
  /** The x-service-orgid header, when sent. */
  orgHeader: string | null;
}

/** The `details` object of SPEC.md, from the snapshot after the event. */
export interface Details {
  sequence: number;
  creationDate: Date | null;
  changeDate: Date;
  resourceOwner: string;
}

export function detailsOf(snapshot: Snapshot<unknown>, withCreationDate: boolean): Details {
  return {
    sequence: snapshot.sequence,
    creationDate: withCreationDate ? snapshot.changeDate : null,
    changeDate: snapshot.changeDate,
    resourceOwner: snapshot.resourceOwner,
  };
}
