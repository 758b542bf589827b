// Relays sharing one PostgreSQL database behave as one service: what one relay announces on its
// bus (new jobs, webhook deliveries due, timeline events, captured mail, inbox changes, a
// test-clock advance) reaches the others through LISTEN/NOTIFY, so their workers wake, their
// `ravenctl listen` clients and dashboards see every event, and their clocks agree. Each relay
// ignores its own notifications.
import { randomBytes } from 'node:crypto';
import { BUS_SHARING, type BusEvent, type BusEvents, type RelayBus } from './bus.js';
import type { Clock } from './clock.js';
import type { Logger } from './log.js';
import type { RelayNotifier } from './storage/open.js';

/** Bus events shared with the other relays (bus.ts), and what to send instead when one is too large. */
const SHARED = (Object.keys(BUS_SHARING) as BusEvent[]).flatMap((name) => {
  const sharing = BUS_SHARING[name];
  if (sharing === 'local') return [];
  return [{ name, oversize: sharing === 'shared' ? undefined : sharing.oversize }];
});
const isShared = (event: string): event is BusEvent => SHARED.some((s) => s.name === event);

type Message = { origin: string; event: string; args: unknown[] } | { origin: string; clockOffsetMs: number };

export function bridgeBus(bus: RelayBus, clock: Clock, notifier: RelayNotifier, log: Logger): () => void {
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
    bus.on(name, listener as never);
    return { name, listener };
  });
  const onClock = () => send({ origin, clockOffsetMs: clock.offset });

  const onMessage = (received: unknown) => {
    const message = received as Message; // published by a relay of this version (bridgeBus)
    if (message.origin === origin) return;
    relaying = true;
    try {
      if ('clockOffsetMs' in message) clock.setOffset(message.clockOffsetMs);
      // As another relay of this version emitted it (the payload's type is bus.ts's for the name).
      else if (isShared(message.event)) bus.emit(message.event, ...(message.args as BusEvents[typeof message.event]));
    } finally {
      relaying = false;
    }
  };

  clock.on('advanced', onClock);
  notifier.on('message', onMessage);
  return () => {
    for (const { name, listener } of listeners) bus.off(name, listener as never);
    clock.off('advanced', onClock);
    notifier.off('message', onMessage);
  };
}
