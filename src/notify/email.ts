// Verification mail: the message per kind (subject, text, HTML) and the SMTP sender (nodemailer).
import { createRequire } from 'node:module';
import type NodeMailer from 'nodemailer';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { renderUrlTemplate } from '../model/url-template.ts';
import { maskAddress } from './mask.ts';
import type { DeliveryJob } from './port.ts';
import { PermanentDeliveryError, type Sender } from './worker.ts';

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
  /** The verification link (also in both bodies). */
  link: string;
}

export interface ComposeOptions {
  /** Used when the job carries no urlTemplate (DEFAULT_VERIFY_EMAIL_URL). */
  defaultUrlTemplate: string;
  codeTtlSeconds: number;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

function validity(ttlSeconds: number): string {
  if (ttlSeconds % 3600 === 0) return ttlSeconds === 3600 ? '1 hour' : `${ttlSeconds / 3600} hours`;
  const minutes = Math.max(1, Math.round(ttlSeconds / 60));
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

const WORDING = {
  'verify-email-on-create': {
    subject: 'Verify your email address',
    lead: 'An account was created with this email address. To confirm that the address is yours, open this link:',
  },
  // Also the wording of resendEmailCode: it fits any pending address.
  'verify-email-on-change': {
    subject: 'Confirm your new email address',
    lead: 'This email address was set for your account. To confirm that the address is yours, open this link:',
  },
} as const;

/** The mail for a verify-email job; throws PermanentDeliveryError when the link cannot be rendered. */
export function composeVerificationEmail(job: DeliveryJob, options: ComposeOptions): EmailMessage {
  if (job.kind === 'verify-phone') throw new PermanentDeliveryError('a phone job is not a mail');
  let link: string;
  try {
    link = renderUrlTemplate(job.urlTemplate ?? options.defaultUrlTemplate, { userId: job.userId, code: job.code, orgId: job.orgId });
  } catch (err) {
    throw new PermanentDeliveryError(`the verification link cannot be rendered: ${(err as Error).message}`);
  }
  const { subject, lead } = WORDING[job.kind];
  const valid = validity(options.codeTtlSeconds);
  const ignore = 'If you did not expect this message, you can ignore it.';
  const text = [
    'Hello,',
    '',
    lead,
    '',
    link,
    '',
    `Or enter this verification code: ${job.code}`,
    '',
    `The code is valid for ${valid}. ${ignore}`,
    '',
  ].join('\n');
  const e = escapeHtml;
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${e(subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5">',
    '<p>Hello,</p>',
    `<p>${e(lead)}</p>`,
    `<p><a href="${e(link)}">${e(link)}</a></p>`,
    `<p>Or enter this verification code: <strong style="font-family: monospace; font-size: 1.3em">${e(job.code)}</strong></p>`,
    `<p>The code is valid for ${e(valid)}. ${e(ignore)}</p>`,
    '</body></html>',
    '',
  ].join('\n');
  return { subject, text, html, link };
}

/** Sends verification mail over SMTP (SMTP_HOST, SMTP_PORT, SMTP_SECURE, SMTP_USER, SMTP_PASSWORD, SMTP_FROM). */
export function createSmtpSender(config: Config): Sender {
  const { smtp } = config;
  if (!smtp.host) throw new Error('createSmtpSender needs SMTP_HOST');
  // Loaded only with SMTP_HOST: the quick start's gateway never holds nodemailer.
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof NodeMailer;
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
    // A dead or silent server fails the try quickly; the worker retries later.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const compose = { defaultUrlTemplate: config.defaultVerifyEmailUrl, codeTtlSeconds: config.codeTtlSeconds };
  const messageIdDomain = /@([^@\s>]+)>?\s*$/.exec(smtp.from)?.[1] ?? config.instanceDomain;
  return {
    async send(job, deliveryId) {
      const message = composeVerificationEmail(job, compose);
      await transport.sendMail({
        // One Message-ID per job, whichever worker sends it and however often: a receiver can drop a second copy.
        messageId: `<${deliveryId}@${messageIdDomain}>`,
        from: smtp.from,
        to: job.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
    },
    async close() {
      transport.close();
    },
  };
}

/**
 * Without SMTP_HOST: a mail is only logged, masked and without its code or
 * link (the quick start's behaviour; use returnCode to get codes there).
 */
export function createLoggingEmailSender(logger: Logger): Sender {
  return {
    async send(job) {
      logger.log('info', 'email not sent: no SMTP server configured (SMTP_HOST)', {
        kind: job.kind,
        userId: job.userId,
        orgId: job.orgId,
        to: maskAddress(job.to),
      });
    },
  };
}
