// The listen hub: GET /v1/listen upgraded to a WebSocket streams the events of the key's project
// live, one text frame per event holding exactly the webhook body, so `ravenctl listen` can sign
// and forward the same bytes a webhook endpoint would receive. Authentication and the `events`
// filter are checked before the upgrade, so a refusal is an ordinary HTTP error response.
import { WebSocketServer, type WebSocket } from 'ws';
import { authenticateKey } from '../domain/auth.js';
import { EVENT_TYPES, type EventType, type StoredEvent } from '../domain/timeline.js';
import { ApiError, validationError } from '../errors.js';
import type { RelayServices } from '../services.js';
import type { UpgradeHandler } from '../http/router.js';
import { acceptUpgrade, startHeartbeat } from '../http/ws-heartbeat.js';

export interface ListenHubOptions {
  /** Real-time interval of the heartbeat ping; a client that missed the previous pong is dropped. */
  heartbeatMs?: number;
}

export interface ListenHub {
  /** GET /v1/listen asking for a WebSocket (the route table sends it here). */
  upgrade: UpgradeHandler;
  close(): Promise<void>;
}

interface Listener {
  ws: WebSocket;
  projectId: string;
  keyId: string;
  events: ReadonlySet<EventType> | null;
}

/** A listener that falls this far behind is cut off rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** Close code 1013: "try again later", for a consumer too slow to keep up. */
const CLOSE_TRY_AGAIN_LATER = 1013;
const CLOSE_GOING_AWAY = 1001;

function parseEventsFilter(url: URL): Set<EventType> | null {
  const raw = url.searchParams.getAll('events');
  if (raw.length === 0) return null;
  const names = raw.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  if (names.length === 0 || names.includes('*')) return null;
  const unknown = names.filter((n) => !(EVENT_TYPES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw validationError([{ field: 'events', message: `unknown event type ${unknown.join(', ')}; use ${EVENT_TYPES.join(', ')}` }]);
  }
  return new Set(names as EventType[]);
}

export function createListenHub(services: RelayServices, options: ListenHubOptions = {}): ListenHub {
  const { db, bus, log } = services;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024, clientTracking: false });
  const listeners = new Set<Listener>();
  let closing = false;
  const heartbeat = startHeartbeat(options.heartbeatMs ?? 30_000);

  const upgrade: UpgradeHandler = async ({ req, socket, head, url, requestId }) => {
    if (closing) throw new ApiError('service_unavailable', 'The relay is shutting down; retry after 1 second.', { retryAfter: 1 });
    const authorization = req.headersDistinct.authorization;
    if (authorization && authorization.length > 1) throw new ApiError('invalid_request', 'The authorization header must not be repeated.');
    const key = await authenticateKey(db, services.keys, authorization?.[0], services.keyUse);
    const events = parseEventsFilter(url);
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    acceptUpgrade(wss, { req, socket, head, requestId }, (ws) => {
      const listener: Listener = { ws, projectId: key.projectId, keyId: key.keyId, events };
      listeners.add(listener);
      log.info('listen', 'listener connected', { request_id: requestId, key_id: key.keyId, project_id: key.projectId });
      heartbeat.track(ws);
      ws.on('error', () => ws.terminate());
      ws.on('close', () => {
        listeners.delete(listener);
        log.info('listen', 'listener disconnected', { request_id: requestId, key_id: key.keyId });
      });
    });
  };

  const onEvent = (event: StoredEvent) => {
    for (const listener of listeners) {
      if (listener.projectId !== event.projectId) continue;
      if (listener.events && !listener.events.has(event.type)) continue;
      if (listener.ws.readyState !== listener.ws.OPEN) continue;
      if (listener.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        listener.ws.close(CLOSE_TRY_AGAIN_LATER, 'listener too slow');
        continue;
      }
      listener.ws.send(event.webhookBody, { binary: false });
    }
  };

  bus.on('email.event', onEvent);

  return {
    upgrade,
    async close() {
      if (closing) return;
      closing = true;
      heartbeat.stop();
      bus.off('email.event', onEvent);
      // Going away: listeners reconnect when the relay is back. Stragglers are cut after a second.
      await Promise.all(
        [...listeners].map(
          (listener) =>
            new Promise<void>((resolve) => {
              if (listener.ws.readyState === listener.ws.CLOSED) return resolve();
              const cut = setTimeout(() => listener.ws.terminate(), 1_000);
              listener.ws.once('close', () => {
                clearTimeout(cut);
                resolve();
              });
              listener.ws.close(CLOSE_GOING_AWAY, 'relay shutting down');
            }),
        ),
      );
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
