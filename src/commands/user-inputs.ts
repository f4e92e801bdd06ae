// Input rules of the user operations (ZITADEL's field rules and the field limits, docs/graphql.md, HTTP: limits).
// Checked before any I/O; every violated field is reported.
import { z } from 'zod';
import type { Config } from '../config.ts';
import { isValidEmail } from '../model/email.ts';
import { checkPolicy, classifyImportedHash } from '../model/passwords.ts';
import { normalizePhone } from '../model/phone.ts';
import { parseUrlTemplate } from '../model/url-template.ts';
import { isBlank } from '../model/text.ts';
import { base64Bytes, countGiven, gender, optionalText, text } from './rules.ts';
// Sizing the edge's body cap too (src/limits.ts).
import { MAX_IDP_LINKS, MAX_METADATA_ENTRIES, METADATA_KEY_MAX, METADATA_VALUE_MAX_BYTES } from '../limits.ts';

const id = text(200, { required: true, name: true });

const profileFields = {
  firstName: text(200, { required: true, name: true }),
  lastName: text(200, { required: true, name: true }),
  nickName: optionalText(200, { name: true }),
  displayName: optionalText(200, { name: true }),
  preferredLanguage: optionalText(10),
  gender: gender.nullish(),
};

/** A violation at [i, field] of each item whose key an earlier item has. */
function noDuplicates<T>(keyOf: (item: T) => string, field: string, message: string) {
  return (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const key = keyOf(item);
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [i, field], message });
      seen.add(key);
    });
  };
}

// A blank one is already 'must not be empty': one violation per field.
const urlTemplate = text(200, { required: true }).superRefine((t, ctx) => {
  if (isBlank(t)) return;
  const parsed = parseUrlTemplate(t);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
});

const email = text(200, { required: true }).refine((e) => isBlank(e) || isValidEmail(e), { message: 'must be a valid email address' });

const emailVerification = {
  sendCode: z.object({ urlTemplate: urlTemplate.nullish() }).nullish(),
  returnCode: z.boolean().nullish(),
  isVerified: z.boolean().nullish(),
};

function oneVerificationChoice(v: { sendCode?: unknown; returnCode?: unknown; isVerified?: unknown }, ctx: z.RefinementCtx) {
  if (countGiven(v.sendCode, v.returnCode, v.isVerified) > 1) {
    ctx.addIssue({ code: 'custom', path: ['sendCode'], message: 'give at most one of sendCode, returnCode and isVerified' });
  }
}

export function userInputRules(config: Config) {
  const policy = (pw: string, ctx: z.RefinementCtx) => {
    for (const broken of checkPolicy(pw, config.passwordPolicy)) {
      ctx.addIssue({ code: 'custom', message: `password policy ${broken.rule}: ${broken.description}` });
    }
  };
  const phone = (requireGlobal: boolean) => (p: string, ctx: z.RefinementCtx) => {
    if (p.trim() === '') return;
    if (!normalizePhone(p, { defaultRegion: config.defaultPhoneRegion, requireGlobal })) {
      const form = requireGlobal ? 'a global number starting with +' : 'a phone number';
      ctx.addIssue({ code: 'custom', message: `must be ${form}` });
    }
  };

  const profile = z.object(profileFields);

  return {
    updateMyProfile: z.object({
      ...profileFields,
      displayName: text(200, { required: true, name: true }),
      nickName: optionalText(200, { required: true, name: true }),
    }),

    updateHumanProfile: z.object({ userId: id, ...profileFields, displayName: optionalText(200, { required: true, name: true }) }),

    addHumanUser: z
      .object({
        userId: id.nullish(),
        username: optionalText(200, { required: true, name: true }),
        organisation: z
          .object({ orgId: id.nullish(), orgDomain: optionalText(200, { required: true }) })
          .superRefine((o, ctx) => {
            if (countGiven(o.orgId, o.orgDomain) > 1)
              ctx.addIssue({ code: 'custom', path: ['orgDomain'], message: 'give either orgId or orgDomain, not both' });
          })
          .nullish(),
        profile,
        email: z.object({ email, ...emailVerification }).superRefine(oneVerificationChoice),
        phone: z
          .object({
            phone: text(200).superRefine(phone(false)).nullish(),
            sendCode: z.boolean().nullish(),
            returnCode: z.boolean().nullish(),
            isVerified: z.boolean().nullish(),
          })
          .superRefine(oneVerificationChoice)
          .nullish(),
        metadata: z
          .array(z.object({ key: text(METADATA_KEY_MAX, { required: true }), value: base64Bytes(METADATA_VALUE_MAX_BYTES) }))
          .max(MAX_METADATA_ENTRIES, { message: `give at most ${MAX_METADATA_ENTRIES} metadata entries` })
          .superRefine(noDuplicates((m) => m.key, 'key', 'duplicate metadata key'))
          .nullish(),
        password: z
          .object({ password: text(200, { required: true }).superRefine(policy), changeRequired: z.boolean().nullish() })
          .nullish(),
        hashedPassword: z
          .object({
            hash: text(200, { required: true }).refine((h) => classifyImportedHash(h) !== null, {
              message: 'must be a bcrypt ($2a$, $2b$, $2y$) or argon2id/argon2i PHC hash',
            }),
            changeRequired: z.boolean().nullish(),
          })
          .nullish(),
        idpLinks: z
          .array(z.object({ idpId: id, userId: text(200, { required: true }), userName: text(200, { required: true, name: true }) }))
          .max(MAX_IDP_LINKS, { message: `give at most ${MAX_IDP_LINKS} idpLinks` })
          // One external user is one link (the pair belongs to one user), not two with other userNames.
          .superRefine(noDuplicates((l) => JSON.stringify([l.idpId, l.userId]), 'userId', 'duplicate link of this identity provider user'))
          .nullish(),
      })
      .superRefine((input, ctx) => {
        if (input.password && input.hashedPassword) {
          ctx.addIssue({ code: 'custom', path: ['hashedPassword'], message: 'give either password or hashedPassword, not both' });
        }
      }),

    setEmail: z.object({ userId: id, email, ...emailVerification }).superRefine(oneVerificationChoice),

    updateHumanPhone: z.object({
      userId: id,
      phone: text(50, { required: true }).superRefine(phone(true)),
      isPhoneVerified: z.boolean().nullish(),
    }),

    setHumanPassword: z.object({
      userId: id,
      password: text(72, { required: true }).superRefine(policy),
      noChangeRequired: z.boolean().nullish(),
    }),

    verifyCode: z.object({ userId: id, verificationCode: text(64, { required: true }) }),
  };
}

export type UserInputRules = ReturnType<typeof userInputRules>;
export type AddHumanUserInput = z.infer<UserInputRules['addHumanUser']>;
export type UpdateProfileInput = z.infer<UserInputRules['updateHumanProfile']>;
export type UpdateMyProfileInput = z.infer<UserInputRules['updateMyProfile']>;
export type SetEmailInput = z.infer<UserInputRules['setEmail']>;
export type UpdateHumanPhoneInput = z.infer<UserInputRules['updateHumanPhone']>;
export type SetHumanPasswordInput = z.infer<UserInputRules['setHumanPassword']>;
export type VerifyCodeInput = z.infer<UserInputRules['verifyCode']>;
