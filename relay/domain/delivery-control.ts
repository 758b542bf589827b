// Retry now and pause/resume (issue 25). Retry now is for delivery_delayed recipients only: their
// waiting job becomes due at once. delivery_unknown recipients are never resent automatically
// (delivery/delivery-unknown.ts); an operator may resend them only by confirming it explicitly,
// because the provider may already have accepted the message and a resend may deliver it twice.
import { ApiError, validationError } from '../errors.js';
import type { RelayServices } from '../services.js';
import {
  deliveryPausedAt,
  makeJobDueNow,
  pauseProjectDelivery,
  recipientsOfEmail,
  requeueRecipients,
  resumeProjectDelivery,
} from '../storage/delivery-control.js';
import { projectOfEmail } from '../storage/email-log.js';
import type { AdminBody } from './admin-body.js';
import { aggregateStatus } from './outcomes.js';
import { findProject } from './projects.js';
import type { RecipientStatus } from 'raven-email-sdk';

export interface RetryResult {
  id: string;
  /** The recipients tried again now. */
  recipients: string[];
}

function parseRetryBody(body: AdminBody): boolean {
  const details = Object.keys(body)
    .filter((key) => key !== 'confirm_unknown')
    .map((key) => ({ field: key, message: 'is not a known field' }));
  if (body.confirm_unknown !== undefined && typeof body.confirm_unknown !== 'boolean') details.push({ field: 'confirm_unknown', message: 'must be a boolean' });
  if (details.length > 0) throw validationError(details);
  return body.confirm_unknown === true;
}

export async function retryEmailNow(s: RelayServices, emailId: string, body: AdminBody): Promise<RetryResult> {
  const confirmUnknown = parseRetryBody(body);
  if (!(await projectOfEmail(s.db, emailId))) throw new ApiError('not_found', `No email ${emailId}.`);
  const now = s.clock.iso();
  const result = await s.db.write(async (tx) => {
    const recipients = await recipientsOfEmail(tx, emailId);
    const delayed = recipients.filter((r) => r.status === 'delivery_delayed');
    if (delayed.length > 0) {
      if (!(await makeJobDueNow(tx, emailId, now))) throw new ApiError('conflict', `The retry of ${emailId} is already under way.`);
      return delayed.map((r) => r.address);
    }
    const unknown = recipients.filter((r) => r.status === 'delivery_unknown');
    if (unknown.length > 0 && !confirmUnknown) {
      throw new ApiError(
        'conflict',
        `${unknown.map((r) => r.address).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} delivery_unknown: the provider may already have accepted the message, so a resend may deliver it twice. It is never resent automatically; send {"confirm_unknown": true} to resend anyway.`,
      );
    }
    if (unknown.length > 0) {
      const statuses = recipients.map((r) => (r.status === 'delivery_unknown' ? 'queued' : r.status) as RecipientStatus);
      await requeueRecipients(tx, emailId, unknown.map((r) => r.position), aggregateStatus(statuses).status, now);
      return unknown.map((r) => r.address);
    }
    const statuses = [...new Set(recipients.map((r) => r.status))].join(', ');
    throw new ApiError('conflict', `No recipient of ${emailId} is delivery_delayed (${statuses}): only a delayed recipient can be retried now.`);
  });
  s.bus.emit('jobs.ready');
  s.log.info('queue', 'retry now', { email_id: emailId, recipients: result.length, confirmed_unknown: confirmUnknown });
  return { id: emailId, recipients: result };
}

/** Pauses or resumes a project's delivery; admission goes on while paused and its mail waits. */
export async function setDeliveryPaused(s: RelayServices, projectId: string, paused: boolean): Promise<{ id: string; delivery_paused: boolean; paused_at: string | null }> {
  await findProject(s, projectId);
  await s.db.write((tx) => (paused ? pauseProjectDelivery(tx, projectId, s.clock.iso()) : resumeProjectDelivery(tx, projectId)));
  if (!paused) s.bus.emit('jobs.ready');
  s.log.info('queue', paused ? 'project delivery paused' : 'project delivery resumed', { project_id: projectId });
  return deliveryState(s, projectId);
}

export async function deliveryState(s: RelayServices, projectId: string): Promise<{ id: string; delivery_paused: boolean; paused_at: string | null }> {
  await findProject(s, projectId);
  const pausedAt = await deliveryPausedAt(s.db, projectId);
  return { id: projectId, delivery_paused: pausedAt !== null, paused_at: pausedAt };
}
