// A software WebAuthn authenticator for tests: a P-256 credential key from
// node:crypto, real clientDataJSON, authenticatorData and attestationObject
// ('none' or 'packed' self-attestation), CBOR-encoded with the encoder that
// @simplewebauthn/server ships. Options break one thing at a time.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

export type AttestationFormat = 'none' | 'packed';

export interface CreateOptions {
  /** The base64url challenge from registerU2F's creation options. */
  challenge: string;
  /** The origin the "browser" reports in clientDataJSON. */
  origin: string;
  /** The relying-party id whose SHA-256 goes into authenticatorData. */
  rpId: string;
  fmt?: AttestationFormat;
  /** Flip a byte of the packed attestation signature. */
  tamperSignature?: boolean;
  /** clientDataJSON type; 'webauthn.create' unless changed. */
  type?: string;
  counter?: number;
  transports?: string[];
  /** Reuse a credential id (to register the same credential twice). */
  credentialId?: Uint8Array;
  /** Pad the COSE public key with an extra parameter to exactly this many bytes (at least 300). */
  publicKeyBytes?: number;
}

export interface SoftCredential {
  response: RegistrationResponseJSON;
  credentialId: string;
  publicKey: KeyObject;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
const COSE_ES256 = -7;
/** A made-up AAGUID, so the library's AAGUID checks see a real 16-byte value. */
const AAGUID = Buffer.from('5ee0a7e5ad1a4e3b9c1e0d2f3a4b5c6d', 'hex');

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const b64url = (data: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(data));

/** The credential public key as a COSE_Key (EC2, P-256, ES256), padded to `bytes` when given. */
function coseKey(publicKey: KeyObject, bytes?: number): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  const key = new Map<number, number | Uint8Array>([
    [1, 2], // kty: EC2
    [3, COSE_ES256], // alg: ES256
    [-1, 1], // crv: P-256
    [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
    [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
  ]);
  if (bytes === undefined) return isoCBOR.encode(key);
  // An unassigned parameter label; the byte string's CBOR header grows with its length, so search.
  for (let n = Math.max(0, bytes - 120); n <= bytes; n++) {
    const padded = isoCBOR.encode(new Map([...key, [-70, new Uint8Array(n)]]));
    if (padded.length === bytes) return padded;
  }
  throw new Error(`no padding gives a COSE key of ${bytes} bytes`);
}

export function createSoftAuthenticator() {
  /** Makes a new credential, as navigator.credentials.create would, and returns its JSON form. */
  function create(options: CreateOptions): SoftCredential {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const credentialId = options.credentialId ?? new Uint8Array(randomBytes(32));

    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: options.type ?? 'webauthn.create', challenge: options.challenge, origin: options.origin, crossOrigin: false }),
    );

    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(options.counter ?? 0);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(options.rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
      counter,
      AAGUID,
      idLength,
      credentialId,
      coseKey(publicKey, options.publicKeyBytes),
    ]);

    const attStmt = new Map<string, number | Uint8Array>();
    if ((options.fmt ?? 'none') === 'packed') {
      // Self attestation: signed by the credential key itself over authData || SHA-256(clientDataJSON).
      const sig = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey);
      if (options.tamperSignature) sig[sig.length - 3]! ^= 0x5a;
      attStmt.set('alg', COSE_ES256);
      attStmt.set('sig', new Uint8Array(sig));
    }
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, number | Uint8Array>>([
        ['fmt', options.fmt ?? 'none'],
        ['attStmt', attStmt],
        ['authData', new Uint8Array(authData)],
      ]),
    );

    const id = b64url(credentialId);
    return {
      credentialId: id,
      publicKey,
      response: {
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: b64url(clientDataJSON),
          attestationObject: b64url(attestationObject),
          transports: options.transports ?? ['usb'],
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'cross-platform',
      },
    };
  }
  return { create };
}
