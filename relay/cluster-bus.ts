// Relays sharing one PostgreSQL database behave as one service: what one relay announces on its
// bus (new jobs, webhook deliveries due, timeline events, captured mail, inbox changes, a
// test-clock advance) reaches the others through LISTEN/NOTIFY, so their workers wake, their
// `ravenctl listen` clients and dashboards see every event, and their clocks agree. Each relay
// ignores its own notifications.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Clock } from './clock.js';
import { INBOX_CAPTURED, INBOX_CHANGED } from './inbox/indexer.js';
import type { Logger } from './log.js';
import type { PostgresNotifier } from './storage/postgres/notify.js';

/** Bus events shared with the other relays, and what to send instead when one is too large. */
const SHARED: ReadonlyArray<{ name: string; oversize?: string }> = [
  { name: 'jobs.ready' },
  { name: 'webhooks.ready' },
  { name: 'email.event' },
  // A batch of inbox entries past NOTIFY's 8,000 bytes: dashboards elsewhere reload their page.
  { name: INBOX_CAPTURED, oversize: INBOX_CHANGED },
  { name: INBOX_CHANGED },
];

type Message = { origin: string; event: string; args: unknown[] } | { origin: string; clockOffsetMs: number };

export function bridgeBus(bus: EventEmitter, clock: Clock, notifier: PostgresNotifier, log: Logger): () => void {
  const origin = randomBytes(8).toString('hex');
  let relaying = false; // true while re-emitting another relay's message: not sent back out

  const send = (message: Message, fallback?: Message) => {
    if (relaying) return;
    void notifier.publish(message).then((sent) => {
      if (sent) return;
      if (fallback) void notifier.publish(fallback);
      else log.debug('relay', 'bus event not shared with other relays', { event: 'event' in message ? message.event : 'clock' });
    });
  };
  const listeners = SHARED.map(({ name, oversize }) => {
    const listener = (...args: unknown[]) =>
      send({ origin, event: name, args }, oversize ? { origin, event: oversize, args: [] } : undefined);
    bus.on(name, listener);
    return { name, listener };
  });
  const onClock = () => send({ origin, clockOffsetMs: clock.offset });

  const onMessage = (message: Message) => {
    if (message.origin === origin) return;
    relaying = true;
    try {
      if ('clockOffsetMs' in message) clock.setOffset(message.clockOffsetMs);
      else if (SHARED.some((s) => s.name === message.event)) bus.emit(message.event, ...message.args);
    } finally {
      relaying = false;
    }
  };

  clock.on('advanced', onClock);
  notifier.on('message', onMessage);
  return () => {
    for (const { name, listener } of listeners) bus.off(name, listener);
    clock.off('advanced', onClock);
    notifier.off('message', onMessage);
  };
}
