// resendEmailCode / resendPhoneCode end to end, with a real SMTP server:
// a fresh code voids the old one, the per-user limit, who may resend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  ResendEmailCodeDocument,
  ResendPhoneCodeDocument,
  UserDocument,
  VerifyEmailDocument,
} from './generated/graphql.ts';
import { expectRestStatus, onlyError, startGateway, violatedFields, type TestGateway } from './support/gateway.ts';
import { describeWith } from './support/servers.ts';
import { codeIn, startSmtp, until, type SmtpCatcher } from './support/smtp.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Re', lastName: 'Send' };

function resendSuite(name: string, env: () => Record<string, string>) {
  describe(name, () => {
    let smtp: SmtpCatcher;
    let gw: TestGateway;
    beforeAll(async () => {
      smtp = await startSmtp();
      gw = await startGateway({ env: { ...env(), SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'id@auth.example' } });
    });
    afterAll(async () => {
      await gw?.close();
      await smtp?.stop();
    });

    const newUser = async (email: Record<string, unknown> = { returnCode: true }) => {
      const address = `${unique('re')}@example.com`;
      const res = await gw.send(AddHumanUserDocument, { input: { profile, email: { email: address, ...email } } });
      if (!res.data) throw new Error(res.text);
      return { userId: res.data.addHumanUser.userId, email: address, returnedCode: res.data.addHumanUser.emailCode };
    };
    const mailsTo = (address: string) => smtp.to(address);

    it('issues a fresh code: the old one no longer verifies, the one from the new mail does', async () => {
      const user = await newUser({});
      const first = codeIn(await smtp.waitFor((m) => m.to.includes(user.email)));

      const template = 'https://resend.example/v?u={{.UserID}}&c={{.Code}}';
      const res = await gw.send(ResendEmailCodeDocument, { input: { userId: user.userId, urlTemplate: template } });
      expect(res.errors, res.text).toBeUndefined();
      // No event: the details are the user's current ones.
      expect(res.data!.resendEmailCode.details).toMatchObject({ sequence: '1', creationDate: null, resourceOwner: gw.defaultOrgId });

      await until(() => mailsTo(user.email).length === 2, 15_000, 'the second mail');
      const mail = mailsTo(user.email)[1]!;
      const second = codeIn(mail);
      expect(mail.parsed.subject).toBe('Confirm your new email address');
      expect(mail.parsed.text).toContain(`https://resend.example/v?u=${user.userId}&c=${second}`);
      expect(second).not.toBe(first);

      const old = await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: first } });
      expect(onlyError(old).extensions?.code).toBe('INVALID_ARGUMENT');
      const ok = await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: second } });
      expect(ok.errors, ok.text).toBeUndefined();
      expect((await gw.send(UserDocument, { id: user.userId })).data!.user!.email.isVerified).toBe(true);

      const verified = await gw.send(ResendEmailCodeDocument, { input: { userId: user.userId } });
      expect(onlyError(verified).extensions?.code).toBe('FAILED_PRECONDITION');
      expectRestStatus(verified, 409);
    });

    it('a code returned at creation is void after a resend too', async () => {
      const user = await newUser();
      expect(user.returnedCode).toMatch(/^[A-Z0-9]{6}$/);
      expect((await gw.send(ResendEmailCodeDocument, { input: { userId: user.userId } })).errors).toBeUndefined();
      const fresh = codeIn(await smtp.waitFor((m) => m.to.includes(user.email)));
      if (fresh !== user.returnedCode) {
        const old = await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: user.returnedCode! } });
        expect(onlyError(old).extensions?.code).toBe('INVALID_ARGUMENT');
      }
      expect((await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: fresh } })).errors).toBeUndefined();
    });

    it('the 6th resend within the hour is RESOURCE_EXHAUSTED (REST status 429, HTTP 200); another user is not affected', async () => {
      const user = await newUser();
      for (let i = 1; i <= 5; i++) {
        const res = await gw.send(ResendEmailCodeDocument, { input: { userId: user.userId } });
        expect(res.errors, `resend ${i}: ${res.text}`).toBeUndefined();
      }
      const sixth = await gw.send(ResendEmailCodeDocument, { input: { userId: user.userId } });
      const err = onlyError(sixth);
      expect(err.extensions?.code).toBe('RESOURCE_EXHAUSTED');
      expect(err.extensions?.grpcCode).toBe(8);
      expectRestStatus(sixth, 429);
      expect(sixth.data?.resendEmailCode ?? null).toBeNull();
      const retry = err.extensions?.details?.find((d: any) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo');
      expect(retry?.retryDelay).toMatch(/^\d+s$/);
      expect(Number.parseInt(retry.retryDelay, 10)).toBeGreaterThan(3500);

      await until(() => mailsTo(user.email).length === 5, 15_000, 'five mails');
      // The last mail's code is the one that verifies (each resend voided the one before).
      const last = codeIn(mailsTo(user.email)[4]!);
      expect((await gw.send(VerifyEmailDocument, { input: { userId: user.userId, verificationCode: last } })).errors).toBeUndefined();

      const other = await newUser();
      expect((await gw.send(ResendEmailCodeDocument, { input: { userId: other.userId } })).errors).toBeUndefined();
    });

    it('the user itself may resend; a plain user may not for another user; unknown users and bad templates are refused', async () => {
      const self = await newUser();
      const selfToken = await gw.tokenFor(self.userId);
      const own = await gw.send(ResendEmailCodeDocument, { input: { userId: self.userId } }, { token: selfToken });
      expect(own.errors, own.text).toBeUndefined();
      await smtp.waitFor((m) => m.to.includes(self.email));

      const victim = await newUser();
      const denied = await gw.send(ResendEmailCodeDocument, { input: { userId: victim.userId } }, { token: selfToken });
      expect(onlyError(denied).extensions?.code).toBe('PERMISSION_DENIED');
      expectRestStatus(denied, 403);
      const deniedPhone = await gw.send(ResendPhoneCodeDocument, { input: { userId: victim.userId } }, { token: selfToken });
      expect(onlyError(deniedPhone).extensions?.code).toBe('PERMISSION_DENIED');

      const anonymous = await gw.send(ResendEmailCodeDocument, { input: { userId: victim.userId } }, { token: null });
      expect(onlyError(anonymous).extensions?.code).toBe('UNAUTHENTICATED');
      const missing = await gw.send(ResendEmailCodeDocument, { input: { userId: 'no-such-user' } });
      expect(onlyError(missing).extensions?.code).toBe('NOT_FOUND');
      const bad = await gw.send(ResendEmailCodeDocument, {
        input: { userId: victim.userId, urlTemplate: 'https://x.example/{{.Secret}}' },
      });
      expect(onlyError(bad).extensions?.code).toBe('INVALID_ARGUMENT');
      expect(violatedFields(onlyError(bad))).toEqual(['input.urlTemplate']);
      expect(mailsTo(victim.email)).toEqual([]);
    });

    it('resendPhoneCode: no phone, or no SMS provider configured, is FAILED_PRECONDITION', async () => {
      const noPhone = await newUser();
      const res = await gw.send(ResendPhoneCodeDocument, { input: { userId: noPhone.userId } });
      expect(onlyError(res).extensions?.code).toBe('FAILED_PRECONDITION');
      expect(onlyError(res).message).toMatch(/no phone/);
      const withPhone = await gw.send(AddHumanUserDocument, {
        input: { profile, email: { email: `${unique('ph')}@example.com`, isVerified: true }, phone: { phone: '+41 79 555 00 11' } },
      });
      const noProvider = await gw.send(ResendPhoneCodeDocument, { input: { userId: withPhone.data!.addHumanUser.userId } });
      expect(onlyError(noProvider).extensions?.code).toBe('FAILED_PRECONDITION');
      expect(onlyError(noProvider).message).toMatch(/SMS provider/);
    });
  });
}

resendSuite('resending codes (embedded stores: memory limit, in-process queue)', () => ({}));
describeWith('redis', 'resending codes with Redis', (url) => {
  resendSuite('the same suite (limit and queue in Redis)', () => ({
    REDIS_URL: url,
    CODE_HMAC_KEY: 'resend-key',
    DELIVERY_KEY_PREFIX: `${unique('rs')}:`,
  }));
});
