// The small interface the layers trace through. Spans go to whatever tracer provider is
// registered (src/tracing/provider.ts, only with an OTLP endpoint); until then `on` is false and
// every helper calls straight through: no span object, no context switch, nothing allocated.
//
// What is recorded: names (operations, methods, commands, collections) and codes, never a value:
// no GraphQL variable, SQL parameter, Redis key or argument, token, code or address. An error is
// recorded by its code alone (its message can quote the input).
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export type { Attributes, Span };
export { SpanKind };

const TRACER = 'identity-gateway';

const state = { on: false };

/** Whether spans are recorded (a provider is registered): adapters wrap their clients only then. */
export const tracingOn = (): boolean => state.on;

/** Set by the provider when it registers and when it shuts down. */
export function setTracingOn(on: boolean): void {
  state.on = on;
}

const tracer = () => trace.getTracer(TRACER);

/** The code an error is known by: the gateway's AppError code, a driver's code, or its class name. */
export function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code) return code;
  if (typeof code === 'number') return String(code);
  return err instanceof Error ? err.name : 'Error';
}

/** Marks the span failed: status ERROR and an exception event carrying the code only. */
export function recordFailure(span: Span, err: unknown): void {
  const code = errorCode(err);
  span.addEvent('exception', { 'exception.type': code });
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** Marks the span failed by a code the answer carried (no exception reached the tracer). */
export function markFailed(span: Span, code: string): void {
  span.setAttribute('error.type', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** Runs `fn` in a span of its own (a child of the active one), ended when its promise settles. */
export function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!state.on) return fn();
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span that is not made active (the caller ends it): a call whose end is reported later (MongoDB's command events). */
export function startSpan(name: string, kind: SpanKind, attributes: Attributes): Span | null {
  if (!state.on) return null;
  return tracer().startSpan(name, { kind, attributes });
}

/**
 * Whether a span is active here: a client call (store, Redis, upstream) is traced only inside
 * one, i.e. inside a request. Background work (the delivery worker's polls, lease renewals, the
 * readiness probe's pings) would otherwise send a trace of one span per poll.
 */
export const underSpan = (): boolean => state.on && trace.getSpan(context.active()) !== undefined;

/** inSpan for a client call: only under an active span (underSpan), else `fn` as it is. */
export const inChildSpan = <T>(name: string, kind: SpanKind, attributes: Attributes, fn: () => Promise<T>): Promise<T> =>
  underSpan() ? inSpan(name, kind, attributes, fn) : fn();

type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * The server span of one incoming request, continuing the caller's trace when its headers carry
 * a W3C traceparent (and tracestate), with the context to run the request in. Null when off.
 */
export function startServerSpan(headers: HeaderBag, name: string, attributes: Attributes): { span: Span; context: Context } | null {
  if (!state.on) return null;
  const parent = propagation.extract(context.active(), headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => carrier[key],
  });
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` in `ctx` (a server span's): what it starts, synchronously or after an await, is a child. */
export const runIn = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);

/** Adds the active trace's traceparent (and tracestate) to outgoing headers, for the next service to continue. */
export function injectTraceContext(headers: Record<string, string>): void {
  if (state.on) propagation.inject(context.active(), headers);
}
