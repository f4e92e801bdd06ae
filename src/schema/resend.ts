// GraphQL surface of resendEmailCode and resendPhoneCode (additions beyond
// CONTRACT.graphql). Thin: map and call.
import * as resend from '../commands/resend.ts';
import type { Builder } from './builder.ts';
import type { Common } from './common.ts';

export function addResend(builder: Builder, { detailsPayload }: Common) {
  const rules = resend.resendInputRules;
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

  builder.mutationField('resendEmailCode', (t) =>
    t.field({
      description:
        'Send a fresh verification code to the unverified email of a user (user.write, or the user itself); the earlier code no longer verifies. ' +
        'At most RESEND_LIMIT_PER_HOUR (default 5) sends per user an hour, then RESOURCE_EXHAUSTED. No event is written: details are those of the user.',
      type: detailsPayload('ResendEmailCodePayload'),
      args: { input: t.arg({ type: ResendEmailCodeInput, required: true, validate: { schema: rules.resendEmailCode } as any }) },
      resolve: async (_r, args, ctx) => ({ details: await resend.resendEmailCode(ctx.cmd, args.input as any) }),
    }),
  );

  builder.mutationField('resendPhoneCode', (t) =>
    t.field({
      description:
        'Send a fresh verification code by SMS to the unverified phone of a user (user.write, or the user itself); FAILED_PRECONDITION when no SMS provider is configured. Limited like resendEmailCode.',
      type: detailsPayload('ResendPhoneCodePayload'),
      args: { input: t.arg({ type: ResendPhoneCodeInput, required: true, validate: { schema: rules.resendPhoneCode } as any }) },
      resolve: async (_r, args, ctx) => ({ details: await resend.resendPhoneCode(ctx.cmd, args.input as any) }),
    }),
  );
}
