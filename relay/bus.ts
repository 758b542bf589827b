// The relay's event bus: how a part tells the others that something committed, for the hops a
// reader cannot follow by imports (admission -> worker, sink -> indexer -> dashboards, timeline ->
// webhook dispatcher and listen hub). Every event and its payload is declared here once; emitters
// and listeners are type-checked against it, and cluster-bus.ts shares with the other relays on
// one database exactly the events marked so below.
import { EventEmitter } from 'node:events';
import type { StoredEvent } from './domain/timeline.js';
import type { CheckSummary } from 'raven-email-sdk';
import type { InboxEntry } from './storage/inbox.js';

/** Each event's name and the arguments it carries. Emitted only after the change's COMMIT. */
export interface BusEvents {
  /** Jobs were queued or became due: the worker claims (queue/worker.ts). */
  'jobs.ready': [];
  /** A relay's admissions waiting for their commit: every relay's worker yields to a burst (domain/admission-load.ts). */
  'admission.load': [report: { relay: string; waiting: number }];
  /** Webhook deliveries were put in the outbox: the dispatcher scans it (webhooks/dispatcher.ts). */
  'webhooks.ready': [];
  /** An email's timeline gained an event: `ravenctl listen` clients get it (webhooks/listen-hub.ts). */
  'email.event': [event: StoredEvent];
  /** The sink stored a captured message (by id): the indexer parses it (inbox/indexer.ts). */
  'message.captured': [messageId: string];
  /** The indexer wrote inbox entries: open dashboards add them (dashboard/inbox-live.ts). */
  'inbox.captured': [entries: InboxEntry[]];
  /** Read flags or deletions changed the inbox: dashboards refresh their unread count. */
  'inbox.changed': [];
  /** Checks badges were computed and cached: open dashboards show them (inbox/checks/summaries.ts). */
  'inbox.checked': [summaries: Array<{ id: string; checks: CheckSummary }>];
  /** A key was revoked or a workspace activated: every relay's key cache forgets its rows (domain/auth.ts). */
  'keys.changed': [];
}

export type BusEvent = keyof BusEvents;

/**
 * Which events reach the other relays on one PostgreSQL database (cluster-bus.ts), with their
 * payload whole whatever its size: 'shared' ones do, 'local' ones stay in this relay.
 */
export const BUS_SHARING: { readonly [E in BusEvent]: 'local' | 'shared' } = {
  'jobs.ready': 'shared',
  'admission.load': 'shared',
  'webhooks.ready': 'shared',
  'email.event': 'shared',
  // Each relay indexes the mail its own sink captured.
  'message.captured': 'local',
  'inbox.captured': 'shared',
  'inbox.changed': 'shared',
  // A dashboard on another relay may show the message: its list's page request queued it here.
  'inbox.checked': 'shared',
  'keys.changed': 'shared',
};

export class RelayBus extends EventEmitter<BusEvents> {
  /**
   * Resolves once the shared events emitted so far have reached the other relays on the database
   * (cluster-bus.ts sets it; alone, at once): for a change another relay must see before the
   * response that reports it.
   */
  shared: () => Promise<void> = () => Promise.resolve();

  constructor() {
    super();
    this.setMaxListeners(0);
  }
}

/** After COMMIT: tell the webhook dispatcher and the listen hub. */
export function announceEvents(bus: RelayBus, events: StoredEvent[]): void {
  for (const event of events) bus.emit('email.event', event);
  // The dispatcher scans the outbox when woken: only worth it when something was put there.
  if (events.some((e) => e.deliveries > 0)) bus.emit('webhooks.ready');
}
