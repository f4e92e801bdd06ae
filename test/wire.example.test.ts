// README's @zitadel/client example runs as written against a real gateway.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../src/model/users.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';

const run = promisify(execFile);

describe('examples/zitadel-client.mjs', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => gw?.close());

  it('creates, verifies, updates and reads back a user with ZITADEL client code, over gRPC', async () => {
    const { stdout } = await run(process.execPath, ['examples/zitadel-client.mjs'], { env: { ...process.env, GATEWAY: gw.baseUrl, TOKEN: gw.adminToken } });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(out.displayName).toBe('Ada King');
    const stored = await gw.gateway.deps.store.load<User>('user', out.userId);
    expect(stored!.state.profile.lastName).toBe('King');
    expect(stored!.state.email.isVerified).toBe(true);
    expect(String(stored!.sequence)).toBe(out.sequence);
  });
});
