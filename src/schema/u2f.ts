// GraphQL surface of U2F registration: registerU2F and verifyU2FRegistration. Thin: map and call.
// The U2FToken type (id, name, state) lives with the User type in users.ts.
import type { RegisterU2FResult } from '../operations.ts';
import type { Builder } from './builder.ts';
import { withDetails, type Common } from './common.ts';

export function addU2F(builder: Builder, { Details: DetailsRef, detailsPayload, commandMutation }: Common) {
  const RegisterU2FInput = builder.inputType('RegisterU2FInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      domain: t.string({
        description:
          'Relying-party id (domain); defaults to the configured one. Must be the configured relying-party id or a subdomain of it that a configured origin can use.',
      }),
    }),
  });
  const RegisterU2FPayload = builder.objectRef<RegisterU2FResult>('RegisterU2FPayload').implement({
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
  commandMutation('registerU2F', {
    description: 'Start the registration of a U2F token: returns the WebAuthn creation options for the client.',
    input: RegisterU2FInput,
    payload: RegisterU2FPayload,
    run: (ops) => ops.registerU2F,
  });

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
  commandMutation('verifyU2FRegistration', {
    description: '3. Complete the registration of a U2F (WebAuthn) token.',
    input: VerifyU2FRegistrationInput,
    payload: detailsPayload('VerifyU2FRegistrationPayload'),
    run: withDetails((ops) => ops.verifyU2FRegistration),
  });
}
