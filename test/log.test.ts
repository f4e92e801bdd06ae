// The logger's last line of defence: secret-named fields never reach a log line.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';

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

  it("leaves the caller's object untouched", () => {
    const fields = { job: { code: 'XYZ789' } };
    createLogger('info', () => {}).log('info', 'x', fields);
    expect(fields.job.code).toBe('XYZ789');
  });
});
