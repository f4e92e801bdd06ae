// Structured log lines (pino) on stderr: JSON, {"level":"info","time":"…","msg":"…",…fields},
// for collectors; or, for a person at a terminal, one readable line each (pino-pretty):
// `[04:40:00.000] INFO: msg {fields}`. LOG_FORMAT=json|pretty chooses; unset, pretty when
// stderr is a terminal outside NODE_ENV=production (logFormatFor below).
// Callers pass no secrets: no codes, passwords, hashes, tokens or GraphQL variables. As a
// second line of defence, fields with those names are replaced by "[redacted]" wherever
// they sit in the top two levels of a line.
import { pino, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT when set; otherwise pretty only for a terminal, never in production (its logs get shipped). */
export function logFormatFor(setting: LogFormat | undefined, production: boolean, terminal = Boolean(process.stderr.isTTY)): LogFormat {
  return setting ?? (terminal && !production ? 'pretty' : 'json');
}

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

/** The JSON lines pino writes, made readable, to the same place; redaction happened before. */
function prettyStream(to: DestinationStream, colorize: boolean): DestinationStream {
  const pretty = prettyFactory({ colorize, singleLine: true, translateTime: 'HH:MM:ss.l' });
  return { write: (chunk: string) => to.write(pretty(chunk)) };
}

/**
 * Lines to `write` (tests), to `destination` (bench/log-cost.ts compares writers), else to
 * stderr; JSON unless `format` is pretty (colours only on stderr at a terminal).
 */
export function createLogger(
  level: string = 'info',
  write?: (line: string) => void,
  destination?: DestinationStream,
  format: LogFormat = 'json',
): Logger {
  const raw: DestinationStream = write
    ? { write: (chunk: string) => write(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk) }
    : (destination ??
      // Written at once, one system call a line. Measured by bench/log-cost.ts (request lines,
      // 3 a ms, to a pipe): 11–17 µs of CPU a line this way, 35–37 µs with sonic-boom's
      // asynchronous writes, whose trip through libuv's thread pool costs more than the write,
      // on the main thread too. No line waits in memory: a crash, even a SIGKILL, loses none.
      pino.destination({ dest: 2, sync: true }));
  const stream = format === 'pretty' ? prettyStream(raw, !write && !destination && Boolean(process.stderr.isTTY)) : raw;
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
