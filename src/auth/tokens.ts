// Bearer JWT verification (JWKS in production, the local key in quick start) and the
// quick-start signer. docs/authentication.md.
import {
  createRemoteJWKSet,
  customFetch,
  errors,
  jwtVerify,
  SignJWT,
  type FetchImplementation,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from 'jose';
import type { Config } from '../config.ts';
import { unauthenticated, unavailable } from '../errors.ts';
import { LOCAL_KEY_ALG, loadOrCreateLocalKey, type LocalKey } from './local-key.ts';

/** Issuer and audience left out: not checked (upstream mode leaves them to ZITADEL, which gets the token). */
type AuthConfig = Pick<Config, 'jwksUrl' | 'dataDir'> & Partial<Pick<Config, 'jwtIssuer' | 'jwtAudience'>>;

export interface TokenVerifier {
  verify(authorizationHeader: string | null | undefined): Promise<{ userId: string }>;
}

export interface TokenVerifierOptions {
  /** Verified tokens remembered; 0 disables the cache. */
  cacheSize?: number;
  /** Longest a cached verification is trusted before the signature is checked again. */
  cacheTtlMs?: number;
  /** How the key set is fetched (upstream mode: over HTTPS trusting ZITADEL_CA_FILE); default: global fetch. */
  fetchKeys?: FetchImplementation;
}

const MAX_TOKEN_LENGTH = 8192;

/** Memoizes an async load; a failure is not remembered, so the next call retries. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () =>
    (p ??= load().catch((err: unknown) => {
      p = undefined;
      throw err;
    }));
}

class KeySourceUnavailable extends Error {}

/** Key problems caused by the token (unknown kid/alg) stay token errors; fetch failures do not. */
function remoteKeys(url: string, fetchKeys?: FetchImplementation): JWTVerifyGetKey {
  const jwks = createRemoteJWKSet(new URL(url), fetchKeys ? { [customFetch]: fetchKeys } : {});
  return async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (err) {
      if (
        err instanceof errors.JWKSNoMatchingKey ||
        err instanceof errors.JWKSMultipleMatchingKeys ||
        err instanceof errors.JOSENotSupported
      ) {
        throw err;
      }
      throw new KeySourceUnavailable('JWKS unavailable', { cause: err });
    }
  };
}

export function bearerToken(header: string | null | undefined): string {
  if (!header) throw unauthenticated('Missing bearer token');
  const m = /^Bearer +([A-Za-z0-9\-_.]+) *$/i.exec(header);
  if (!m?.[1] || m[1].length > MAX_TOKEN_LENGTH) throw unauthenticated('Authorization header must be "Bearer <token>"');
  return m[1];
}

export function createTokenVerifier(config: AuthConfig, opts: TokenVerifierOptions = {}): TokenVerifier {
  const verifyOptions: JWTVerifyOptions = {
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    requiredClaims: ['sub', 'exp'],
  };
  // The key (or key set) is set up once; loading the local key is not a token error.
  let getCheck: () => Promise<(token: string) => Promise<JWTVerifyResult>>;
  if (config.jwksUrl) {
    const keys = remoteKeys(config.jwksUrl, opts.fetchKeys);
    const check = (token: string) => jwtVerify(token, keys, verifyOptions);
    getCheck = async () => check;
  } else {
    const local = once(async () => {
      const { publicKey } = await loadOrCreateLocalKey(config.dataDir);
      return (token: string) => jwtVerify(token, publicKey, { ...verifyOptions, algorithms: [LOCAL_KEY_ALG] });
    });
    getCheck = local;
  }

  // A request usually repeats the caller's token, and an ECDSA/RSA verify costs far more
  // than the rest of a cheap mutation. Only fully verified tokens are cached, keyed by the
  // whole token string; exp is re-checked on every hit and an entry is trusted at most
  // cacheTtlMs, which bounds how long a key removed from the JWKS keeps working (jose's
  // own JWKS cache already allows minutes of that). Map order gives LRU eviction.
  const cacheSize = opts.cacheSize ?? 1000;
  const cacheTtlMs = opts.cacheTtlMs ?? 5 * 60_000;
  const cache = new Map<string, { userId: string; expMs: number; until: number }>();

  return {
    async verify(authorizationHeader) {
      const token = bearerToken(authorizationHeader);
      const now = Date.now();
      const hit = cache.get(token);
      if (hit) {
        cache.delete(token);
        if (hit.expMs <= now) throw unauthenticated('Token expired');
        if (hit.until > now) {
          cache.set(token, hit);
          return { userId: hit.userId };
        }
      }
      const check = await getCheck();
      let payload: JWTPayload;
      try {
        ({ payload } = await check(token));
      } catch (err) {
        if (err instanceof KeySourceUnavailable) throw unavailable('Token keys cannot be fetched, try again');
        if (err instanceof errors.JWTExpired) throw unauthenticated('Token expired');
        if (err instanceof errors.JOSEError) throw unauthenticated('Invalid token');
        throw err;
      }
      const { sub, exp } = payload;
      if (typeof sub !== 'string' || sub === '' || typeof exp !== 'number') throw unauthenticated('Invalid token');
      if (cacheSize > 0) {
        if (cache.size >= cacheSize) cache.delete(cache.keys().next().value as string);
        cache.set(token, { userId: sub, expMs: exp * 1000, until: now + cacheTtlMs });
      }
      return { userId: sub };
    },
  };
}

export interface LocalTokenSigner {
  sign(userId: string, ttlSeconds?: number): Promise<string>;
}

export function createLocalTokenSigner(config: Pick<Config, 'jwtIssuer' | 'jwtAudience' | 'dataDir'>): LocalTokenSigner {
  const key = once<LocalKey>(() => loadOrCreateLocalKey(config.dataDir));
  return {
    async sign(userId, ttlSeconds = 3600 * 24) {
      if (!userId) throw new Error('userId is required');
      const { privateKey, kid } = await key();
      const iat = Math.floor(Date.now() / 1000);
      return new SignJWT({})
        .setProtectedHeader({ alg: LOCAL_KEY_ALG, kid, typ: 'JWT' })
        .setIssuer(config.jwtIssuer)
        .setAudience(config.jwtAudience)
        .setSubject(userId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttlSeconds)
        .sign(privateKey);
    },
  };
}
