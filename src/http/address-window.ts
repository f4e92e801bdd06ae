// Counts per client address in fixed windows, in this process alone: the /metrics rate limit
// on the main port and the HTTP/2 resets of an address (http2-sessions.ts). Unlike the request
// rate limit (rate-limit.ts, in Redis and shared by every gateway) these guard one process's
// own resources, so one gateway's count is the right one.
//
// Memory stays bounded whatever the peers do: the counts are dropped at the end of each window,
// and a window tracks at most `maxAddresses` addresses; past that, the addresses it has not
// seen share one count (an attacker cycling through addresses then limits only itself and
// the other newcomers of that window, never the addresses already counted).

/** The key of an address: IPv4 as it is (also when IPv6-mapped), IPv6 by its /64, what one host usually holds. */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0]!;
  const [head = '', tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

export interface AddressWindow {
  /** Counts one for the address in the current window; the address's count so far, this one included. */
  hit(address: string | undefined): number;
  /** Milliseconds until the current window ends. */
  msLeft(): number;
}

const OTHERS = '*';

export function createAddressWindow(options: { windowMs: number; maxAddresses?: number; now?: () => number }): AddressWindow {
  const { windowMs, maxAddresses = 10_000, now = Date.now } = options;
  let counts = new Map<string, number>();
  let windowStart = now();
  const roll = () => {
    const t = now();
    if (t - windowStart < windowMs) return;
    counts = new Map();
    windowStart = t - ((t - windowStart) % windowMs);
  };
  return {
    hit(address) {
      roll();
      let key = addressKey(address);
      if (!counts.has(key) && counts.size >= maxAddresses) key = OTHERS;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      return n;
    },
    msLeft() {
      roll();
      return Math.max(0, windowMs - (now() - windowStart));
    },
  };
}
