// The old JSON-lines event log into a new SQLite store, in one transaction: every event with its claims, then the reduced states and user search
// rows. The log is read as a stream and checked as the old store checked it at start
// (a torn last line dropped, a corrupt one refused); only the snapshots stay in memory
// meanwhile, as they did in the old store.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../log.ts';
import { startProgress, type ProgressObserver } from '../progress.ts';
import { mapDeep, untag } from './json-tags.ts';
import type { AggregateType, Reducers, Snapshot, StoredEvent, UserProjection } from './port.ts';
import { reduceEvents } from './reduce.ts';
import { eventRow, searchRow, stateRow, type EventRow } from './sqlite-rows.ts';
import type { Request } from './sqlite-worker.ts';

const CHUNK = 5000;

/**
 * The log of the retired log store (the quick start's store before SQLite), in an old data
 * folder: one JSON line per event, its claims inside it, Dates and binaries inside payloads
 * tagged ({ $date: ISO string }, { $binary: base64 }).
 */
export const LOG_FILE = 'events.log';

const aggregateTypes = new Set<string>(['instance', 'org', 'user', 'idp', 'project']);

/** One line of the log; throws on anything that is not an event. */
export function decode(line: string): StoredEvent {
  const raw = JSON.parse(line) as Omit<StoredEvent, 'createdAt'> & { createdAt: string };
  raw.payload = mapDeep(raw.payload, untag) as StoredEvent['payload'];
  const createdAt = new Date(raw.createdAt);
  if (
    !aggregateTypes.has(raw.aggregateType) ||
    typeof raw.aggregateId !== 'string' ||
    !Number.isInteger(raw.sequence) ||
    Number.isNaN(createdAt.getTime())
  ) {
    throw new Error('not an event');
  }
  return { ...raw, createdAt, claims: raw.claims ?? [] };
}

export interface LogImport {
  path: string;
  reducers: Reducers;
  userFields?: UserProjection;
  /** A request to the SQLite worker. */
  call: (req: Request) => Promise<unknown>;
  logger: Logger;
  /** How often the import logs how far it is (PROGRESS_INTERVAL_MS), and who else is told (metrics). */
  progress: { intervalMs: number; observe?: ProgressObserver };
}

export const IMPORT_WORK = 'log_import';

/** Returns how many events were imported. */
export async function importLog({ path, reducers, userFields, call, logger, progress }: LogImport): Promise<number> {
  const snapshots = new Map<string, { type: AggregateType; snapshot: Snapshot<unknown> }>();
  let rows: EventRow[] = [];
  let count = 0;
  let lineNumber = 0;

  const take = (line: string) => {
    lineNumber++;
    if (line.trim() === '') return;
    try {
      const event = decode(line);
      const key = `${event.aggregateType}\u0000${event.aggregateId}`;
      const current = snapshots.get(key)?.snapshot ?? null;
      if (event.sequence !== (current?.sequence ?? 0) + 1) throw new Error(`sequence ${event.sequence} out of order`);
      snapshots.set(key, { type: event.aggregateType, snapshot: reduceEvents(reducers[event.aggregateType], current, [event])! });
      rows.push(eventRow(event));
      count++;
    } catch (e) {
      throw new Error(`sqlite store: ${path} line ${lineNumber} is corrupt: ${(e as Error).message}`, { cause: e });
    }
  };

  // Share done by bytes read: the events of a log are known only once it is read.
  const size = (await stat(path)).size;
  let bytesRead = 0;
  const shown = startProgress({ work: IMPORT_WORK, unit: 'events', logger, ...progress, fields: { from: path } });
  await call({ op: 'importBegin' });
  try {
    let rest = Buffer.alloc(0);
    for await (const chunk of createReadStream(path)) {
      bytesRead += (chunk as Buffer).length;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
      let start = 0;
      for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a, start)) {
        take(data.toString('utf8', start, end));
        start = end + 1;
      }
      rest = Buffer.from(data.subarray(start));
      if (rows.length >= CHUNK) {
        await call({ op: 'importEvents', events: rows });
        rows = [];
      }
      shown.update(count, size > 0 ? bytesRead / size : 1);
    }
    // Text after the last newline is a write torn by a crash: the old store dropped it too.
    if (rest.length > 0) logger.log('warn', 'not importing a torn last line of the old event log', { bytes: rest.length, from: path });
    await call({ op: 'importEvents', events: rows });
    let states = [];
    for (const { type, snapshot } of snapshots.values()) {
      states.push({ state: stateRow(type, snapshot), search: searchRow(type, snapshot, userFields) });
      if (states.length >= CHUNK) {
        await call({ op: 'importStates', states });
        states = [];
      }
    }
    await call({ op: 'importStates', states });
    await call({ op: 'importEnd', commit: true, from: path });
    shown.finish(count);
  } catch (e) {
    await call({ op: 'importEnd', commit: false, from: path }).catch(() => {});
    throw e;
  }
  return count;
}
