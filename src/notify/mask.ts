// Addresses in logs and dead letters: enough to tell them apart, not enough to read them.

/** user@example.com → u***@example.com; +41791234567 → +417******67 */
export function maskAddress(to: string): string {
  const at = to.indexOf('@');
  if (at > 0) return `${to[0]}***${to.slice(at)}`;
  return to.length > 6 ? `${to.slice(0, 4)}${'*'.repeat(to.length - 6)}${to.slice(-2)}` : '***';
}
