// Upstream mode's view of a bearer token (src/upstream): the token itself goes to ZITADEL, which
// decides what it may do; the gateway only needs a key for its own limits (rate limits, body
// budgets, idempotency records) that a caller cannot forge. A JWT is verified against ZITADEL's
// keys (ZITADEL's /oauth/v2/keys, or JWKS_URL) and keyed by its subject; an opaque token (a PAT,
// an opaque access token) by a keyed hash of it, so the key names no secret. Issuer and audience
// are ZITADEL's to check when it gets the token.
import { createHmac } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { decodeProtectedHeader } from 'jose';
import { bearerToken, createTokenVerifier, type TokenVerifier } from './tokens.ts';

const looksLikeJwt = (token: string): boolean => {
  if (token.split('.').length !== 3) return false;
  try {
    return typeof decodeProtectedHeader(token).alg === 'string';
  } catch {
    return false;
  }
};

/** The largest key set read (ZITADEL's holds a few keys: kilobytes). */
const MAX_JWKS_BYTES = 1024 * 1024;

/** fetch for the key set over HTTPS trusting `ca` (ZITADEL_CA_FILE), as the upstream calls do; global fetch takes no CA. */
function fetchTrusting(ca: Buffer) {
  return (url: string, options: { headers: Headers; signal: AbortSignal }): Promise<Response> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(url, { ca, headers: Object.fromEntries(options.headers), signal: options.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_JWKS_BYTES) res.destroy(new Error('key set too large'));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500 })));
      });
      req.on('error', reject);
      req.end();
    });
}

export function createUpstreamTokenVerifier(jwksUrl: string, secret: string | Buffer, ca?: Buffer): TokenVerifier {
  // The JWTs: the gateway's own verifier (its key-set cache, its token cache, its errors), without issuer and audience.
  const jwts = createTokenVerifier({ jwksUrl, dataDir: '' }, ca && jwksUrl.startsWith('https:') ? { fetchKeys: fetchTrusting(ca) } : {});
  return {
    async verify(header) {
      const token = bearerToken(header);
      if (!looksLikeJwt(token)) return { userId: `opaque:${createHmac('sha256', secret).update(token).digest('base64url').slice(0, 32)}` };
      return jwts.verify(header);
    },
  };
}
