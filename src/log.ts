// Structured JSON log lines (pino) on stderr: {"level":"info","time":"…","msg":"…",…fields}.
// Callers pass no secrets: no codes, passwords, hashes, tokens or GraphQL variables. As a
// second line of defence, fields with those names are replaced by "[redacted]" wherever
// they sit in the top two levels of a line.
import { pino, type DestinationStream } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

const SECRET_FIELDS = new Set([
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
]);

/** The fields with any secret-named field (top two levels) replaced; the same object when there is none. */
function redacted(fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in fields) {
    const value = fields[key];
    let clean: unknown = value;
    if (SECRET_FIELDS.has(key)) clean = '[redacted]';
    else if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Error)) {
      for (const inner in value) {
        if (SECRET_FIELDS.has(inner)) {
          clean = { ...(value as Record<string, unknown>) };
          for (const k in clean as object) if (SECRET_FIELDS.has(k)) (clean as Record<string, unknown>)[k] = '[redacted]';
          break;
        }
      }
    }
    if (clean !== value) (out ??= { ...fields })[key] = clean;
  }
  return out ?? fields;
}

export function createLogger(level: string = 'info', write?: (line: string) => void): Logger {
  const stream: DestinationStream = write
    ? { write: (chunk: string) => write(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) }
    : // Written off the main thread, lines that arrive during a write going out together in
      // the next (one system call per busy moment, not one per request: 5% of the CPU of a
      // request went to its log line's write). pino writes what is left synchronously when
      // the process exits, process.exit included, so shutdown and fatal start errors keep
      // their last lines; a SIGKILL may lose the lines of the last write in flight.
      pino.destination({ dest: 2, sync: false });
  const logger = pino(
    {
      level: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
      base: undefined, // no pid/hostname: the platform adds those
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  return {
    log(lvl, msg, fields) {
      if (fields) logger[lvl](redacted(fields), msg);
      else logger[lvl](msg);
    },
  };
}
