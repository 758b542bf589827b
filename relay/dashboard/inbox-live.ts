// The open inboxes, live: GET /admin/v1/inbox/live upgraded to a WebSocket. A signed-in dashboard
// (session cookie, from our own origin) receives each newly indexed message and the unread count
// as JSON text frames; it sends nothing but pongs.
import { WebSocketServer } from 'ws';
import type { BusEvents } from '../bus.js';
import { ApiError } from '../errors.js';
import type { UpgradeHandler } from '../http/router.js';
import { acceptUpgrade, startHeartbeat } from '../http/ws-heartbeat.js';
import type { RelayServices } from '../services.js';
import { countUnread, type InboxEntry } from '../storage/inbox.js';
import { sessionIdFromCookie } from './sessions.js';

const HEARTBEAT_MS = 30_000;
/** A dashboard this far behind is cut off (it reconnects and reloads) rather than buffered. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface InboxLive {
  /** GET /admin/v1/inbox/live asking for a WebSocket (the route table sends it here). */
  upgrade: UpgradeHandler;
  close(): Promise<void>;
}

export function createInboxLive(services: RelayServices): InboxLive {
  const { bus, db, log } = services;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  const heartbeat = startHeartbeat(HEARTBEAT_MS);
  let closing = false;

  const upgrade: UpgradeHandler = async ({ req, socket, head, requestId }) => {
    if (closing) throw new ApiError('service_unavailable', 'The relay is shutting down; retry after 1 second.', { retryAfter: 1 });
    const sessionId = sessionIdFromCookie(req.headers.cookie);
    if (sessionId === undefined || !(await services.sessions.find(sessionId))) throw new ApiError('unauthorized', 'Not signed in to the dashboard.');
    // Browsers send Origin on every WebSocket handshake: only our own pages may open this one.
    let origin: string | undefined;
    try {
      origin = req.headers.origin === undefined ? undefined : new URL(req.headers.origin).host;
    } catch {
      origin = undefined;
    }
    if (origin !== req.headers.host) throw new ApiError('forbidden', 'Cross-site WebSocket refused.');
    acceptUpgrade(wss, { req, socket, head, requestId }, (ws) => {
      heartbeat.track(ws);
      ws.on('error', () => ws.terminate());
    });
  };

  const broadcast = (frame: unknown) => {
    const data = JSON.stringify(frame);
    for (const ws of wss.clients) {
      if (ws.readyState !== ws.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) ws.close(1013, 'too slow');
      else ws.send(data);
    }
  };
  const withUnread = (frame: Record<string, unknown>) => {
    if (wss.clients.size === 0) return;
    countUnread(db).then(
      (unread) => broadcast({ ...frame, unread }),
      (error: unknown) => log.warn('inbox', 'cannot count unread messages', { error: (error as Error).message }),
    );
  };
  const onCaptured = (messages: InboxEntry[]) => withUnread({ type: 'captured', messages });
  const onChanged = () => withUnread({ type: 'changed' });
  // Checks badges computed in the background: the lists showing those messages update their rows.
  const onChecked = (summaries: BusEvents['inbox.checked'][0]) => {
    if (wss.clients.size > 0) broadcast({ type: 'checked', checks: summaries });
  };

  bus.on('inbox.captured', onCaptured);
  bus.on('inbox.changed', onChanged);
  bus.on('inbox.checked', onChecked);
  return {
    upgrade,
    async close() {
      if (closing) return;
      closing = true;
      heartbeat.stop();
      bus.off('inbox.captured', onCaptured);
      bus.off('inbox.changed', onChanged);
      bus.off('inbox.checked', onChecked);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
