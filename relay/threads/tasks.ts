// The relay's pure work that runs on worker threads (pool.ts): every task takes one
// structured-clonable input and has no side effect, so the main thread can run the same function
// when no thread can (work.ts). Buffers cross a thread as plain Uint8Arrays: each task takes them
// back as Buffers first.
import { signedOutboundMessage, type OutboundJob } from '../delivery/outbound.js';
import type { OutboundMessage } from '../delivery/provider.js';
import { closeThreadProvider, deliverOnThisThread, type ThreadDeliveryAnswer, type ThreadDeliveryJob } from '../delivery/thread-delivery.js';
import type { ContentChecks } from '../inbox/checks/content.js';
import { quickSummary } from '../inbox/quick-summary.js';
import { parseMessage, summarize, type MessageSummary } from '../inbox/read-message.js';
import { asBuffer, type TaskTable } from './pool.js';

/** A captured message as the inbox shows it, from its raw bytes and envelope. */
export interface SummaryJob {
  raw: Uint8Array;
  envelope: { from: string; to: string[] };
}

/** A captured message's inbox summary: a plain one read directly (quick-summary.ts), any other parsed by mailparser. */
async function inboxSummary(job: SummaryJob): Promise<MessageSummary> {
  const raw = asBuffer(job.raw);
  return quickSummary(raw, job.envelope) ?? summarize(await parseMessage(raw), job.envelope);
}

/** A submitted message's bytes as a Buffer again. */
function withBuffers<J extends OutboundJob>(job: J): J {
  const submitted = job.email.submitted_raw;
  return submitted ? { ...job, email: { ...job.email, submitted_raw: asBuffer(submitted) } } : job;
}

export const tasks = {
  /** Compose (or take the submitted MIME) and DKIM-sign: the delivery worker's message. */
  outboundMessage: (job: OutboundJob): Promise<OutboundMessage> => signedOutboundMessage(withBuffers(job)),
  /** The whole delivery: compose, sign and the SMTP conversation on this thread's sessions. */
  deliverOutbound: (job: ThreadDeliveryJob): Promise<ThreadDeliveryAnswer> => deliverOnThisThread(withBuffers(job)),
  /** The relay stops: this thread's sessions with its provider are closed. */
  closeProvider: (key: string): Promise<void> => closeThreadProvider(key),
  /** A captured message summarised for its inbox entry. */
  inboxSummary,
  /** The same for many messages in one hop (the indexer's chunks): one message each way, not one per message. */
  inboxSummaries: (jobs: SummaryJob[]): Promise<MessageSummary[]> => Promise.all(jobs.map(inboxSummary)),
  /**
   * The checks of a captured message that read only its bytes: headers, HTML compatibility, its
   * URLs. Loaded on first use: only the checks thread runs them, and caniemail's data would be
   * most of what each delivery thread loads as it starts.
   */
  contentChecks: async (job: { raw: Uint8Array }): Promise<ContentChecks> => (await import('../inbox/checks/content.js')).checkContent(asBuffer(job.raw)),
} satisfies TaskTable;

export type RelayTasks = typeof tasks;
