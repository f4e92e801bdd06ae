// The open connections of the one port (one-port.ts), counted as they are accepted, before any
// byte is read, TLS or not, whatever protocol they turn out to speak.
//
// At most `maxConnections` are open: each holds a file descriptor, and a process out of them can
// open neither a connection to its store nor a file, and stops answering even /health. The
// default leaves a reserve under the descriptor limit for the store, Redis and files.
//
// At the cap a new connection first takes the place of the one that has been idle the longest
// (nothing in flight: no request yet, between keep-alive requests, or an HTTP/2 session without
// an open stream), so peers that only hold connections open cannot lock out one that asks
// something (a health probe among them); when none is idle, the new connection is closed at once.
// An address that abuses HTTP/2 resets (http2-sessions.ts) is refused for a while.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { addressKey } from './address-window.ts';

/** Descriptors left for everything but client connections: the store, Redis, MongoDB's pool, files, logs. */
const DESCRIPTOR_RESERVE = 256;
/** The default cap on a machine whose descriptor limit is higher or unknown. */
const DEFAULT_MAX_CONNECTIONS = 10_000;

/** The process's soft limit on open files (Linux: /proc/self/limits); undefined when unknown or unlimited. */
export function descriptorLimit(read = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(read())?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/** HTTP_MAX_CONNECTIONS when unset: the descriptor limit less a reserve (a quarter of it on a small limit), at most 10,000. */
export function defaultMaxConnections(limit = descriptorLimit()): number {
  if (limit === undefined) return DEFAULT_MAX_CONNECTIONS;
  const reserve = Math.min(DESCRIPTOR_RESERVE, Math.floor(limit / 4));
  return Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, limit - reserve));
}

export type ConnectionRefusal = 'limit' | 'blocked';

export interface ConnectionGuardOptions {
  maxConnections: number;
  onRefused?: (reason: ConnectionRefusal) => void;
  /** An idle connection closed to make room for a new one. */
  onEvicted?: () => void;
}

export interface ConnectionGuard {
  /** For each accepted socket, before anything is read: false when it was closed (over the cap, or its address is blocked). */
  admit(socket: Socket): boolean;
  /** A request (HTTP/1.1) or stream (HTTP/2) started on the connection (connectionKey of its raw socket or its TLS socket). */
  busy(key: string): void;
  /** One of them ended. */
  done(key: string): void;
  /** Refuses the address's new connections for `ms`. */
  block(address: string | undefined, ms: number): void;
  readonly open: number;
  readonly max: number;
}

interface Connection {
  socket: Socket;
  inFlight: number;
}

/** A TCP connection's key, the same for its raw socket and the TLS socket over it; taken while the socket is open. */
export const connectionKey = (socket: Socket): string => `${socket.remoteAddress}|${socket.remotePort}`;
const keyOf = connectionKey;

export function createConnectionGuard(options: ConnectionGuardOptions): ConnectionGuard {
  const { maxConnections, onRefused, onEvicted } = options;
  const open = new Map<string, Connection>();
  // Idle connections in the order they became idle: the first is the one idle the longest.
  const idle = new Map<string, Connection>();
  const blocked = new Map<string, number>();

  const isBlocked = (address: string) => {
    if (blocked.size === 0) return false;
    const until = blocked.get(address);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    blocked.delete(address);
    return false;
  };

  const refuse = (socket: Socket, reason: ConnectionRefusal) => {
    socket.destroy();
    onRefused?.(reason);
    return false;
  };

  return {
    get open() {
      return open.size;
    },
    max: maxConnections,
    admit(socket) {
      if (isBlocked(addressKey(socket.remoteAddress))) return refuse(socket, 'blocked');
      if (open.size >= maxConnections) {
        const oldest = idle.values().next().value as Connection | undefined;
        if (!oldest) return refuse(socket, 'limit');
        const key = keyOf(oldest.socket);
        idle.delete(key);
        open.delete(key);
        oldest.socket.destroy();
        onEvicted?.();
      }
      const key = keyOf(socket);
      const connection = { socket, inFlight: 0 };
      open.set(key, connection);
      idle.set(key, connection);
      socket.once('close', () => {
        // The key may have been taken over by then only if this connection was evicted (deleted above).
        if (open.get(key) === connection) open.delete(key);
        if (idle.get(key) === connection) idle.delete(key);
      });
      return true;
    },
    busy(key) {
      const connection = open.get(key);
      if (!connection) return;
      connection.inFlight++;
      idle.delete(key);
    },
    done(key) {
      const connection = open.get(key);
      if (!connection || connection.inFlight === 0) return;
      if (--connection.inFlight === 0) idle.set(key, connection);
    },
    block(address, ms) {
      const key = addressKey(address);
      // Bounded: an address gets here only after many resets in one window.
      blocked.set(key, Date.now() + ms);
    },
  };
}
