// Structured JSON log lines (pino) on stderr: {"level":"info","time":"…","msg":"…",…fields}.
// Callers pass no secrets: no codes, passwords, hashes, tokens or GraphQL variables. As a
// second line of defence, fields with those names are replaced by "[redacted]" wherever
// they sit in the top two levels of a line.
import { pino, type DestinationStream } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

const SECRET_FIELDS = [
  'password',
  'newPassword',
  'hashedPassword',
  'hash',
  'token',
  'authorization',
  'code',
  'verificationCode',
  'emailCode',
  'phoneCode',
  'clientSecret',
  'secret',
  'variables',
];

export function createLogger(level: string = 'info', write?: (line: string) => void): Logger {
  const stream: DestinationStream = write
    ? { write: (chunk: string) => write(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) }
    : // Synchronous: the last lines before process.exit (shutdown, fatal start errors) are not lost.
      pino.destination({ dest: 2, sync: true });
  const logger = pino(
    {
      level: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
      base: undefined, // no pid/hostname: the platform adds those
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]), censor: '[redacted]' },
    },
    stream,
  );
  return {
    log(lvl, msg, fields) {
      if (fields) logger[lvl](fields, msg);
      else logger[lvl](msg);
    },
  };
}
