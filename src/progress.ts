// Progress of long work (an old log's import, the MongoDB search backfill, the bulk loads in
// tools/): an operator watching a start that takes minutes sees how far it is and how fast it
// goes, in the log every `intervalMs` (PROGRESS_INTERVAL_MS) and, through `observe`, in the
// metrics (src/http/metrics.ts gateway_long_work_*). Checked when the work reports a step, not
// by a timer: a step that never comes means the work itself is stuck, which the lack of lines shows.
import type { Logger } from './log.ts';

/** Told at the start, at each report and at the end: items done, and the share done (0..1). */
export type ProgressObserver = (work: string, done: number, share: number) => void;

export interface ProgressOptions {
  /** What is being done, a bounded name: log_import, user_search_backfill, bulk_load. */
  work: string;
  logger: Logger;
  intervalMs: number;
  /** The items to do, when known: the share is then done / total. */
  total?: number;
  /** What an item is, for the lines: events, users. */
  unit: string;
  observe?: ProgressObserver;
  /** Added to every line (e.g. the file being imported). */
  fields?: Record<string, unknown>;
}

export interface Progress {
  /**
   * `done` items so far; `share` (0..1) when the total is not counted in items (an import
   * knows the bytes of its file, not its events). Logs when `intervalMs` has passed.
   */
  update(done: number, share?: number): void;
  /** The end: one last line at 100 %. */
  finish(done: number): void;
}

export const DEFAULT_PROGRESS_INTERVAL_MS = 5000;

export function startProgress(options: ProgressOptions): Progress {
  const { work, logger, intervalMs, total, unit, observe, fields } = options;
  const started = performance.now();
  let last = started;
  const shareOf = (done: number, share?: number) => share ?? (total ? Math.min(1, done / total) : total === 0 ? 1 : 0);

  const report = (done: number, share: number, now: number, end: boolean) => {
    const seconds = (now - started) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    const percent = Math.floor(share * 1000) / 10;
    const of = total !== undefined ? ` of ${total}` : '';
    logger.log('info', `${work}: ${end ? 'done, ' : ''}${done}${of} ${unit} (${percent} %), ${rate} ${unit}/s`, {
      ...fields,
      work,
      done,
      ...(total !== undefined && { total }),
      percent,
      ratePerSecond: rate,
      elapsedMs: Math.round(now - started),
    });
    observe?.(work, done, share);
  };

  observe?.(work, 0, total === 0 ? 1 : 0);
  return {
    update(done, share) {
      const now = performance.now();
      if (now - last < intervalMs) return;
      last = now;
      // Never 100 % before the end: the last step (a commit) may still fail.
      report(done, Math.min(shareOf(done, share), 0.999), now, false);
    },
    finish(done) {
      report(done, 1, performance.now(), true);
    },
  };
}
