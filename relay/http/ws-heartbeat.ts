// What both WebSocket endpoints (the listen hub, the dashboard's live inbox) share: the handshake's
// 101 answer carries the request's Request-Id as every answer does (CONTRACT section 1); and the
// heartbeat they keep: a ping per interval to every tracked socket; one that sent no pong since
// the previous ping is gone, and is terminated rather than left holding a connection.
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { ApiError } from '../errors.js';
import { refuseOnSocket } from './error-reply.js';
import type { UpgradeRequest } from './router.js';

/** wss.handleUpgrade, with the request's Request-Id among the 101's headers. */
export function acceptUpgrade(wss: WebSocketServer, upgrade: Pick<UpgradeRequest, 'req' | 'socket' | 'head' | 'requestId'>, onOpen: (ws: WebSocket) => void): void {
  // ws writes the 101 (and emits 'headers' for it) within handleUpgrade, as no verifyClient is set.
  const addId = (headers: string[], req: unknown) => {
    if (req === upgrade.req) headers.push(`Request-Id: ${upgrade.requestId}`);
  };
  // A handshake ws cannot accept (no Sec-WebSocket-Key, an Upgrade other than websocket...): ws
  // would write a bare text 400; it is answered in the contract's error shape instead.
  const refuse = (error: Error, socket: Duplex, req: unknown) => {
    if (req === upgrade.req) refuseOnSocket(socket, upgrade.requestId, new ApiError('invalid_request', `The WebSocket handshake is not valid: ${error.message}.`));
  };
  wss.on('headers', addId);
  wss.on('wsClientError', refuse);
  try {
    wss.handleUpgrade(upgrade.req, upgrade.socket, upgrade.head, onOpen);
  } finally {
    wss.off('headers', addId);
    wss.off('wsClientError', refuse);
  }
}

export interface Heartbeat {
  /** Starts watching a socket that has just opened; it leaves the watch when it closes. */
  track(ws: WebSocket): void;
  stop(): void;
}

export function startHeartbeat(intervalMs: number): Heartbeat {
  const alive = new Map<WebSocket, boolean>();
  const timer = setInterval(() => {
    for (const [ws, answered] of alive) {
      if (!answered) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, intervalMs);
  timer.unref();
  return {
    track(ws) {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      ws.on('close', () => alive.delete(ws));
    },
    stop: () => clearInterval(timer),
  };
}
