// SMS through an HTTP webhook provider: POST {"to": "+41…", "text": "…"} as
// JSON with "Authorization: Bearer <SMS_WEBHOOK_TOKEN>". Any 2xx answer is a
// success; anything else, a timeout or a network error is a failed try.
import type { Config } from '../config.ts';
import type { DeliveryJob } from './port.ts';
import { PermanentDeliveryError, type Sender } from './worker.ts';

export interface WebhookSmsOptions {
  url: string;
  token?: string;
  codeTtlSeconds: number;
  timeoutMs?: number;
}

export function smsText(job: DeliveryJob, codeTtlSeconds: number): string {
  const minutes = Math.max(1, Math.round(codeTtlSeconds / 60));
  return `Your verification code is ${job.code}. It is valid for ${minutes} minutes.`;
}

export function createWebhookSmsSender(options: WebhookSmsOptions): Sender {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return {
    async send(job, deliveryId) {
      if (job.kind !== 'verify-phone') throw new PermanentDeliveryError('a mail job is not an SMS');
      // The same key for every try of one job: a provider that honours it sends one SMS.
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
        'idempotency-key': deliveryId,
      };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let res: Response;
      try {
        res = await fetch(options.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ to: job.to, text: smsText(job, options.codeTtlSeconds) }),
          redirect: 'error',
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } })?.cause?.code;
        throw new Error(`SMS provider not reachable: ${cause ?? (err as Error)?.name ?? 'error'}`);
      }
      await res.arrayBuffer().catch(() => undefined); // free the connection; the body is not needed
      if (res.status < 200 || res.status > 299) throw new Error(`SMS provider answered HTTP ${res.status}`);
    },
  };
}

export const smsSenderFromConfig = (config: Config): Sender | undefined =>
  config.sms.webhookUrl
    ? createWebhookSmsSender({ url: config.sms.webhookUrl, token: config.sms.webhookToken, codeTtlSeconds: config.codeTtlSeconds })
    : undefined;
