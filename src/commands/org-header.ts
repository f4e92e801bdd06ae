// The organization a request names, read by one rule for every face and both implementations of
// the operations (the commands' request-context.ts, upstream mode's src/upstream/context.ts).
import { invalid } from '../errors.ts';

/** What the factory reads the headers through (fetch's Headers, or an adapter over node's). */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * The organization the request names: x-service-orgid or x-zitadel-orgid (ZITADEL's
 * clients), an empty one counting as absent. Both, naming two organizations, is
 * INVALID_ARGUMENT: which one the client (or a proxy that added one) meant cannot be told. An
 * input rule without I/O, so it is answered before authentication, as on every face.
 */
export function orgHeaderOf(headers: HeaderSource): string | null {
  const service = headers.get('x-service-orgid');
  const zitadel = headers.get('x-zitadel-orgid');
  if (service && zitadel && service !== zitadel)
    throw invalid('x-zitadel-orgid', 'names another organization than x-service-orgid: send one of them');
  return service || zitadel || null;
}
