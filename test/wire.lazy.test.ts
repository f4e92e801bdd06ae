// The wire API is loaded at its first request (src/wire/lazy.ts), so a fresh gateway's
// first wire requests must be served as later ones are: each on a gateway of its own here.
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { wireTransport, WIRE_KINDS, zitadelClients } from './support/wire-clients.ts';

describe('the wire API on a gateway that has not loaded it yet', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('answers GraphQL before the wire is loaded, then 12 concurrent first calls over every RPC transport and REST alike', async () => {
    gw = await startGateway();
    const me = await gw.raw({ query: '{ me { id } }' });
    expect(me.data.me.id).toBeTruthy();
    const calls = WIRE_KINDS.flatMap((kind) =>
      [0, 1, 2].map(() => zitadelClients(wireTransport(kind, gw!.baseUrl, gw!.adminToken)).auth.getMyUser({})),
    );
    const rest = fetch(`${gw.baseUrl}/auth/v1/users/me`, { headers: { authorization: `Bearer ${gw.adminToken}` } });
    const answers = await Promise.all(calls);
    for (const a of answers) expect(a.user?.id).toBe(me.data.me.id);
    const restAnswer = await rest;
    expect(restAnswer.status).toBe(200);
    expect((await restAnswer.json()).user.id).toBe(me.data.me.id);
  });

  it("a first request on a path of the wire's shape that it does not serve: the wire's not found, as after loading", async () => {
    gw = await startGateway();
    const first = await fetch(`${gw.baseUrl}/v2/no-such-resource`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const again = await fetch(`${gw.baseUrl}/v2/no-such-resource`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(first.status).toBe(404);
    expect(again.status).toBe(404);
  });
});
