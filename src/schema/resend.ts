// GraphQL surface of resendEmailCode and resendPhoneCode (additions beyond
// schema.graphql). Thin: map and call.
import type { Builder } from './builder.ts';
import { withDetails, type Common } from './common.ts';

export function addResend(builder: Builder, { detailsPayload, commandMutation }: Common) {
  const ResendEmailCodeInput = builder.inputType('ResendEmailCodeInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      urlTemplate: t.string({
        description: 'Link template for the mail, with {{.UserID}}, {{.Code}} and {{.OrgID}}; the configured default when absent.',
      }),
    }),
  });
  const ResendPhoneCodeInput = builder.inputType('ResendPhoneCodeInput', {
    fields: (t) => ({ userId: t.id({ required: true }) }),
  });

  commandMutation('resendEmailCode', {
    description:
      'Send a fresh verification code to the unverified email of a user (user.write, or the user itself); the earlier code no longer verifies. ' +
      'At most RESEND_LIMIT_PER_HOUR (default 5) sends per user an hour, then RESOURCE_EXHAUSTED. No event is written: details are those of the user.',
    input: ResendEmailCodeInput,
    payload: detailsPayload('ResendEmailCodePayload'),
    run: withDetails((ops) => ops.resendEmailCode),
  });

  commandMutation('resendPhoneCode', {
    description:
      'Send a fresh verification code by SMS to the unverified phone of a user (user.write, or the user itself); FAILED_PRECONDITION when no SMS provider is configured. Limited like resendEmailCode.',
    input: ResendPhoneCodeInput,
    payload: detailsPayload('ResendPhoneCodePayload'),
    run: withDetails((ops) => ops.resendPhoneCode),
  });
}
