// The floors' durable write (yoga-durable, connect-durable): one row appended to SQLite before the
// answer, the least any gateway that answers only after a durable commit has to do. The row goes
// to a worker thread (no disk call on the event loop) that writes every row queued meanwhile in one
// transaction (group commit: one fsync for all), with the embedded store's durability (WAL,
// synchronous=FULL, exclusive lock), and answers each row with its sequence. Both floors share this
// one worker so a protocol's floor differs from another's by its protocol only.
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface DurableRows {
  /** Commits one row; resolves with its sequence once it is on disk. */
  append(aggregate: string, payload: string): Promise<number>;
  /** The rows committed for aggregates starting with prefix: the bench's check that every answer was a write. */
  count(prefix: string): Promise<number>;
  close(): Promise<void>;
}

const WORKER = `const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
db.exec('CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, aggregate TEXT NOT NULL, payload TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (aggregate, payload) VALUES (?, ?)');
const begin = db.prepare('BEGIN IMMEDIATE'), commit = db.prepare('COMMIT');
let queue = [];
const flush = () => {
  const batch = queue;
  queue = [];
  begin.run();
  const seqs = batch.map((r) => Number(insert.run(r.aggregate, r.payload).lastInsertRowid));
  commit.run();
  parentPort.postMessage(batch.map((r, i) => [r.id, seqs[i]]));
};
const count = db.prepare("SELECT COUNT(*) AS n FROM events WHERE aggregate LIKE ? || '%'");
parentPort.on('message', (row) => {
  if (row.countPrefix !== undefined) parentPort.postMessage([[row.id, count.get(row.countPrefix).n]]);
  else if (queue.push(row) === 1) setImmediate(flush);
});`;

export function durableRows(dataDir: string): DurableRows {
  const worker = new Worker(WORKER, { eval: true, workerData: { path: path.join(dataDir, 'floor.sqlite') } });
  const waiting = new Map<number, (seq: number) => void>();
  let next = 0;
  worker.on('message', (answers: [number, number][]) => {
    for (const [id, seq] of answers) {
      waiting.get(id)!(seq);
      waiting.delete(id);
    }
  });
  const ask = (message: Record<string, string>) =>
    new Promise<number>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      worker.postMessage({ id, ...message });
    });
  return {
    append: (aggregate, payload) => ask({ aggregate, payload }),
    count: (prefix) => ask({ countPrefix: prefix }),
    close: async () => void (await worker.terminate()),
  };
}
