// The logger's last line of defence: secret-named fields never reach a log line.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createLogger, logFormatFor } from '../src/log.ts';

describe('logger', () => {
  it('writes JSON lines and replaces secret-named fields in the top two levels', () => {
    const lines: string[] = [];
    const logger = createLogger('info', (l) => lines.push(l));
    logger.log('info', 'hello', { userId: 'u1', password: 'Pw-top-1!', job: { kind: 'k', code: 'ABC123' }, list: [1] });
    logger.log('debug', 'not at info level', { userId: 'u2' });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'hello',
      userId: 'u1',
      password: '[redacted]',
      job: { kind: 'k', code: '[redacted]' },
      list: [1],
    });
    expect(lines[0]).not.toMatch(/Pw-top-1!|ABC123/);
  });

  it('redacts the same in the readable format of a terminal', () => {
    const lines: string[] = [];
    const logger = createLogger('info', (l) => lines.push(l), undefined, 'pretty');
    logger.log('warn', 'hello', { userId: 'u1', token: 'eyJ.secret.jwt', job: { kind: 'k', verificationCode: 'QWE987' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: hello /);
    expect(lines[0]).toContain('"userId":"u1"');
    expect(lines[0]).toContain('"token":"[redacted]"');
    expect(lines[0]).toContain('"verificationCode":"[redacted]"');
    expect(lines[0]).not.toMatch(/eyJ\.secret|QWE987/);
  });

  it('chooses pretty only for a terminal outside production, unless LOG_FORMAT says', () => {
    expect(logFormatFor(undefined, false, true)).toBe('pretty');
    expect(logFormatFor(undefined, true, true)).toBe('json');
    expect(logFormatFor(undefined, false, false)).toBe('json');
    expect(logFormatFor('json', false, true)).toBe('json');
    expect(logFormatFor('pretty', true, false)).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: ' Pretty ' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT: "yaml" is not a log format/);
  });

  it("leaves the caller's object untouched", () => {
    const fields = { job: { code: 'XYZ789' } };
    createLogger('info', () => {}).log('info', 'x', fields);
    expect(fields.job.code).toBe('XYZ789');
  });
});
