// Bytes of request bodies in flight, per client address and for the whole process.
// The edge reserves, before a body is read, the most it can bring in (its
// Content-Length, or for a body of unknown length the cap it is read up to), and
// drops the reservation once the answer has gone out or the connection closed. A
// request that does not fit is refused before its body is read, so no client, and
// no crowd of them, makes the process hold more bodies than this at once.

export type BudgetFull = 'client' | 'process';

export interface BodyBudget {
  /** A release function (safe to call more than once), or which budget is full. */
  reserve(client: string, bytes: number): (() => void) | BudgetFull;
  readonly bytesInFlight: number;
}

const nothing = () => {};

export function createBodyBudget(limits: { perClient: number; total: number }): BodyBudget {
  const byClient = new Map<string, number>();
  let total = 0;
  return {
    get bytesInFlight() {
      return total;
    },
    reserve(client, bytes) {
      if (bytes <= 0) return nothing;
      const held = byClient.get(client) ?? 0;
      if (held + bytes > limits.perClient) return 'client';
      if (total + bytes > limits.total) return 'process';
      byClient.set(client, held + bytes);
      total += bytes;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= bytes;
        const left = byClient.get(client)! - bytes;
        if (left > 0) byClient.set(client, left);
        else byClient.delete(client);
      };
    },
  };
}
