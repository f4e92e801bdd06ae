// A request body read to its end before anyone decides how to serve it (the gRPC fast path,
// grpc-unary.ts), each chunk passing the edge's meter as it arrives; and the same bytes handed
// on as a body again when connect's router serves the request after all.
import type { NodeRequest } from '../http/face.ts';
import type { RequestState } from '../http/request-state.ts';
import type { Logger } from '../log.ts';
import { toConnectError } from './errors.ts';

type Meter = NonNullable<RequestState['meter']>;

/**
 * whole: the body, ended; cut: the meter refused a chunk or the stream failed (error: what the
 * body's reader sees next); rest: the bytes so far do not fit, the rest unread; closed: the
 * client went before the end.
 */
export type BodyRead =
  | { kind: 'whole'; chunks: Buffer[]; body: Buffer }
  | { kind: 'cut'; chunks: Buffer[]; error: unknown }
  | { kind: 'rest'; chunks: Buffer[] }
  | { kind: 'closed' };

/** The body's chunks, each counted by the meter first; a refusal ends the read with its error. */
export async function* metered(body: AsyncIterable<Uint8Array>, meter: Meter, logger: Logger): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    const refusal = meter(chunk.byteLength);
    if (refusal) throw toConnectError(refusal, logger, { method: 'edge' });
    yield chunk;
  }
}

/**
 * Reads `req` to its end, or until the meter refuses, the stream fails or `fits` says the bytes so
 * far cannot be what the reader waits for (then the rest stays unread: kind rest).
 */
export function readWhole(
  req: NodeRequest,
  meter: Meter | undefined,
  fits: (chunks: Buffer[], size: number) => boolean,
  logger: Logger,
): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (read: BodyRead) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      const refusal = meter?.(chunk.byteLength);
      if (refusal) {
        req.pause();
        return done({ kind: 'cut', chunks, error: toConnectError(refusal, logger, { method: 'edge' }) });
      }
      chunks.push(chunk);
      size += chunk.byteLength;
      if (!fits(chunks, size)) {
        req.pause();
        done({ kind: 'rest', chunks });
      }
    };
    const onEnd = () => done({ kind: 'whole', chunks, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    const onError = (error: unknown) => done({ kind: 'cut', chunks, error });
    const onClose = () => done({ kind: 'closed' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The bytes `read` holds as a body again, then what it ended with (the rest of the request, metered; or the error). */
export async function* replay(
  req: NodeRequest,
  read: Exclude<BodyRead, { kind: 'closed' }>,
  meter: Meter | undefined,
  logger: Logger,
): AsyncIterable<Uint8Array> {
  yield* read.chunks;
  if (read.kind === 'cut') throw read.error;
  if (read.kind === 'rest') yield* meter ? metered(req, meter, logger) : (req as AsyncIterable<Uint8Array>);
}
