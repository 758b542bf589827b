// The inbox WebSocket, one per page however many parts listen (the shell's unread badge, the
// inbox list), reconnecting with a growing delay while anyone listens.
import { api, type InboxLiveFrame, type Schemas } from './api';

interface Listener {
  onFrame: (frame: InboxLiveFrame) => void;
  /** Connected or reconnected: whatever happened meanwhile is on the server, ask it. */
  onOpen: () => void;
}

const listeners = new Set<Listener>();
let socket: WebSocket | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let delay = 500;

function open(): void {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${scheme}//${location.host}/admin/v1/inbox/live`);
  socket = ws;
  ws.onopen = () => {
    delay = 500;
    for (const l of [...listeners]) l.onOpen();
  };
  ws.onmessage = (event) => {
    const frame = JSON.parse(String(event.data)) as InboxLiveFrame;
    for (const l of [...listeners]) l.onFrame(frame);
  };
  ws.onclose = () => {
    if (socket !== ws || listeners.size === 0) return;
    socket = undefined;
    timer = setTimeout(() => {
      timer = undefined;
      open();
    }, delay);
    delay = Math.min(delay * 2, 10_000);
  };
}

export function connectInboxLive(onFrame: Listener['onFrame'], onOpen: Listener['onOpen']): () => void {
  const listener = { onFrame, onOpen };
  listeners.add(listener);
  if (!socket && timer === undefined) open();
  else if (socket?.readyState === WebSocket.OPEN) onOpen();
  return () => {
    listeners.delete(listener);
    if (listeners.size > 0) return;
    clearTimeout(timer);
    timer = undefined;
    const closing = socket;
    socket = undefined;
    closing?.close();
  };
}

/** The number of unread captured messages, kept current over the inbox WebSocket. */
export function watchUnread(onUnread: (unread: number) => void): () => void {
  let frames = 0;
  const ask = () => {
    const before = frames;
    // A frame that came while asking is newer than the answer.
    api<Schemas['InboxPage']>('GET', '/admin/v1/inbox?limit=1').then((page) => frames === before && onUnread(page.unread), () => undefined);
  };
  return connectInboxLive((frame) => {
    if (frame.type === 'checked') return;
    frames += 1;
    onUnread(frame.unread);
  }, ask);
}

/**
 * The unread counts of the whole inbox and of each project (the inbox's project selector), asked
 * again on every frame; one question at a time, so an older answer never lands after a newer one.
 */
export function watchUnreadByProject(onCounts: (counts: Schemas['InboxUnread']) => void): () => void {
  let asking = false;
  let again = false;
  const ask = () => {
    if (asking) {
      again = true;
      return;
    }
    asking = true;
    api<Schemas['InboxUnread']>('GET', '/admin/v1/inbox/unread')
      .then(onCounts, () => undefined)
      .finally(() => {
        asking = false;
        if (again) {
          again = false;
          ask();
        }
      });
  };
  return connectInboxLive(ask, ask);
}
