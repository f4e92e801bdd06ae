// The main thread's end of the SQLite worker (src/store/sqlite-worker.ts): requests
// and their answers, matched by id. A worker that fails or exits makes every call,
// pending and later, an UnavailableError.
import { Worker } from 'node:worker_threads';
import { UnavailableError } from '../errors.ts';
import { sqliteCall } from '../tracing/wrap.ts';
import type { Request } from './sqlite-worker.ts';

export interface SqliteClient {
  call<T = unknown>(req: Request): Promise<T>;
  /** The worker's failure, once it has failed or exited. */
  readonly failure: Error | undefined;
  terminate(): Promise<void>;
}

/** The table a worker request mainly works on, for its span (names only). */
const TABLES: Partial<Record<Request['op'], string>> = {
  load: 'states',
  catchUp: 'events',
  append: 'events',
  putState: 'states',
  lookup: 'constraints',
  events: 'events',
  searchUsers: 'user_search',
  countUsers: 'user_search',
};

export function startSqliteWorker(path: string): SqliteClient {
  // tsx and vitest run this file as .ts (Node strips the worker's types), the build as .js.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const worker = new Worker(new URL(`./sqlite-worker${extension}`, import.meta.url), { workerData: { path } });
  const calls = new Map<number, { resolve: (v: any) => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  let failure: Error | undefined;

  const fail = (e: Error) => {
    failure ??= e;
    for (const c of calls.values()) c.reject(new UnavailableError('store unavailable', { cause: failure }));
    calls.clear();
  };
  worker.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: { message: string; code?: string } }) => {
    const c = calls.get(id);
    calls.delete(id);
    if (calls.size === 0) worker.unref();
    if (error)
      c?.reject(new UnavailableError('store unavailable', { cause: Object.assign(new Error(error.message), { code: error.code }) }));
    else c?.resolve(result);
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the SQLite worker exited with code ${code}`)));
  // Idle, the worker does not keep the process alive; a call in flight does.
  worker.unref();

  return {
    call<T>(req: Request): Promise<T> {
      return sqliteCall(req.op, TABLES[req.op], () => send<T>(req));
    },
    get failure() {
      return failure;
    },
    async terminate() {
      failure ??= new Error('the SQLite worker was stopped');
      await worker.terminate();
    },
  };

  function send<T>(req: Request): Promise<T> {
    if (failure) return Promise.reject(new UnavailableError('store unavailable', { cause: failure }));
    const id = nextId++;
    if (calls.size === 0) worker.ref();
    return new Promise<T>((resolve, reject) => {
      calls.set(id, { resolve, reject });
      worker.postMessage({ id, req });
    });
  }
}
