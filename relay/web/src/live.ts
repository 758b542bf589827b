// The inbox WebSocket, reconnecting with a growing delay while the page is open.
import type { InboxLiveFrame } from './api';

export function connectInboxLive(onFrame: (frame: InboxLiveFrame) => void, onOpen: () => void): () => void {
  let socket: WebSocket | undefined;
  let closed = false;
  let delay = 500;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    socket = new WebSocket(`${scheme}//${location.host}/admin/v1/inbox/live`);
    socket.onopen = () => {
      delay = 500;
      onOpen();
    };
    socket.onmessage = (event) => onFrame(JSON.parse(String(event.data)) as InboxLiveFrame);
    socket.onclose = () => {
      if (closed) return;
      timer = setTimeout(open, delay);
      delay = Math.min(delay * 2, 10_000);
    };
  };
  open();
  return () => {
    closed = true;
    clearTimeout(timer);
    socket?.close();
  };
}
