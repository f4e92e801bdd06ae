// The example frontend (examples/console) as its users get it: its generated client is what
// GraphQL Code Generator makes of its documents today, it typechecks, Vite builds it against a
// gateway started here, and headless Chromium drives the built pages, served from
// http://localhost (a secure context, so WebAuthn runs with a virtual authenticator).
// CONSOLE_SCREENSHOT=<file.png> also saves a picture of the users page (for the README).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import codegenConfig from '../examples/console/codegen.ts';
import { browserSuite, launchChromium } from './support/browser.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { codeIn, startSmtp, type SmtpCatcher } from './support/smtp.ts';

const repo = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const consoleDir = path.join(repo, 'examples/console');
const run = `con${Date.now().toString(36)}`;

/** The built files, from a plain node:http server: what any static host does. */
function staticServer(dir: () => string): Server {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  return createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path.join(dir(), pathname === '/' ? 'index.html' : pathname);
    if (!file.startsWith(dir() + path.sep)) return void res.writeHead(404).end();
    readFile(file).then(
      (body) =>
        res.writeHead(200, { 'content-type': `${types[path.extname(file)] ?? 'application/octet-stream'}; charset=utf-8` }).end(body),
      () => res.writeHead(404).end(),
    );
  });
}

/** Waits (bounded) until the element shows the text: the page updates after the gateway answers. */
const shows = (locator: Locator, text: string) => locator.filter({ hasText: text }).first().waitFor({ timeout: 20_000 });

/** An inline mutation as the admin (setting the scene is not what this test is about). */
async function asAdmin(gw: TestGateway, query: string, variables: object, headers: Record<string, string> = {}) {
  const res = await gw.raw({ query, variables }, headers);
  if (res.errors || !res.data) throw new Error(res.text);
  return res.data;
}

async function addUser(gw: TestGateway, name: string, lastName: string): Promise<string> {
  const input = { username: name, profile: { firstName: 'Test', lastName }, email: { email: `${name}@example.com`, isVerified: true } };
  const data = await asAdmin(gw, 'mutation ($input: AddHumanUserInput!) { addHumanUser(input: $input) { userId } }', { input });
  return data.addHumanUser.userId;
}

/** `me` as the gateway has it, read with the user's own token. */
async function meOf(gw: TestGateway, token: string) {
  const res = await gw.raw(
    { query: '{ me { profile { firstName lastName displayName nickName } email { email isVerified } u2fTokens { name state } } }' },
    { authorization: `Bearer ${token}` },
  );
  if (!res.data) throw new Error(res.text);
  return res.data.me;
}

