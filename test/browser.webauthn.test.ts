// The real client: headless Chromium with a virtual authenticator (DevTools
// protocol) runs navigator.credentials.create with the options from registerU2F
// on a page served from localhost, and verifyU2FRegistration accepts the result.
// Under CI a missing /usr/bin/chromium fails the suite; elsewhere it is skipped loudly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AddHumanUserDocument, RegisterU2FDocument, UserU2FTokensDocument, VerifyU2FRegistrationDocument } from './generated/graphql.ts';
import { browserSuite, launchChromium } from './support/browser.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import type { User } from '../src/model/users.ts';

const SUITE = 'WebAuthn registration in headless Chromium';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>U2F registration</title></head>
<body>
<script>
  const fromB64url = (s) => {
    const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  };
  const toB64url = (buf) => {
    let s = '';
    for (const byte of new Uint8Array(buf)) s += String.fromCharCode(byte);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  // What a frontend does with registerU2F's publicKeyCredentialCreationOptions.
  window.registerToken = async (options) => {
    const publicKey = {
      ...options,
      challenge: fromB64url(options.challenge),
      user: { ...options.user, id: fromB64url(options.user.id) },
      excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) })),
    };
    const credential = await navigator.credentials.create({ publicKey });
    return {
      id: credential.id,
      rawId: toB64url(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: toB64url(credential.response.clientDataJSON),
        attestationObject: toB64url(credential.response.attestationObject),
        transports: credential.response.getTransports ? credential.response.getTransports() : [],
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    };
  };
</script>
</body></html>`;

browserSuite(SUITE, () => {
  let pageServer: Server;
  let origin: string;
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    pageServer = createServer((req, res) => {
      if (req.url === '/' || req.url?.startsWith('/?')) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      pageServer.once('error', reject);
      pageServer.listen(0, '127.0.0.1', () => resolve());
    });
    // WebAuthn needs a secure context: http://localhost is one, http://127.0.0.1 is not an rp id.
    origin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
    gw = await startGateway({ env: { WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: origin } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    if (pageServer) await new Promise<void>((resolve) => pageServer.close(() => resolve()));
  });

  it('a virtual authenticator registers with the options from registerU2F and verifyU2FRegistration makes the token ready', async () => {
    const added = await gw.send(AddHumanUserDocument, {
      input: { profile: { firstName: 'Chrome', lastName: 'User' }, email: { email: `chrome${Date.now()}@example.com`, isVerified: true } },
    });
    expect(added.errors).toBeUndefined();
    const userId = added.data!.addHumanUser.userId;

    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: true, isUserVerified: true },
    });
    await page.goto(`${origin}/`);
    expect(await page.evaluate(() => window.isSecureContext)).toBe(true);

    const registered = await gw.send(RegisterU2FDocument, { input: { userId } });
    expect(registered.errors).toBeUndefined();
    const { u2fId, publicKeyCredentialCreationOptions: options } = registered.data!.registerU2F;
    expect((options as any).rp.id).toBe('localhost');

    const credential = (await page.evaluate((o) => (window as any).registerToken(o), options)) as Record<string, unknown>;
    expect(credential.type).toBe('public-key');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(Buffer.from(credentials[0]!.credentialId, 'base64').toString('base64url')).toBe(credential.id);

    const verified = await gw.send(VerifyU2FRegistrationDocument, {
      input: { userId, u2fId, publicKeyCredential: credential, tokenName: 'Chromium virtual key' },
    });
    expect(verified.errors).toBeUndefined();
    expect(verified.data!.verifyU2FRegistration.details.resourceOwner).toBe(gw.defaultOrgId);

    const tokens = (await gw.send(UserU2FTokensDocument, { id: userId })).data!.user!.u2fTokens;
    expect(tokens).toEqual([{ id: u2fId, name: 'Chromium virtual key', state: 'U2F_STATE_READY' }]);
    const stored = (await gw.gateway.deps.store.load<User>('user', userId))!.state.u2fTokens[0]!;
    expect(stored.credentialId).toBe(credential.id);
    expect(stored.transports).toEqual(['usb']);

    // The browser itself refuses to register the same authenticator twice (excludeCredentials).
    const again = await gw.send(RegisterU2FDocument, { input: { userId } });
    const secondOptions = again.data!.registerU2F.publicKeyCredentialCreationOptions as any;
    expect(secondOptions.excludeCredentials.map((c: any) => c.id)).toEqual([credential.id]);
    const refused = await page.evaluate(
      (o) =>
        (window as any).registerToken(o).then(
          () => 'created',
          (e: Error) => e.name,
        ),
      secondOptions,
    );
    expect(refused).toBe('InvalidStateError');

    await context.close();
    console.log('[browser] WebAuthn registration verified in Chromium');
  });
});
