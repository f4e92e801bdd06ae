// Verification mail end to end: the gateway sends over SMTP to a real SMTP
// server (smtp-server on a loopback port); the test reads what arrived and
// verifies the email with the code from the mail. SPEC.md rules 1 and 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddHumanUserDocument, SetEmailDocument, UserDocument, VerifyEmailDocument } from './generated/graphql.ts';
import { startGateway, type TestGateway } from './support/gateway.ts';
import { everythingInRedis, holdsCode } from './support/redis-scan.ts';
import { describeWith } from './support/servers.ts';
import { codeIn, startSmtp, until, type ReceivedMail, type SmtpCatcher } from './support/smtp.ts';
import { composeVerificationEmail } from '../src/notify/email.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Mail', lastName: 'Receiver' };
const FROM = 'Identity Test <identity@auth.example>';
const DEFAULT_URL = 'https://default.example/verify?user={{.UserID}}&code={{.Code}}&org={{.OrgID}}';
const SMTP_PASSWORD = 'smtp-Pa55word!';

function emailSuite(name: string, env: () => Record<string, string>, redisUrl?: () => string) {
  describe(name, () => {
    let smtp: SmtpCatcher;
    let gw: TestGateway;

    beforeAll(async () => {
      smtp = await startSmtp();
      gw = await startGateway({
        env: {
          ...env(),
          SMTP_HOST: '127.0.0.1',
          SMTP_PORT: String(smtp.port),
          SMTP_USER: 'gateway',
          SMTP_PASSWORD,
          SMTP_FROM: FROM,
          DEFAULT_VERIFY_EMAIL_URL: DEFAULT_URL,
        },
      });
    });
    afterAll(async () => {
      await gw?.close();
      await smtp?.stop();
    });

    const verified = async (userId: string) => (await gw.send(UserDocument, { id: userId })).data!.user!.email;
    /** A mail sent after the ones in question: once it is here, they would be too (one worker, in order). */
    const sentinel = async () => {
      const email = `${unique('sentinel')}@example.com`;
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email } } });
      expect(res.errors, res.text).toBeUndefined();
      await smtp.waitFor((m) => m.to.includes(email));
    };
    const checkMail = (mail: ReceivedMail, to: string, subject: string) => {
      expect(mail.from).toBe('identity@auth.example');
      expect(mail.to).toEqual([to]);
      expect(mail.parsed.from?.value).toEqual([{ address: 'identity@auth.example', name: 'Identity Test' }]);
      expect((mail.parsed.to as { value: { address: string }[] }).value.map((v) => v.address)).toEqual([to]);
      expect(mail.parsed.subject).toBe(subject);
      expect(mail.auth).toEqual({ username: 'gateway', password: SMTP_PASSWORD });
    };

    it('rule 1: a new user with neither isVerified nor returnCode gets a mail whose code verifies the email', async () => {
      const email = `${unique('ada')}@example.com`;
      const urlTemplate = 'https://app.example/verify?u={{.UserID}}&c={{.Code}}&o={{ .OrgID }}';
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email, sendCode: { urlTemplate } } } });
      expect(res.errors, res.text).toBeUndefined();
      const userId = res.data!.addHumanUser.userId;
      expect(res.data!.addHumanUser.emailCode).toBeNull();

      const mail = await smtp.waitFor((m) => m.to.includes(email));
      checkMail(mail, email, 'Verify your email address');
      const code = codeIn(mail);
      const link = `https://app.example/verify?u=${userId}&c=${code}&o=${gw.defaultOrgId}`;
      expect(mail.parsed.text).toContain(link);
      // In the HTML every inserted value is escaped: the & of the link too.
      expect(mail.parsed.html).toContain(`href="${link.replaceAll('&', '&amp;')}"`);
      expect(mail.parsed.html).not.toContain(`href="${link}"`);
      expect(mail.parsed.html).toContain(`>${code}</strong>`);
      expect((await verified(userId)).isVerified).toBe(false);

      const verify = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: code } });
      expect(verify.errors, verify.text).toBeUndefined();
      expect(await verified(userId)).toEqual({ email, isVerified: true });
      expect(smtp.to(email)).toHaveLength(1);
      // Neither the code nor the SMTP password is in any log line.
      const logs = gw.logs.join('\n');
      expect(holdsCode(logs, code)).toBe(false);
      expect(logs).not.toContain(SMTP_PASSWORD);
    });

    it('rule 1: without urlTemplate the configured default link is used; returnCode or isVerified send nothing', async () => {
      const plain = `${unique('plain')}@example.com`;
      const returned = `${unique('returned')}@example.com`;
      const isVerified = `${unique('verified')}@example.com`;
      const a = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: plain } } });
      const b = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: returned, returnCode: true } } });
      const c = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: isVerified, isVerified: true } } });
      for (const r of [a, b, c]) expect(r.errors, r.text).toBeUndefined();

      const mail = await smtp.waitFor((m) => m.to.includes(plain));
      checkMail(mail, plain, 'Verify your email address');
      const userId = a.data!.addHumanUser.userId;
      const code = codeIn(mail);
      expect(mail.parsed.text).toContain(`https://default.example/verify?user=${userId}&code=${code}&org=${gw.defaultOrgId}`);

      await sentinel();
      expect(smtp.to(returned)).toEqual([]);
      expect(smtp.to(isVerified)).toEqual([]);
      expect(b.data!.addHumanUser.emailCode).toMatch(/^[A-Z0-9]{6}$/);

      const verify = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: code } });
      expect(verify.errors, verify.text).toBeUndefined();
      expect((await verified(userId)).isVerified).toBe(true);
    });

    it('rule 2: setEmail sends a mail to the new address whose code verifies it, or returns the code and sends nothing', async () => {
      const first = `${unique('first')}@example.com`;
      const created = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: first, isVerified: true } } });
      const userId = created.data!.addHumanUser.userId;

      const second = `${unique('second')}@example.com`;
      const urlTemplate = 'https://change.example/confirm/{{.Code}}?user={{.UserID}}';
      const changed = await gw.send(SetEmailDocument, { input: { userId, email: second, sendCode: { urlTemplate } } });
      expect(changed.errors, changed.text).toBeUndefined();
      expect(changed.data!.setEmail.verificationCode).toBeNull();
      expect(await verified(userId)).toEqual({ email: second, isVerified: false });

      const mail = await smtp.waitFor((m) => m.to.includes(second));
      checkMail(mail, second, 'Confirm your new email address');
      const code = codeIn(mail);
      expect(mail.parsed.text).toContain(`https://change.example/confirm/${code}?user=${userId}`);
      const verify = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: code } });
      expect(verify.errors, verify.text).toBeUndefined();
      expect(await verified(userId)).toEqual({ email: second, isVerified: true });

      const third = `${unique('third')}@example.com`;
      const returned = await gw.send(SetEmailDocument, { input: { userId, email: third, returnCode: true } });
      expect(returned.errors, returned.text).toBeUndefined();
      const returnedCode = returned.data!.setEmail.verificationCode!;
      expect(returnedCode).toMatch(/^[A-Z0-9]{6}$/);
      await sentinel();
      expect(smtp.to(third)).toEqual([]);
      expect(smtp.to(first)).toEqual([]);
      const verifyReturned = await gw.send(VerifyEmailDocument, { input: { userId, verificationCode: returnedCode } });
      expect(verifyReturned.errors, verifyReturned.text).toBeUndefined();
      expect(await verified(userId)).toEqual({ email: third, isVerified: true });
    });

    it('counts what it sent and leaves no job (nor clear code) behind', async () => {
      // A mail of its own, so the counts below are never 0 === 0 (run alone, nothing else has sent).
      const own = `${unique('counted')}@example.com`;
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: own } } });
      expect(res.errors, res.text).toBeUndefined();
      await smtp.waitFor((m) => m.to.includes(own));
      expect(smtp.mails.length).toBeGreaterThan(0);
      const metrics = gw.gateway.delivery!.metrics;
      await until(() => metrics.sent === smtp.mails.length, 5000, 'the last send to be counted');
      // One Message-ID per job (a second send of the same job would repeat it), in SMTP_FROM's domain.
      const ids = smtp.mails.map((m) => m.parsed.messageId);
      expect(new Set(ids).size).toBe(smtp.mails.length);
      for (const id of ids) expect(id).toMatch(/^<[A-Za-z0-9_-]{32}@auth\.example>$/);
      expect(metrics.queued).toBe(smtp.mails.length);
      expect(metrics.retried).toBe(0);
      expect(metrics.deadLettered).toBe(0);
      expect(await gw.gateway.delivery!.queue.depth()).toEqual({ queued: 0, pending: 0, delayed: 0, deadLettered: 0 });
      if (redisUrl) {
        const all = await everythingInRedis(redisUrl());
        for (const mail of smtp.mails) expect(holdsCode(all, codeIn(mail))).toBe(false);
      }
    });
  });
}

