// The input rules of resendEmailCode and resendPhoneCode: run by the commands (resend.ts) and,
// before any call, by upstream mode (src/upstream).
import type { Config } from '../config.ts';
import { z } from 'zod';
import { parseUrlTemplate } from '../model/url-template.ts';
import { text } from './rules.ts';

export function resendInputRules(_config?: Config) {
  return {
    resendEmailCode: z.object({
      userId: text(200, { required: true }),
      urlTemplate: text(200, { required: true })
        .superRefine((t, ctx) => {
          const parsed = parseUrlTemplate(t);
          if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
        })
        .nullish(),
    }),
    resendPhoneCode: z.object({ userId: text(200, { required: true }) }),
  };
}
