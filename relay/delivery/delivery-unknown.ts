// delivery_unknown, "maybe sent" (CONTRACT section 4): the one rule for a message that may have
// reached the receiving server without Raven hearing its answer. Sending it again could deliver it
// twice, so such a recipient ends delivery_unknown: final, never resent automatically.
//
// The line is the end of the message. Once every byte of it was handed to the server, only the
// lost answer separates "accepted" from "refused": maybe sent. Before that the server cannot have
// accepted it, and the recipient is deferred (tried again along the backoff table) like any other
// temporary failure. Every place that meets the question asks this module:
// - delivery/smtp-client.ts: a connection lost during a transaction (lostConnectionOutcome), and a
//   pooled session found closed, tried again at once only if nothing was sent (nothingSent);
// - queue/worker.ts: a provider that throws instead of answering per recipient (a bug, maybe after
//   sending): settleMaybeSent('dispatch_error');
// - queue/maintenance.ts: jobs a stopped process or an expired lease left running, whose dispatch
//   had begun: settleMaybeSent('dispatch_interrupted').
// domain/outcomes.ts records the answers (status delivery_unknown, event email.delivery_unknown),
// and a later bounce report overrules it there: a bounce proves the message arrived.
import { settlePendingRecipients, type RecordedOutcome } from '../domain/outcomes.js';
import type { Queryable } from '../storage/db.js';
import type { RecipientOutcome } from '../mail/delivery-result.js';

/** How far a message got on a connection that was lost. */
export interface SendProgress {
  /** The server answered DATA with 354 and we started sending the message. */
  started: boolean;
  /** Every byte of the message was handed to the connection. */
  finished: boolean;
}

/** A recipient's outcome when the connection was lost before the server answered for it. */
export function lostConnectionOutcome(progress: SendProgress): Extract<RecipientOutcome, 'unknown' | 'deferred'> {
  return progress.finished ? 'unknown' : 'deferred';
}

/** Whether nothing of the message reached the server, so that it may be sent again at once. */
export function nothingSent(progress: SendProgress): boolean {
  return !progress.started;
}

/** Why a dispatch that got no per-recipient answer may have sent the message. */
export type MaybeSentReason =
  /** The provider threw after the dispatch began. */
  | 'dispatch_error'
  /** The process stopped, or its lease ran out, mid-dispatch. */
  | 'dispatch_interrupted';

/** Ends every pending recipient of the emails as delivery_unknown, the reason in the event's data. */
export function settleMaybeSent(tx: Queryable, emailIds: readonly string[], reason: MaybeSentReason, now: string): Promise<RecordedOutcome[]> {
  return settlePendingRecipients(tx, emailIds, 'delivery_unknown', now, { reason });
}
