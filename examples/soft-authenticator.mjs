// A software WebAuthn authenticator, enough to finish a U2F registration without a security key:
// it makes a P-256 credential with node:crypto and answers RegisterU2F's
// publicKeyCredentialCreationOptions with a 'none'-attestation registration response (the JSON
// form of navigator.credentials.create's result), which VerifyU2FRegistration takes as
// public_key_credential. No dependency beyond Node itself. For trying things out, never for real
// accounts: the private key is thrown away, so the token can never sign in.
//
// As a module:  import { createCredential } from './soft-authenticator.mjs';
//               const credential = createCredential(options, { origin: 'http://localhost:4000' });
// As a command: the creation options as JSON on stdin, the credential as JSON on stdout:
//               echo "$OPTIONS" | ORIGIN=http://localhost:4000 node examples/soft-authenticator.mjs
//
// The origin is what a browser would put in clientDataJSON: it must be one of the gateway's
// WEBAUTHN_ORIGINS (default http://localhost:4000), and its host must fit the options' rp.id.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { argv, env, stdin, stdout } from 'node:process';
import { pathToFileURL } from 'node:url';

export const DEFAULT_ORIGIN = 'http://localhost:4000';

const FLAG_UP = 0x01; // user present
const FLAG_UV = 0x04; // user verified
const FLAG_AT = 0x40; // attested credential data included
const COSE_ES256 = -7;

const sha256 = (data) => createHash('sha256').update(data).digest();
const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

/** The CBOR (RFC 8949) this needs: integers, byte and text strings, arrays, maps (Map or plain object). */
export function cbor(value) {
  const head = (major, n) => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
    if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (Number.isInteger(value)) return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

/**
 * A new credential for RegisterU2F's creation options (ZITADEL's `{publicKey: {...}}` or the bare
 * PublicKeyCredentialCreationOptions), as the registration response JSON.
 */
export function createCredential(creationOptions, { origin = DEFAULT_ORIGIN } = {}) {
  const options = creationOptions?.publicKey ?? creationOptions;
  if (typeof options?.challenge !== 'string') throw new Error('creation options without a base64url challenge');
  const rpId = options.rp?.id ?? new URL(origin).hostname;

  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = publicKey.export({ format: 'jwk' });
  const coseKey = cbor(
    new Map([
      [1, 2], // kty: EC2
      [3, COSE_ES256], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x, 'base64url')],
      [-3, Buffer.from(jwk.y, 'base64url')],
    ]),
  );

  const credentialId = randomBytes(32);
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    sha256(rpId),
    Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
    Buffer.alloc(4), // signature counter 0
    Buffer.alloc(16), // AAGUID: zeros, as 'none' attestation reports it
    idLength,
    credentialId,
    coseKey,
  ]);
  const attestationObject = cbor(
    new Map([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  );

  const id = b64url(credentialId);
  return {
    id,
    rawId: id,
    type: 'public-key',
    response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['usb'] },
    clientExtensionResults: {},
    authenticatorAttachment: 'cross-platform',
  };
}

if (argv[1] && import.meta.url === pathToFileURL(argv[1]).href) {
  let input = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) input += chunk;
  stdout.write(`${JSON.stringify(createCredential(JSON.parse(input), { origin: env.ORIGIN || DEFAULT_ORIGIN }))}\n`);
}
