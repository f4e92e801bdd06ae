// The spans of the gateway's calls, each wrapped once where its client is made (only while
// tracing is on): the operations (one span per call of the faces' Operations), Redis commands
// (ioredis's sendCommand, so every command of every client: codes, queues, rate limits,
// idempotency records), SQLite worker calls and MongoDB commands. Names only: a command's name,
// a collection or table, never an argument.
import { inChildSpan, inSpan, recordFailure, SpanKind, startSpan, tracingOn, underSpan, type Span } from './spans.ts';

/**
 * The same operations, each call in a span named after the operation. The one place every
 * operation passes through, whichever face called it and whichever implementation (the commands
 * or upstream mode) serves it.
 */
export function tracedOperations<T extends object>(ops: T): T {
  if (!tracingOn()) return ops;
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(ops)) {
    wrapped[name] =
      typeof fn === 'function'
        ? (...args: unknown[]) =>
            inSpan(`operation ${name}`, SpanKind.INTERNAL, { 'gateway.operation.name': name }, () =>
              (fn as (...a: unknown[]) => Promise<unknown>).apply(ops, args),
            )
        : fn;
  }
  return wrapped as T;
}

/** What ioredis hands sendCommand: the command's name and the promise of its reply. */
interface RedisCommand {
  name: string;
  promise: Promise<unknown>;
}

/** Every command the client sends gets a client span named after the command (never its key or arguments). */
export function traceRedisCommands<C extends { sendCommand: (...args: any[]) => unknown }>(client: C): C {
  if (!tracingOn()) return client;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: RedisCommand, ...rest: unknown[]) => {
    if (!underSpan()) return send(command, ...rest);
    const op = String(command?.name ?? 'unknown').toUpperCase();
    const span = startSpan(`redis ${op}`, SpanKind.CLIENT, { 'db.system.name': 'redis', 'db.operation.name': op });
    const sent = send(command, ...rest);
    if (span)
      command.promise.then(
        () => span.end(),
        (err: unknown) => (recordFailure(span, err), span.end()),
      );
    return sent;
  }) as C['sendCommand'];
  return client;
}

/** A call to the SQLite worker, in a client span: the request's op, and the table it works on. */
export function sqliteCall<T>(op: string, table: string | undefined, call: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return call();
  return inChildSpan(
    `sqlite ${op}${table ? ` ${table}` : ''}`,
    SpanKind.CLIENT,
    {
      'db.system.name': 'sqlite',
      'db.operation.name': op,
      ...(table ? { 'db.collection.name': table } : {}),
    },
    call,
  );
}

/** The MongoDB driver's command events (names only), as client spans: started opens one, succeeded or failed ends it. */
export interface MongoCommandEvent {
  phase: 'started' | 'succeeded' | 'failed';
  requestId: number;
  command: string;
  collection?: string;
}

export function mongoCommandSpans(): (e: MongoCommandEvent) => void {
  const open = new Map<number, Span>();
  return (e) => {
    if (e.phase === 'started') {
      if (!underSpan()) return;
      const span = startSpan(`mongodb ${e.command}${e.collection ? ` ${e.collection}` : ''}`, SpanKind.CLIENT, {
        'db.system.name': 'mongodb',
        'db.operation.name': e.command,
        ...(e.collection ? { 'db.collection.name': e.collection } : {}),
      });
      if (span) open.set(e.requestId, span);
      return;
    }
    const span = open.get(e.requestId);
    if (!span) return;
    open.delete(e.requestId);
    if (e.phase === 'failed') recordFailure(span, Object.assign(new Error('command failed'), { code: 'MONGODB_COMMAND_FAILED' }));
    span.end();
  };
}
