// What the commands are built over: the stores, the notifier, the hasher, ids, keys, and the
// process's organization hints (org-hints.ts). One per gateway (src/server.ts).
import type { Config } from '../config.ts';
import type { CodeService } from '../codes/codes.ts';
import type { PasswordHasher } from '../model/passwords.ts';
import type { Notifier } from '../notify/port.ts';
import type { RateLimiter } from '../notify/port.ts';
import type { EventStore } from '../store/port.ts';
import type { OrgHints } from './org-hints.ts';

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
  /** Which organization each user was last seen in: a guess for the first round trip (org-hints.ts). */
  orgHints: OrgHints;
}
