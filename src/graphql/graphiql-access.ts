// Who may get the quick start's administrator token in the GraphiQL page: a browser on this
// machine that typed (or reloaded) this gateway's own loopback address, and nobody else.
//
// A loopback TCP peer alone proves little. A local reverse proxy makes every remote client a
// loopback peer; a page on attacker.example whose DNS name is rebound to 127.0.0.1 reaches the
// gateway from the operator's own browser, as a same-origin request of attacker.example; a
// page on another local port (http://localhost:3000) is "same-site" and may read whatever
// CORS_ORIGINS lets it. So the token goes only to a request that
//   - comes from a loopback peer and carries none of the headers a proxy adds,
//   - names this gateway's loopback listener in Host (127.0.0.1, localhost or [::1], with the
//     port the connection was accepted on): a rebound name is not one of these,
//   - is same-origin or a navigation typed by the user, when the browser says so
//     (Sec-Fetch-Site none or same-origin; Origin, when sent, the page's own origin).
// NODE_ENV=production never gets one (the caller checks; src/graphql/graphiql.ts isQuickStart).
import type { IncomingMessage } from 'node:http';

/**
 * Headers that say a proxy handled the request (whatever TRUST_PROXY says: a local proxy
 * makes a remote client look local). No browser sends any of them by itself.
 */
const PROXY_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'via',
  'true-client-ip',
  'cf-connecting-ip',
  'x-client-ip',
];

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** The Host values that name this listener on loopback: with its port, and without when it is the scheme's default. */
function ownLoopbackHosts(port: number, tls: boolean): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  const hosts = new Set(names.map((n) => `${n}:${port}`));
  if (port === (tls ? 443 : 80)) for (const n of names) hosts.add(n);
  return hosts;
}

/** True when this page request may carry the administrator token (see the top of this file). */
export function mayReceiveAdminToken(req: IncomingMessage, tls: boolean): boolean {
  const socket = req.socket;
  if (!isLoopbackAddress(socket?.remoteAddress)) return false;
  if (PROXY_HEADERS.some((name) => req.headers[name] !== undefined)) return false;
  // HTTP/2 names the host in :authority. The connection's local port is the port it was
  // accepted on: the one the server is bound to, not what PORT asked for (PORT=0).
  const host = (req.headers.host ?? req.headers[':authority']) as string | undefined;
  const port = socket.localPort;
  if (typeof host !== 'string' || !port || !ownLoopbackHosts(port, tls).has(host.toLowerCase())) return false;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'none' && site !== 'same-origin') return false;
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `${tls ? 'https' : 'http'}://${host.toLowerCase()}`) return false;
  return true;
}