browserSuite('example console (examples/console) built by Vite, driven in Chromium', () => {
  let smtp: SmtpCatcher;
  let gw: TestGateway;
  let pageServer: Server;
  let origin: string;
  let outDir = '';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let userId: string;
  let token: string;

  beforeAll(async () => {
    smtp = await startSmtp();
    pageServer = staticServer(() => outDir);
    await new Promise<void>((resolve, reject) => pageServer.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
    // http://localhost is a secure context (WebAuthn) and an allowed CORS origin outside production.
    origin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
    gw = await startGateway({
      env: {
        WEBAUTHN_RP_ID: 'localhost',
        WEBAUTHN_ORIGINS: origin,
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_FROM: 'id@auth.example',
      },
    });
    outDir = mkdtempSync(path.join(tmpdir(), 'console-'));
    // Vite reads VITE_* from the environment while it builds; the URL is baked into the bundle.
    process.env.VITE_GATEWAY_URL = gw.url;
    try {
      await build({ configFile: path.join(consoleDir, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    } finally {
      delete process.env.VITE_GATEWAY_URL;
    }
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    page = await context.newPage();

    userId = await addUser(gw, `${run}-main`, 'Main');
    for (const n of [1, 2, 3]) await addUser(gw, `${run}-peer${n}`, `Peer${n}`);
    // A support-desk role: user.read in the organization, for the users page.
    await asAdmin(
      gw,
      'mutation ($input: AddOrgMemberInput!) { addOrgMember(input: $input) { details { sequence } } }',
      {
        input: { userId, roles: ['ORG_USER_VIEWER'] },
      },
      { 'x-service-orgid': gw.defaultOrgId },
    );
    token = await gw.tokenFor(userId);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await smtp?.stop();
    if (pageServer) await new Promise<void>((resolve) => pageServer.close(() => resolve()));
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('the committed src/gql is what codegen makes of the documents, and the console typechecks', async () => {
    const files: { filename: string; content: string }[] = await generate({ ...codegenConfig, silent: true }, false);
    const gqlDir = path.join(consoleDir, 'src/gql');
    expect(files.map((f) => path.relative(gqlDir, f.filename)).sort()).toEqual(readdirSync(gqlDir).sort());
    for (const f of files)
      expect(readFileSync(f.filename, 'utf8'), `${f.filename} is stale: npx graphql-codegen --config examples/console/codegen.ts`).toBe(
        f.content,
      );

    const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
    const checked = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', consoleDir]).catch((e) => e);
    expect(`${checked.stdout}${checked.stderr}`).toBe('');
  });

  it('account: sign in with a token, update the profile, change and verify the email, register a security key', async () => {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: true, isUserVerified: true },
    });
    await page.goto(`${origin}/#/account`);
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const me = page.locator('#me');
    await shows(me, `${run}-main@example.com (verified)`);
    expect(await page.locator('#signed-in').textContent()).toBe('signed in');

    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Display name').fill('Ada L.');
    await page.getByLabel('Nickname').fill('countess');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await shows(page.getByRole('status'), 'Profile saved.');
    expect(await me.textContent()).toContain('Ada Lovelace');
    expect(await me.textContent()).toContain('Ada L.');
    expect((await meOf(gw, token)).profile).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      displayName: 'Ada L.',
      nickName: 'countess',
    });

    const address = `${run}-new@example.com`;
    await page.getByLabel('New email').fill(address);
    await page.getByRole('button', { name: 'Change email' }).click();
    await shows(me, `${address} (not verified)`);
    const code = codeIn(await smtp.waitFor((m) => m.to.includes(address)));
    // A wrong code first: the page shows the gateway's error with its code.
    await page.getByLabel('Verification code').fill(code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
    await page.getByRole('button', { name: 'Verify email' }).click();
    await shows(page.locator('#verify-email [role=alert]'), '(INVALID_ARGUMENT)');
    await page.getByLabel('Verification code').fill(code);
    await page.getByRole('button', { name: 'Verify email' }).click();
    await shows(me, `${address} (verified)`);
    expect((await meOf(gw, token)).email).toEqual({ email: address, isVerified: true });

    await page.getByLabel('Key name').fill('Console key');
    await page.getByRole('button', { name: 'Register security key' }).click();
    await shows(page.locator('#security-keys'), 'Console key: ready');
    expect((await meOf(gw, token)).u2fTokens).toEqual([{ name: 'Console key', state: 'U2F_STATE_READY' }]);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
  });

  it('users: the search finds the users, pages of two go forward and back, a user opens on its history', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search').fill(run);
    await page.getByLabel('Page size').fill('2');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const count = page.locator('#result-count');
    const usernames = () => page.locator('#results tbody tr td:first-child').allTextContents();
    await shows(count, '4 users match. Page 1.');
    const first = await usernames();
    expect(first).toHaveLength(2);

    await page.getByRole('button', { name: 'Next page' }).click();
    await shows(count, '4 users match. Page 2.');
    const second = await usernames();
    expect([...first, ...second].sort()).toEqual([`${run}-main`, `${run}-peer1`, `${run}-peer2`, `${run}-peer3`]);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await shows(count, '4 users match. Page 1.');
    expect(await usernames()).toEqual(first);

    await page.getByLabel('Search').fill(`${run}-main`);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await shows(count, '1 user matches. Page 1.');
    await page.getByRole('button', { name: `History of ${run}-main` }).click();
    const history = page.locator('#history');
    await shows(history.locator('h2'), `History of ${run}-main`);
    const types = await history.locator('li.event > strong').allTextContents();
    // Newest first: what the account test just did, on top of the set-up (creation, the role).
    expect(types).toEqual([
      'user.u2f.verified',
      'user.u2f.added',
      'user.email.verified',
      'user.email.changed',
      'user.profile.changed',
      'user.member-of.recorded',
      'user.added',
    ]);
    expect(await history.textContent()).toContain(`by ${run}-main`);

    if (process.env.CONSOLE_SCREENSHOT) await page.screenshot({ path: process.env.CONSOLE_SCREENSHOT, fullPage: false });
  });
});
