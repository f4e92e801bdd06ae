// What the edge asks of a face: a protocol served on the one port (GraphQL, the wire API). The
// edge picks the face by the request's path, names the request's protocol with it (logs, metric
// labels), applies the face's CORS spec when it has one, has it word the edge's own refusals
// (before the body is read) in its shape, and hands it every request it admitted. The edge
// itself knows no protocol.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { AppError } from '../errors.ts';
import type { CorsSpec } from './cors.ts';
import type { RequestState } from './request-state.ts';

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

export interface Face {
  /** Serves a request the edge admitted; `state` is the edge's state of it (absent when called around the edge, as tests do). */
  handler(req: NodeRequest, res: NodeResponse, state?: RequestState): void;
  /** The request's protocol as the face names it (graphql; grpc, grpc-web, grpc-web-text, connect, rest): for logs and metric labels. */
  protocolOf(req: NodeRequest, path: string): string;
  /** Writes a refusal of the edge (a limit, a budget, an unexpected failure) in the face's shape. */
  refuse(req: NodeRequest, res: NodeResponse, path: string, error: AppError, headers: Record<string, string>): void;
  /** What browsers may send and read on the face's paths, for the edge to answer (CORS_ORIGINS decides who); absent: the face does its own CORS. */
  cors?: CorsSpec;
}

/** A face and the paths it serves. */
export interface RoutedFace extends Face {
  matches(path: string): boolean;
}

/** The faces of the port: the first of `routed` whose paths match, else `otherwise`. */
export interface Faces {
  routed: RoutedFace[];
  otherwise: Face;
}

export const faceOf = (faces: Faces, path: string): Face => faces.routed.find((f) => f.matches(path)) ?? faces.otherwise;
