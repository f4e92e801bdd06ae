// U2F / WebAuthn registration of a user's second-factor token (docs/graphql.md, HTTP: limits):
// registerU2F creates a pending token with its challenge, verifyU2FRegistration
// checks the authenticator's answer and marks the token ready.
import { createHash } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON, verifyRegistrationResponse } from '@simplewebauthn/server';
import { alreadyExists, failedPrecondition, invalid, notFound } from '../errors.ts';
import { MAX_READY_U2F, userEvent, type U2FToken, type User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import { authenticate, userForSelfOrPermission, userReads } from './access.ts';
import { detailsOf, type Details } from './context.ts';
import { write } from './runner.ts';
import { normalizeDomain, originsFor, u2fInputRules, type RegisterU2FInput, type VerifyU2FRegistrationInput } from './u2f-inputs.ts';
import { command } from './command.ts';

// Imported on first use: the WebAuthn library and its ASN.1 stack cost ~20 MB a gateway without U2F users never needs.
const webauthn = () => import('@simplewebauthn/server');
const base64url = async () => (await import('@simplewebauthn/server/helpers')).isoBase64URL;

const PERMISSION = 'user.credential.write' as const;
const CREDENTIAL_FIELD = 'input.publicKeyCredential';

export interface RegisterU2FResult {
  u2fId: string;
  publicKeyCredentialCreationOptions: PublicKeyCredentialCreationOptionsJSON;
  details: Details;
}

/** WebAuthn's user.id is at most 64 bytes: the user id itself when it fits, else its SHA-256. */
function webauthnUserId(userId: string): Uint8Array<ArrayBuffer> {
  const bytes = Buffer.from(userId, 'utf8');
  const chosen = bytes.length <= 64 ? bytes : createHash('sha256').update(bytes).digest();
  return new Uint8Array(chosen);
}

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
/** The client reports transports; keep only the known names, once each. */
const knownTransports = (transports: unknown): string[] =>
  Array.isArray(transports) ? [...new Set(transports.filter((t): t is string => typeof t === 'string' && TRANSPORTS.has(t)))] : [];

/** WebAuthn §7.1: a credential id longer than 1023 bytes is refused. */
const MAX_CREDENTIAL_ID_BYTES = 1023;
/**
 * The COSE public key as stored: the largest real one (ML-DSA-87, 2,592 bytes of key) fits with
 * room to spare; the authenticator data could otherwise carry a key padded to most of a megabyte.
 */
const MAX_PUBLIC_KEY_BYTES = 4096;

const readyTokens = (user: User) => user.u2fTokens.filter((t) => t.state === 'U2F_STATE_READY' && t.credentialId);

function roomForAnotherToken(user: User): void {
  if (readyTokens(user).length >= MAX_READY_U2F)
    throw failedPrecondition(`The user already has ${MAX_READY_U2F} U2F tokens, the most a user may have`);
}

export const registerU2F = command(
  (c) => u2fInputRules(c).registerU2F,
  async function registerU2F(ctx, input: RegisterU2FInput): Promise<RegisterU2FResult> {
    const { config, newId } = ctx.deps;
    const caller = await authenticate(ctx, userReads(ctx, input.userId));
    const { user } = await userForSelfOrPermission(ctx, caller, input.userId, PERMISSION);
    roomForAnotherToken(user.state);

    const rpId = input.domain?.trim() ? normalizeDomain(input.domain) : config.webauthn.rpId.toLowerCase();
    const origins = originsFor(config, rpId);
    if (origins.length === 0) throw failedPrecondition(`No configured WebAuthn origin may use the relying-party id ${rpId}`);

    const u2fId = newId();
    const ttlMs = config.webauthn.challengeTtlSeconds * 1000;
    const { profile, username } = user.state;
    const options = await (
      await webauthn()
    ).generateRegistrationOptions({
      rpName: config.webauthn.rpName,
      rpID: rpId,
      userID: webauthnUserId(user.id),
      userName: username,
      userDisplayName: profile.displayName ?? `${profile.firstName} ${profile.lastName}`.trim(),
      timeout: ttlMs,
      // No attestation trust store (MDS) is consulted, so asking for 'direct' would only add a
      // browser privacy prompt; a client that still sends 'packed' or another format is verified.
      attestationType: 'none',
      excludeCredentials: readyTokens(user.state).map((t) => ({ id: t.credentialId!, transports: t.transports })),
      // A second factor: no resident key and no user verification needed (the password is the first factor).
      authenticatorSelection: { residentKey: 'discouraged', requireResidentKey: false, userVerification: 'discouraged' },
    });

    const { snapshot } = await write(ctx, 'user', user.id, (current) => {
      if (!current) throw notFound('User');
      return {
        ...userEvent.u2fAdded({
          id: u2fId,
          challenge: options.challenge,
          rpId,
          origins,
          expiresAt: new Date(Date.now() + ttlMs).toISOString(),
        }),
        resourceOwner: current.resourceOwner,
      };
    });
    return { u2fId, publicKeyCredentialCreationOptions: options, details: detailsOf(snapshot, false) };
  },
);

/** The pending token named by u2fId, with the checks that need no cryptography. */
function pendingToken(user: Snapshot<User>, u2fId: string, now = Date.now()): U2FToken {
  const token = user.state.u2fTokens.find((t) => t.id === u2fId);
  if (!token) throw notFound('U2F token');
  if (token.state === 'U2F_STATE_READY') throw failedPrecondition('The U2F token is already verified');
  if (!token.challenge || !token.rpId || !token.expiresAt) throw failedPrecondition('The U2F token has no pending registration');
  if (Date.parse(token.expiresAt) <= now) {
    throw invalid(CREDENTIAL_FIELD, 'the registration challenge has expired; start a new registration');
  }
  return token;
}

/** A short, fixed description of why the library refused the credential; never echoes the input. */
function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  if (/challenge/i.test(message)) return 'does not answer the challenge of this registration';
  if (/origin/i.test(message)) return 'was created on an origin that is not allowed';
  if (/RP ID/i.test(message)) return 'was created for another relying-party id';
  if (/signature/i.test(message)) return 'has an attestation signature that does not verify';
  if (/registration response type/i.test(message)) return 'is not a registration (webauthn.create) response';
  if (/user presence/i.test(message)) return 'was created without user presence';
  if (/public key alg/i.test(message)) return 'uses an unsupported public key algorithm';
  return 'could not be parsed or verified as a WebAuthn registration response';
}

