// Relays sharing one PostgreSQL database behave as one service: what one relay announces on its
// bus (new jobs, webhook deliveries, timeline events, captured mail, inbox changes, revoked keys
// and activated workspaces, a test-clock advance) reaches the others through LISTEN/NOTIFY, payloads whole whatever their size, so their
// workers wake, their `ravenctl listen` clients and dashboards see every event, and their clocks
// agree. The notifier hands on only the other relays' messages.
//
// What is announced in one turn of the event loop, or while a notification is on its way, goes out
// together in the next one (a list of messages), and a wake-up already waiting (jobs.ready, webhooks.ready: no payload) is
// not added twice: every notification is a transaction of its own, with its commit flushed to disk
// and PostgreSQL's one notification-queue lock held through it (every relay's notifications wait
// on it), so an admission batch of forty emails costs one notification, not eighty.
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
  const waiting: Message[] = [];
  let publishing = false;
  // bus.shared() callers, told when what was waiting has been published.
  let published: Array<() => void> = [];

  const publishWaiting = async () => {
    publishing = true;
    while (waiting.length > 0) {
      const messages = waiting.splice(0, waiting.length);
      if (!(await notifier.publish(messages))) log.debug('relay', 'bus events not shared with other relays', { messages: messages.length });
    }
    publishing = false;
    const callers = published;
    published = [];
    for (const resolve of callers) resolve();
  };
  const isWakeUp = (m: Message) => 'event' in m && m.args.length === 0;
  const send = (message: Message) => {
    if (relaying) return;
    if (isWakeUp(message) && waiting.some((m) => isWakeUp(m) && 'event' in m && m.event === (message as { event: string }).event)) return;
    waiting.push(message);
    // Sent once this turn of the event loop is over: what a commit announces (an admission batch's
    // events and its wake-up, each email's in a continuation of its own) goes out as one message.
    if (!publishing) {
      publishing = true;
      setImmediate(() => void publishWaiting());
    }
  };
  const listeners = SHARED.map((name) => {
    const listener = (...args: unknown[]) => send({ event: name, args });
    bus.on(name, listener as never);
    return { name, listener };
  });
  const onClock = () => send({ clockOffsetMs: clock.offset });

  const onMessage = (received: unknown) => {
    const messages = received as Message[]; // published by a relay of this version (bridgeBus)
    relaying = true;
    try {
      for (const message of messages) {
        if ('clockOffsetMs' in message) clock.setOffset(message.clockOffsetMs);
        // As another relay of this version emitted it (the payload's type is bus.ts's for the name).
        else if (isShared(message.event)) bus.emit(message.event, ...(message.args as BusEvents[typeof message.event]));
      }
    } finally {
      relaying = false;
    }
  };

  clock.on('advanced', onClock);
  notifier.on('message', onMessage);
  bus.shared = () => (publishing ? new Promise<void>((resolve) => published.push(resolve)) : Promise.resolve());
  return () => {
    bus.shared = () => Promise.resolve();
    for (const { name, listener } of listeners) bus.off(name, listener as never);
    clock.off('advanced', onClock);
    notifier.off('message', onMessage);
  };
}
