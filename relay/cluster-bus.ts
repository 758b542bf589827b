// Relays sharing one PostgreSQL database behave as one service: what one relay announces on its
// bus (new jobs, webhook deliveries due, timeline events, a test-clock advance) reaches the others
// through LISTEN/NOTIFY, so their workers wake, their `ravenctl listen` clients and dashboards see
// every event, and their clocks agree. Each relay ignores its own notifications.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Clock } from './clock.js';
import type { StoredEvent } from './domain/timeline.js';
import type { Logger } from './log.js';
import type { PostgresNotifier } from './storage/postgres/notify.js';

type Message =
  | { origin: string; kind: 'jobs.ready' | 'webhooks.ready' }
  | { origin: string; kind: 'email.event'; event: StoredEvent }
  | { origin: string; kind: 'clock'; offsetMs: number };

export function bridgeBus(bus: EventEmitter, clock: Clock, notifier: PostgresNotifier, log: Logger): () => void {
  const origin = randomBytes(8).toString('hex');
  let relaying = false; // true while re-emitting another relay's message: not sent back out

  const send = (message: Message) => {
    if (relaying) return;
    void notifier.publish(message).then((sent) => {
      if (!sent && message.kind === 'email.event') log.debug('listen', 'event not shared with other relays', { event_id: message.event.id });
    });
  };
  const onJobs = () => send({ origin, kind: 'jobs.ready' });
  const onWebhooks = () => send({ origin, kind: 'webhooks.ready' });
  const onEvent = (event: StoredEvent) => send({ origin, kind: 'email.event', event });
  const onClock = () => send({ origin, kind: 'clock', offsetMs: clock.offset });

  const onMessage = (message: Message) => {
    if (message.origin === origin) return;
    relaying = true;
    try {
      if (message.kind === 'email.event') bus.emit('email.event', message.event);
      else if (message.kind === 'clock') clock.setOffset(message.offsetMs);
      else bus.emit(message.kind);
    } finally {
      relaying = false;
    }
  };

  bus.on('jobs.ready', onJobs);
  bus.on('webhooks.ready', onWebhooks);
  bus.on('email.event', onEvent);
  clock.on('advanced', onClock);
  notifier.on('message', onMessage);
  return () => {
    bus.off('jobs.ready', onJobs);
    bus.off('webhooks.ready', onWebhooks);
    bus.off('email.event', onEvent);
    clock.off('advanced', onClock);
    notifier.off('message', onMessage);
  };
}
