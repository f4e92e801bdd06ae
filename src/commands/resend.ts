// resendEmailCode / resendPhoneCode: a fresh code for the user's current,
// unverified address, sent again. Issuing replaces the pending code, so the
// old one no longer verifies. Limited per user and channel (default 5 sends
// an hour, RESEND_LIMIT_PER_HOUR) in Redis, or in memory with the embedded stores.
//
// Resending changes nothing of the user: no event is written and the details
// are those of the user's current snapshot (sequence and changeDate of its
// last change, creationDate null as on verifyEmail).
import { AppError, failedPrecondition, unavailable } from '../errors.ts';
import type { User } from '../model/users.ts';
import type { DeliveryJob } from '../notify/port.ts';
import type { Snapshot } from '../store/port.ts';
import { authenticate, userForSelfOrPermission, userReads } from './access.ts';
import { detailsOf, type CommandContext, type Details } from './context.ts';
import { command } from './command.ts';
import { resendInputRules } from './resend-inputs.ts';

export interface ResendEmailCodeInput {
  userId: string;
  urlTemplate?: string | null;
}

export interface ResendPhoneCodeInput {
  userId: string;
}

const HOUR_MS = 3_600_000;

function resourceExhausted(retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError('RESOURCE_EXHAUSTED', `Too many codes sent to this user; try again in ${seconds} s`, [
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` },
  ]);
}

/** Counts one send for the user and channel; past the limit: RESOURCE_EXHAUSTED. */
async function takeSend(ctx: CommandContext, userId: string, channel: 'email' | 'phone') {
  const { deps } = ctx;
  const decision = await deps.rateLimiter.hit(`resend:${userId}:${channel}`, deps.config.resendLimitPerHour, HOUR_MS);
  if (!decision.allowed) throw resourceExhausted(decision.retryAfterMs);
}

async function issueAndSend(
  ctx: CommandContext,
  user: Snapshot<User>,
  channel: 'email' | 'phone',
  address: string,
  job: Omit<DeliveryJob, 'code'>,
) {
  await takeSend(ctx, user.id, channel);
  const code = await ctx.deps.codes.issue(user.id, channel, address); // voids the earlier code
  try {
    await ctx.deps.notifier.enqueue({ ...job, code }, { strict: true });
  } catch {
    throw unavailable('The code could not be queued for sending, try again');
  }
}

export const resendEmailCode = command(
  (c) => resendInputRules(c).resendEmailCode,
  async function resendEmailCode(ctx, input: ResendEmailCodeInput): Promise<Details> {
    const caller = await authenticate(ctx, userReads(ctx, input.userId));
    const { user } = await userForSelfOrPermission(ctx, caller, input.userId, 'user.write');
    const { email, isVerified } = user.state.email;
    if (isVerified) throw failedPrecondition('The email is already verified');
    await issueAndSend(ctx, user, 'email', email, {
      kind: 'verify-email-on-change',
      userId: user.id,
      orgId: user.resourceOwner,
      to: email,
      urlTemplate: input.urlTemplate ?? undefined,
    });
    return detailsOf(user, false);
  },
);

export const resendPhoneCode = command(
  (c) => resendInputRules(c).resendPhoneCode,
  async function resendPhoneCode(ctx, input: ResendPhoneCodeInput): Promise<Details> {
    const caller = await authenticate(ctx, userReads(ctx, input.userId));
    const { user } = await userForSelfOrPermission(ctx, caller, input.userId, 'user.write');
    const phone = user.state.phone;
    if (!phone) throw failedPrecondition('The user has no phone');
    if (phone.isVerified) throw failedPrecondition('The phone is already verified');
    if (!ctx.deps.notifier.canDeliver('sms')) throw failedPrecondition('No SMS provider is configured');
    await issueAndSend(ctx, user, 'phone', phone.phone, {
      kind: 'verify-phone',
      userId: user.id,
      orgId: user.resourceOwner,
      to: phone.phone,
    });
    return detailsOf(user, false);
  },
);
