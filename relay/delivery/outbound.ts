// The message a dispatch hands its provider, built whole: composed from the email's columns (or
// the submitted MIME as it came) and DKIM-signed. Pure work: the worker runs it on a worker
// thread (relay/threads/), the main thread only when no thread can.
import { signMessage, type DkimSigning } from './dkim-sign.js';
import { buildOutboundMessage, submittedOutboundMessage, type OutboundRecipient } from './mime.js';
import type { OutboundMessage } from './provider.js';
import type { EmailForMime } from '../storage/dispatch.js';

export interface OutboundJob {
  email: EmailForMime;
  recipients: OutboundRecipient[];
  /** The Date header (the relay clock's now). */
  date: Date;
  /** The sender domain's key, when it has one. */
  dkim?: DkimSigning;
}

export async function signedOutboundMessage(job: OutboundJob): Promise<OutboundMessage> {
  const { email, recipients } = job;
  const message = email.submitted_raw
    ? submittedOutboundMessage({ ...email, submitted_raw: email.submitted_raw }, recipients)
    : await buildOutboundMessage(email, recipients, job.date);
  if (job.dkim) message.raw = signMessage(message.raw, job.dkim);
  return message;
}
