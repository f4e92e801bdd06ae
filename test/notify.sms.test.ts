// SMS end to end (SPEC.md rule 3): a local HTTP server plays the webhook
// provider; the code in the SMS it receives verifies the phone. Without a
// provider nothing is sent and the mutation still succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddHumanUserDocument,
  ResendPhoneCodeDocument,
  UpdateHumanPhoneDocument,
  UserDocument,
  VerifyPhoneDocument,
} from './generated/graphql.ts';
import { onlyError, startGateway, type TestGateway } from './support/gateway.ts';
import { holdsCode } from './support/redis-scan.ts';
import { startSmsProvider, type SmsProvider, type SmsRequest } from './support/sms-provider.ts';

let seq = 0;
const unique = (p: string) => `${p}${Date.now().toString(36)}${(seq++).toString(36)}`;
const profile = { firstName: 'Sms', lastName: 'Receiver' };
const TOKEN = 'sms-token-8f3a1c';
let phoneSeq = 100;
/** A fresh valid Swiss mobile number, in the form a client sends and in E.164. */
const newPhone = () => {
  const n = String(phoneSeq++).padStart(3, '0');
  return { given: `+41 79 555 1${n[0]} ${n.slice(1)}`, e164: `+41795551${n}` };
};
const codeOf = (r: SmsRequest) => {
  const m = /code is ([A-Z0-9]{6})\b/.exec(r.body.text ?? '');
  if (!m) throw new Error(`no code in SMS: ${r.body.text}`);
  return m[1]!;
};

async function newUser(gw: TestGateway) {
  const res = await gw.send(AddHumanUserDocument, {
    input: { profile, email: { email: `${unique('sms')}@example.com`, isVerified: true } },
  });
  if (!res.data) throw new Error(res.text);
  return res.data.addHumanUser.userId;
}

