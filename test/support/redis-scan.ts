// Reads every value of every key in a Redis database (or of the keys matching a pattern),
// whatever its type, so a test can assert that a secret (a clear code) is stored nowhere.
import { Redis } from 'ioredis';

export async function everythingInRedis(url: string, match = '*'): Promise<string> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  await client.connect();
  try {
    const parts: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await client.type(key);
        parts.push(`${type} ${key}`);
        if (type === 'string') parts.push(String(await client.get(key)));
        else if (type === 'hash') parts.push(JSON.stringify(await client.hgetall(key)));
        else if (type === 'list') parts.push(JSON.stringify(await client.lrange(key, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await client.smembers(key)));
        else if (type === 'zset') parts.push(JSON.stringify(await client.zrange(key, '0', '-1')));
        else if (type === 'stream') parts.push(JSON.stringify(await client.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
    return parts.join('\n');
  } finally {
    client.disconnect();
  }
}

/** True when `code` appears in `text` as a whole token (not inside a longer id or hash). */
export const holdsCode = (text: string, code: string) => new RegExp(`(?<![A-Za-z0-9])${code}(?![A-Za-z0-9])`).test(text);