export const verifyU2FRegistration = command(
  (c) => u2fInputRules(c).verifyU2FRegistration,
  async function verifyU2FRegistration(ctx, input: VerifyU2FRegistrationInput): Promise<Details> {
    const { config } = ctx.deps;
    const caller = await authenticate(ctx, userReads(ctx, input.userId));
    const { user } = await userForSelfOrPermission(ctx, caller, input.userId, PERMISSION);
    const token = pendingToken(user, input.u2fId);
    roomForAnotherToken(user.state);

    let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      result = await (
        await webauthn()
      ).verifyRegistrationResponse({
        response: input.publicKeyCredential as unknown as RegistrationResponseJSON,
        expectedChallenge: token.challenge!,
        expectedOrigin: originsFor(config, token.rpId!),
        expectedRPID: token.rpId!,
        expectedType: 'webauthn.create',
        requireUserPresence: true,
        requireUserVerification: false,
      });
    } catch (err) {
      throw invalid(CREDENTIAL_FIELD, describeFailure(err));
    }
    if (!result.verified) throw invalid(CREDENTIAL_FIELD, 'has an attestation signature that does not verify');

    const { credential } = result.registrationInfo;
    const isoBase64URL = await base64url();
    if (isoBase64URL.toBuffer(credential.id).length > MAX_CREDENTIAL_ID_BYTES) {
      throw invalid(CREDENTIAL_FIELD, `has a credential id longer than ${MAX_CREDENTIAL_ID_BYTES} bytes`);
    }
    if (credential.publicKey.length > MAX_PUBLIC_KEY_BYTES) {
      throw invalid(CREDENTIAL_FIELD, `has a public key longer than ${MAX_PUBLIC_KEY_BYTES} bytes`);
    }
    const transports = knownTransports(credential.transports);
    const tokenName = input.tokenName.trim();
    const { snapshot } = await write(ctx, 'user', user.id, (current) => {
      if (!current) throw notFound('User');
      const fresh = pendingToken(current, input.u2fId);
      if (fresh.challenge !== token.challenge) throw failedPrecondition('The U2F registration changed, try again');
      roomForAnotherToken(current.state);
      if (readyTokens(current.state).some((t) => t.credentialId === credential.id)) throw alreadyExists('U2F credential');
      return {
        ...userEvent.u2fVerified({
          id: input.u2fId,
          name: tokenName,
          credentialId: credential.id,
          publicKey: isoBase64URL.fromBuffer(credential.publicKey),
          counter: credential.counter,
          transports,
        }),
        resourceOwner: current.resourceOwner,
        // One credential belongs to one user in the whole instance (WebAuthn §7.1 step 22).
        claims: [`u2fCredential:${credential.id}`],
      };
    });
    return detailsOf(snapshot, false);
  },
);
