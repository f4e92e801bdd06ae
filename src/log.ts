// Structured JSON log lines on stderr. Callers pass no secrets: no codes, passwords, hashes or tokens.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: string = 'info', write: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const min = order[level as LogLevel] ?? order.info;
  return {
    log(lvl, msg, fields = {}) {
      if (order[lvl] < min) return;
      write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
    },
  };
}
