// What a fake peer (SMTP server, SMS provider) received, and a way to wait for one item.

export interface Inbox<T> {
  readonly items: T[];
  add(item: T): void;
  /** Resolves with the first item (already there or still to come) that matches; rejects after timeoutMs. */
  waitFor(match: (item: T) => boolean, timeoutMs: number, describe: (items: T[]) => string): Promise<T>;
}

export function createInbox<T>(items: T[] = []): Inbox<T> {
  const listeners = new Set<() => void>();
  return {
    items,
    add(item) {
      items.push(item);
      for (const listener of [...listeners]) listener();
    },
    waitFor(match, timeoutMs, describe) {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = items.find(match);
          if (found === undefined) return false;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`nothing matching within ${timeoutMs} ms; received: ${describe(items)}`));
        }, timeoutMs);
        if (!check()) listeners.add(check);
      });
    },
  };
}
