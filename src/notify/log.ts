// Until real delivery exists: a notifier that records the job without its code.
import type { Logger } from '../log.ts';
import type { DeliveryJob, Notifier } from './port.ts';

/** user@example.com → u***@example.com; +41791234567 → +417*******67 */
export function maskAddress(to: string): string {
  const at = to.indexOf('@');
  if (at > 0) return `${to[0]}***${to.slice(at)}`;
  return to.length > 6 ? `${to.slice(0, 4)}${'*'.repeat(to.length - 6)}${to.slice(-2)}` : '***';
}

export function createLoggingNotifier(logger: Logger, { sms = false } = {}): Notifier {
  return {
    async enqueue({ code: _code, ...job }: DeliveryJob) {
      logger.log('info', 'delivery job (logging notifier: not sent)', { ...job, to: maskAddress(job.to) });
    },
    canDeliver: (channel) => channel === 'email' || sms,
    async close() {},
  };
}