describe('SMS through the webhook provider', () => {
  let sms: SmsProvider;
  let gw: TestGateway;
  beforeAll(async () => {
    sms = await startSmsProvider();
    gw = await startGateway({ env: { SMS_WEBHOOK_URL: sms.url, SMS_WEBHOOK_TOKEN: TOKEN, DELIVERY_BACKOFF_MS: '50' } });
  });
  afterAll(async () => {
    await gw?.close();
    await sms?.close();
  });
  const phoneOf = async (userId: string) => (await gw.send(UserDocument, { id: userId })).data!.user!.phone;
  const delivered = (to: string) => sms.requests.filter((r) => r.body.to === to && r.status === 200);
  /** An SMS sent after the ones in question: once it is here, they would be too (one worker, in order). */
  const sentinel = async () => {
    const userId = await newUser(gw);
    const phone = newPhone();
    await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: phone.given } });
    await sms.waitFor((r) => r.body.to === phone.e164);
  };

  it('updateHumanPhone with an unverified new number sends one SMS whose code verifyPhone accepts', async () => {
    const userId = await newUser(gw);
    const phone = newPhone();
    const res = await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: phone.given } });
    expect(res.errors, res.text).toBeUndefined();
    expect(await phoneOf(userId)).toEqual({ phone: phone.e164, isVerified: false });

    const request = await sms.waitFor((r) => r.body.to === phone.e164);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/sms');
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(request.body).sort()).toEqual(['text', 'to']);
    const code = codeOf(request);

    const verify = await gw.send(VerifyPhoneDocument, { input: { userId, verificationCode: code } });
    expect(verify.errors, verify.text).toBeUndefined();
    expect(await phoneOf(userId)).toEqual({ phone: phone.e164, isVerified: true });
    await sentinel();
    expect(delivered(phone.e164)).toHaveLength(1);
    const logs = gw.logs.join('\n');
    expect(holdsCode(logs, code)).toBe(false);
    expect(logs).not.toContain(TOKEN);
  });

  it('a number marked verified gets no SMS; addHumanUser with an unverified phone gets one', async () => {
    const userId = await newUser(gw);
    const quiet = newPhone();
    const res = await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: quiet.given, isPhoneVerified: true } });
    expect(res.errors, res.text).toBeUndefined();

    const phone = newPhone();
    const created = await gw.send(AddHumanUserDocument, {
      input: { profile, email: { email: `${unique('p')}@example.com`, isVerified: true }, phone: { phone: phone.given, sendCode: true } },
    });
    expect(created.errors, created.text).toBeUndefined();
    const code = codeOf(await sms.waitFor((r) => r.body.to === phone.e164));
    expect(delivered(quiet.e164)).toEqual([]);
    const verify = await gw.send(VerifyPhoneDocument, { input: { userId: created.data!.addHumanUser.userId, verificationCode: code } });
    expect(verify.errors, verify.text).toBeUndefined();
  });

  it('a provider answering 503 is tried again until it accepts; non-2xx is a failure', async () => {
    const userId = await newUser(gw);
    const phone = newPhone();
    const retriedBefore = gw.gateway.delivery!.metrics.retried;
    sms.status = 503;
    await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: phone.given } });
    await sms.waitFor((r) => r.body.to === phone.e164 && r.status === 503);
    await sms.waitFor(
      (r) => r.body.to === phone.e164 && r.status === 503 && sms.requests.filter((x) => x.body.to === phone.e164).length >= 2,
    );
    sms.status = 200;
    const ok = await sms.waitFor((r) => r.body.to === phone.e164 && r.status === 200);
    expect(gw.gateway.delivery!.metrics.retried).toBeGreaterThanOrEqual(retriedBefore + 2);
    // Every try of the job carries one Idempotency-Key, so a provider can send the SMS once.
    const keys = new Set(sms.requests.filter((r) => r.body.to === phone.e164).map((r) => r.headers['idempotency-key']));
    expect([...keys]).toEqual([ok.headers['idempotency-key']]);
    expect(ok.headers['idempotency-key']).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(ok.headers['idempotency-key']).not.toContain(codeOf(ok));
    const verify = await gw.send(VerifyPhoneDocument, { input: { userId, verificationCode: codeOf(ok) } });
    expect(verify.errors, verify.text).toBeUndefined();
  });

  it('resendPhoneCode sends a fresh code; the earlier one no longer verifies', async () => {
    const userId = await newUser(gw);
    const phone = newPhone();
    await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: phone.given } });
    const first = codeOf(await sms.waitFor((r) => r.body.to === phone.e164));
    const resent = await gw.send(ResendPhoneCodeDocument, { input: { userId } });
    expect(resent.errors, resent.text).toBeUndefined();
    const second = codeOf(await sms.waitFor((r) => r.body.to === phone.e164 && codeOf(r) !== first));
    const old = await gw.send(VerifyPhoneDocument, { input: { userId, verificationCode: first } });
    expect(onlyError(old).extensions?.code).toBe('INVALID_ARGUMENT');
    const verify = await gw.send(VerifyPhoneDocument, { input: { userId, verificationCode: second } });
    expect(verify.errors, verify.text).toBeUndefined();
    const again = await gw.send(ResendPhoneCodeDocument, { input: { userId } });
    expect(onlyError(again).extensions?.code).toBe('FAILED_PRECONDITION');
  });
});

describe('without an SMS provider', () => {
  let gw: TestGateway;
  let sms: SmsProvider;
  beforeAll(async () => {
    sms = await startSmsProvider(); // listening, but not configured: it must hear nothing
    gw = await startGateway({ env: {} });
  });
  afterAll(async () => {
    await gw?.close();
    await sms?.close();
  });

  it('updateHumanPhone succeeds and no SMS job is created; there is no code to verify or resend', async () => {
    const userId = await newUser(gw);
    const phone = newPhone();
    const res = await gw.send(UpdateHumanPhoneDocument, { input: { userId, phone: phone.given } });
    expect(res.errors, res.text).toBeUndefined();
    expect((await gw.send(UserDocument, { id: userId })).data!.user!.phone).toEqual({ phone: phone.e164, isVerified: false });
    expect(gw.gateway.deps.notifier.canDeliver('sms')).toBe(false);
    const jobs = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'delivery job queued' && l.userId === userId);
    expect(jobs).toEqual([]);
    expect(gw.gateway.delivery!.metrics.queued).toBe(0);
    expect(await gw.gateway.delivery!.queue.depth()).toMatchObject({ queued: 0, delayed: 0 });

    const verify = await gw.send(VerifyPhoneDocument, { input: { userId, verificationCode: 'ABC123' } });
    expect(onlyError(verify).extensions?.code).toBe('FAILED_PRECONDITION');
    const resend = await gw.send(ResendPhoneCodeDocument, { input: { userId } });
    expect(onlyError(resend).extensions?.code).toBe('FAILED_PRECONDITION');
    expect(onlyError(resend).message).toMatch(/SMS provider/);
    expect(sms.requests).toEqual([]);
  });
});
