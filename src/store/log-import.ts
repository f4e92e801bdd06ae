// The old JSON-lines event log (src/store/embedded.ts) into a new SQLite store, in one
// transaction: every event with its claims, then the reduced states and user search
// rows. The log is read as a stream and checked as the old store checked it at start
// (a torn last line dropped, a corrupt one refused); only the snapshots stay in memory
// meanwhile, as they did in the old store.
import { createReadStream } from 'node:fs';
import { decode } from './embedded.ts';
import type { AggregateType, Reducers, Snapshot, UserProjection } from './port.ts';
import { reduceEvents } from './reduce.ts';
import { eventRow, searchRow, stateRow, type EventRow } from './sqlite-rows.ts';
import type { Request } from './sqlite-worker.ts';

const CHUNK = 5000;

export interface LogImport {
  path: string;
  reducers: Reducers;
  userFields?: UserProjection;
  /** A request to the SQLite worker. */
  call: (req: Request) => Promise<unknown>;
}

/** Returns how many events were imported. */
export async function importLog({ path, reducers, userFields, call }: LogImport): Promise<number> {
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

  await call({ op: 'importBegin' });
  try {
    let rest = Buffer.alloc(0);
    for await (const chunk of createReadStream(path)) {
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
    }
    // Text after the last newline is a write torn by a crash: the old store dropped it too.
    if (rest.length > 0) console.warn(`sqlite store: not importing a torn last line (${rest.length} bytes) of ${path}`);
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
  } catch (e) {
    await call({ op: 'importEnd', commit: false, from: path }).catch(() => {});
    throw e;
  }
  return count;
}
