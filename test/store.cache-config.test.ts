// SNAPSHOT_CACHE_MB: read by loadConfig (a whole number, or the start stops), and handed by
// openStores to the embedded store, whose memory then holds no more user state than that.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { userEvent, type User, type UserAdded } from '../src/model/users.ts';
import type { SqliteStore } from '../src/store/sqlite.ts';
import { openStores } from '../src/stores.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('SNAPSHOT_CACHE_MB', () => {
  it('is 32 when unset and a whole number when set; anything else stops the start with its name', () => {
    expect(loadConfig({}).snapshotCacheMb).toBe(32);
    expect(loadConfig({ SNAPSHOT_CACHE_MB: '' }).snapshotCacheMb).toBe(32);
    expect(loadConfig({ SNAPSHOT_CACHE_MB: '256' }).snapshotCacheMb).toBe(256);
    expect(loadConfig({ SNAPSHOT_CACHE_MB: '0' }).snapshotCacheMb).toBe(0);
    for (const bad of ['lots', '-1', '1.5', '64MB', '0x10'])
      expect(() => loadConfig({ SNAPSHOT_CACHE_MB: bad }), bad).toThrow(`SNAPSHOT_CACHE_MB: "${bad}" is not a whole number`);
  });

  it("bounds the embedded store's memory: a user heavier than the setting is served from disk, never held", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cache-config-'));
    dirs.push(dataDir);
    const config = loadConfig({ DATA_DIR: dataDir, SNAPSHOT_CACHE_MB: '1' });
    const stores = await openStores(
      config,
      createLogger('warn', () => {}),
    );
    const store = stores.store as SqliteStore;
    try {
      const user = (name: string, values: number): UserAdded => ({
        username: name,
        profile: {
          firstName: 'Ada',
          lastName: 'Lovelace',
          nickName: null,
          displayName: null,
          preferredLanguage: null,
          gender: 'GENDER_UNSPECIFIED',
        },
        email: { email: `${name}@example.com`, isVerified: false },
        phone: null,
        passwordHash: null,
        passwordChangeRequired: false,
        idpLinks: [],
        u2fTokens: [],
        metadata: Array.from({ length: values }, (_, k) => ({ key: `k${k}`, value: Buffer.alloc(375_000, k).toString('base64') })),
      });
      const add = (id: string, u: UserAdded) =>
        store.append(
          { aggregateType: 'user', aggregateId: id, sequence: 1, ...userEvent.added(u), creator: 'tester', resourceOwner: 'org-1' },
          { base: null },
        );

      await add('small', user('small', 1)); // half a megabyte: held
      expect(store.stats.cached).toBe(1);
      const held = store.stats.cachedBytes;
      expect(held).toBeGreaterThan(500_000);
      expect(held).toBeLessThanOrEqual(1024 * 1024);

      await add('heavy', user('heavy', 3)); // 1.5 MB: over the setting
      const read = store.stats.statesRead;
      for (let i = 0; i < 2; i++)
        expect((await store.load<User>('user', 'heavy'))?.state.metadata.map((m) => m.value.length)).toEqual([500_000, 500_000, 500_000]);
      expect(store.stats.statesRead - read).toBe(2);
      expect(store.stats.cachedBytes).toBe(held);
    } finally {
      await stores.close();
    }
  });
});
