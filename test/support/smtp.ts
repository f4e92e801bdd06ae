// A real SMTP server for the tests (smtp-server on a loopback port): it
// receives what the gateway sends, parsed with mailparser, and can be stopped,
// started again on the same port, or told to refuse every recipient.
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createInbox } from './inbox.ts';
import { freePort } from './net.ts';

export interface ReceivedMail {
  /** SMTP envelope. */
  from: string;
  to: string[];
  /** AUTH user and password, when the client logged in. */
  auth?: { username?: string; password?: string };
  parsed: ParsedMail;
  raw: string;
}

export interface SmtpCatcher {
  port: number;
  mails: ReceivedMail[];
  /** RCPT TO commands seen (refused ones too). */
  recipientsTried: string[];
  /** Answer every RCPT TO with 451 (a temporary failure): sending never succeeds. */
  refuseAll: boolean;
  listen(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves with the first mail (already received or coming) that matches. */
  waitFor(match: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Mails to an address. */
  to(address: string): ReceivedMail[];
}

export async function startSmtp(options: { port?: number; listen?: boolean } = {}): Promise<SmtpCatcher> {
  const port = options.port ?? (await freePort());
  let server: SMTPServer | undefined;
  // Not listening yet: the port is held by a server that drops every connection, so a send
  // fails at once and no other server started meanwhile (another test's) can take the port.
  let holder: NetServer | undefined;
  if (options.listen === false) {
    const held = createNetServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => held.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    holder = held;
  }
  const inbox = createInbox<ReceivedMail>();

  const catcher: SmtpCatcher = {
    port,
    mails: inbox.items,
    recipientsTried: [],
    refuseAll: false,
    async listen() {
      const held = holder;
      holder = undefined;
      if (held) await new Promise<void>((resolve) => held.close(() => resolve()));
      server = new SMTPServer({
        authOptional: true,
        allowInsecureAuth: true,
        disabledCommands: ['STARTTLS'],
        logger: false,
        onAuth(auth, _session, callback) {
          callback(null, { user: { username: auth.username, password: auth.password } });
        },
        onRcptTo(address, _session, callback) {
          catcher.recipientsTried.push(address.address);
          if (catcher.refuseAll) return callback(Object.assign(new Error('Mailbox busy, try later'), { responseCode: 451 }));
          callback();
        },
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', async () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            const parsed = await simpleParser(raw);
            const envelopeFrom = session.envelope.mailFrom;
            inbox.add({
              from: envelopeFrom ? envelopeFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              auth: session.user as ReceivedMail['auth'],
              parsed,
              raw,
            });
            callback();
          });
        },
      });
      server.on('error', () => {});
      return new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', () => resolve());
      });
    },
    stop() {
      holder?.close();
      holder = undefined;
      const s = server;
      server = undefined;
      return new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
    },
    waitFor: (match, timeoutMs = 15_000) =>
      inbox.waitFor(match, timeoutMs, (all) => all.map((m) => `${m.to.join(',')}: ${m.parsed.subject}`).join('; ') || 'none'),
    to(address) {
      return catcher.mails.filter((m) => m.to.includes(address));
    },
  };
  if (options.listen !== false) await catcher.listen();
  return catcher;
}

/** The verification code in a mail's text ("…verification code: ABC123"). */
export function codeIn(mail: ReceivedMail): string {
  const m = /verification code: ([A-Z0-9]{6})\b/.exec(mail.parsed.text ?? '');
  if (!m) throw new Error(`no code in mail: ${mail.parsed.text}`);
  return m[1]!;
}

/** Polls until check() is true. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
