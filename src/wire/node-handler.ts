// The wire's node handlers (RPC and REST) as the edge calls them (src/http/face.ts).
import type { Face } from '../http/face.ts';

/** A node handler; `state` is the edge's state of the request when it came through the edge. */
export type NodeHandler = Face['handler'];