emailSuite('verification mail (embedded stores, in-process queue)', () => ({}));
describeWith('redis', 'verification mail with Redis', (url) => {
  emailSuite(
    'the same suite (Redis stream queue)',
    () => ({ REDIS_URL: url, CODE_HMAC_KEY: 'mail-key', DELIVERY_KEY_PREFIX: `${unique('mailtest')}:` }),
    () => url,
  );
});

describe('the verification mail itself', () => {
  const job = {
    kind: 'verify-email-on-create' as const,
    userId: '1<2',
    orgId: 'o"rg',
    to: 'x@example.com',
    code: 'AB12CD',
    urlTemplate: 'https://app.example/v?u={{.UserID}}&c={{.Code}}&o={{.OrgID}}',
  };
  it('escapes everything it inserts into the HTML and URI-encodes the link values', () => {
    const mail = composeVerificationEmail(job, { defaultUrlTemplate: DEFAULT_URL, codeTtlSeconds: 3600 });
    expect(mail.link).toBe('https://app.example/v?u=1%3C2&c=AB12CD&o=o%22rg');
    expect(mail.html).toContain('href="https://app.example/v?u=1%3C2&amp;c=AB12CD&amp;o=o%22rg"');
    expect(mail.html).not.toMatch(/&c=|<2|"rg/);
    expect(mail.text).toContain('valid for 1 hour');
  });
  it('a template that cannot be rendered is a permanent failure', () => {
    expect(() =>
      composeVerificationEmail({ ...job, urlTemplate: 'https://x/{{.Nope}}' }, { defaultUrlTemplate: DEFAULT_URL, codeTtlSeconds: 600 }),
    ).toThrow(/cannot be rendered/);
  });
});
