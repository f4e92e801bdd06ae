// GET /oauth/v2/keys (ZITADEL's path for its key set): the public key of the quick start's local
// signing key, so that what verifies ZITADEL's tokens by its key set (a gateway in upstream mode in
// front of this one, any resource server) verifies this gateway's too. Served only while the
// gateway signs its own tokens (no JWKS_URL).
import type { JWK } from 'jose';
import { AppError } from '../errors.ts';
import type { NodeRequest, NodeResponse, RoutedFace } from './face.ts';
import { sendJson } from './health.ts';

export const JWKS_PATH = '/oauth/v2/keys';

export function jwksFace(publicJwk: () => Promise<JWK>): RoutedFace {
  const refuse = (_req: NodeRequest, res: NodeResponse, _path: string, error: AppError, headers: Record<string, string>) =>
    sendJson(res as never, error.httpStatus ?? 400, { error: error.message }, headers);
  return {
    matches: (path) => path === JWKS_PATH,
    protocolOf: () => 'http',
    refuse,
    handler(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJson(res as never, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
        return;
      }
      publicJwk().then(
        (key) => sendJson(res as never, 200, { keys: [key] }, { 'cache-control': 'public, max-age=300' }),
        () => refuse(req, res, JWKS_PATH, new AppError('UNAVAILABLE', 'key unavailable'), {}),
      );
    },
  };
}
