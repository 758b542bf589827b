// Relays sharing one PostgreSQL database behave as one service: what one relay announces on its
// bus (new jobs, webhook deliveries, timeline events, captured mail, inbox changes, a test-clock
// advance) reaches the others through LISTEN/NOTIFY, payloads whole whatever their size, so their
// workers wake, their `ravenctl listen` clients and dashboards see every event, and their clocks
// agree. The notifier hands on only the other relays' messages.
import { BUS_SHARING, type BusEvent, type BusEvents, type RelayBus } from './bus.js';
import type { Clock } from './clock.js';
import type { Logger } from './log.js';
import type { RelayNotifier } from './storage/open.js';

/** Bus events shared with the other relays (bus.ts). */
const SHARED = (Object.keys(BUS_SHARING) as BusEvent[]).filter((name) => BUS_SHARING[name] === 'shared');
const isShared = (event: string): event is BusEvent => (SHARED as string[]).includes(event);

type Message = { event: string; args: unknown[] } | { clockOffsetMs: number };

export function bridgeBus(bus: RelayBus, clock: Clock, notifier: RelayNotifier, log: Logger): () => void {
  let relaying = false; // true while re-emitting another relay's message: not sent back out

  const send = (message: Message) => {
    if (relaying) return;
    void notifier.publish(message).then((sent) => {
      if (!sent) log.debug('relay', 'bus event not shared with other relays', { event: 'event' in message ? message.event : 'clock' });
    });
  };
  const listeners = SHARED.map((name) => {
    const listener = (...args: unknown[]) => send({ event: name, args });
    bus.on(name, listener as never);
    return { name, listener };
  });
  const onClock = () => send({ clockOffsetMs: clock.offset });

  const onMessage = (received: unknown) => {
    const message = received as Message; // published by a relay of this version (bridgeBus)
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
