// GraphQL surface of U2F registration: registerU2F and verifyU2FRegistration. Thin: map and call.
// The U2FToken type (id, name, state) lives with the User type in users.ts.
import type { Config } from '../config.ts';
import * as u2f from '../commands/u2f.ts';
import { u2fInputRules } from '../commands/u2f-inputs.ts';
import type { Builder } from './builder.ts';
import type { Common } from './common.ts';

export function addU2F(builder: Builder, { Details: DetailsRef, detailsPayload }: Common, config: Config) {
  const rules = u2fInputRules(config);

  const RegisterU2FInput = builder.inputType('RegisterU2FInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      domain: t.string({
        description:
          'Relying-party id (domain); defaults to the configured one. Must be the configured relying-party id or a subdomain of it that a configured origin can use.',
      }),
    }),
  });
  const RegisterU2FPayload = builder.objectRef<u2f.RegisterU2FResult>('RegisterU2FPayload').implement({
    fields: (t) => ({
      u2fId: t.exposeID('u2fId'),
      publicKeyCredentialCreationOptions: t.field({
        type: 'JSONObject',
        description: 'PublicKeyCredentialCreationOptions (JSON form) to hand to navigator.credentials.create.',
        resolve: (p) => p.publicKeyCredentialCreationOptions as unknown as Record<string, unknown>,
      }),
      details: t.field({ type: DetailsRef, resolve: (p) => p.details }),
    }),
  });
  builder.mutationField('registerU2F', (t) =>
    t.field({
      description: 'Start the registration of a U2F token: returns the WebAuthn creation options for the client.',
      type: RegisterU2FPayload,
      args: { input: t.arg({ type: RegisterU2FInput, required: true, validate: { schema: rules.registerU2F } as any }) },
      resolve: (_r, args, ctx) => u2f.registerU2F(ctx.cmd, args.input as any),
    }),
  );

  const VerifyU2FRegistrationInput = builder.inputType('VerifyU2FRegistrationInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      u2fId: t.id({ required: true }),
      publicKeyCredential: t.field({
        type: 'JSONObject',
        required: true,
        description:
          'The PublicKeyCredential produced by the WebAuthn client (navigator.credentials.create), as JSON (55 to 1048576 characters).',
      }),
      tokenName: t.string({ required: true }),
    }),
  });
  builder.mutationField('verifyU2FRegistration', (t) =>
    t.field({
      description: '3. Complete the registration of a U2F (WebAuthn) token.',
      type: detailsPayload('VerifyU2FRegistrationPayload'),
      args: {
        input: t.arg({ type: VerifyU2FRegistrationInput, required: true, validate: { schema: rules.verifyU2FRegistration } as any }),
      },
      resolve: async (_r, args, ctx) => ({ details: await u2f.verifyU2FRegistration(ctx.cmd, args.input as any) }),
    }),
  );
}
