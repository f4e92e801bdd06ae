// An old data folder's event log, written as the retired log store wrote it: DATA_DIR/events.log,
// one JSON line per event (its claims inside it), Dates and binaries inside payloads tagged
// ({ $date: ISO string }, { $binary: base64 }). For the tests of the SQLite store's import of
// it at first start (src/store/log-import.ts reads it); written here independently of the
// importer, so that the two are held to the same format.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, makeDataDir } from '../../src/data-dir.ts';
import { LOG_FILE } from '../../src/store/log-import.ts';
import type { StoredEvent } from '../../src/store/port.ts';

function tagged(value: unknown): unknown {
  if (value instanceof Date) return { $date: value.toISOString() };
  if (value instanceof Uint8Array) return { $binary: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(tagged);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tagged(v)]));
  return value;
}

/** One line of the log, as the old store appended it. */
export const oldLogLine = (event: StoredEvent) =>
  JSON.stringify({ ...event, payload: tagged(event.payload), createdAt: event.createdAt.toISOString() }) + '\n';

/** Appends the events to dataDir's events.log (created owner-only, as the old store did). */
export async function writeOldLog(dataDir: string, events: readonly StoredEvent[]): Promise<string> {
  await makeDataDir(dataDir);
  const path = join(dataDir, LOG_FILE);
  await appendFile(path, events.map(oldLogLine).join(''), { mode: FILE_MODE });
  return path;
}
