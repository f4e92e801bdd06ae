// Registering a security key: registerU2F gives WebAuthn creation options as JSON (binary
// fields base64url), the browser creates the credential, verifyU2FRegistration takes it back
// in the same JSON form.
import { request } from './client';
import { graphql } from './gql';

const RegisterU2F = graphql(`
  mutation RegisterU2F($input: RegisterU2FInput!) {
    registerU2F(input: $input) {
      u2fId
      publicKeyCredentialCreationOptions
    }
  }
`);

const VerifyU2FRegistration = graphql(`
  mutation VerifyU2FRegistration($input: VerifyU2FRegistrationInput!) {
    verifyU2FRegistration(input: $input) {
      details {
        sequence
      }
    }
  }
`);

const fromBase64url = (text: string): ArrayBuffer => {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer;
};

const toBase64url = (buffer: ArrayBuffer): string => {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

interface CreationOptionsJSON {
  challenge: string;
  user: { id: string; name: string; displayName: string };
  excludeCredentials?: { id: string; type: 'public-key'; transports?: AuthenticatorTransport[] }[];
  [key: string]: unknown;
}

function creationOptions(json: Record<string, unknown>): PublicKeyCredentialCreationOptions {
  const options = json as unknown as CreationOptionsJSON;
  return {
    ...(options as unknown as PublicKeyCredentialCreationOptions),
    challenge: fromBase64url(options.challenge),
    user: { ...options.user, id: fromBase64url(options.user.id) },
    excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
}

function credentialJSON(credential: PublicKeyCredential): Record<string, unknown> {
  const response = credential.response as AuthenticatorAttestationResponse;
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      attestationObject: toBase64url(response.attestationObject),
      transports: response.getTransports?.() ?? [],
    },
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
  };
}

/** The three steps; the browser asks the user to touch the key during the second. */
export async function registerSecurityKey(userId: string, tokenName: string): Promise<void> {
  const { registerU2F } = await request(RegisterU2F, { input: { userId } });
  const credential = await navigator.credentials.create({ publicKey: creationOptions(registerU2F.publicKeyCredentialCreationOptions) });
  if (!(credential instanceof PublicKeyCredential)) throw new Error('The browser created no public-key credential');
  await request(VerifyU2FRegistration, {
    input: { userId, u2fId: registerU2F.u2fId, tokenName, publicKeyCredential: credentialJSON(credential) },
  });
}
