// The heartbeat both WebSocket endpoints (the listen hub, the dashboard's live inbox) keep: a ping
// per interval to every tracked socket; one that sent no pong since the previous ping is gone, and
// is terminated rather than left holding a connection.
import type { WebSocket } from 'ws';

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
