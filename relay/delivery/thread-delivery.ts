// Whole delivery on a worker thread (relay/threads/): build the message, DKIM-sign it and hold the
// SMTP conversation, on sessions this thread keeps open between tasks (one pool per provider per
// thread). The main thread keeps what orders or commits: the claim, the provider limits, and the
// outcome, which it records from the answer.
//
// The thread marks `sending` (shared memory, so it survives the thread) once the message's bytes
// start to go. A thread that dies before that sent nothing: the worker delivers the message itself.
// One that dies after may have delivered it: delivery_unknown, never resent (delivery-unknown.ts).
// Log lines come back with the answer and the main thread writes them with its own logger.
import type { Component, Logger } from '../log.js';
import type { LogLine } from './thread-logs.js';
import type { DeliveryResult } from '../mail/delivery-result.js';
import { signedOutboundMessage, type OutboundJob } from './outbound.js';
import type { DeliveryProvider, ThreadedProvider } from './provider.js';
import { createSmtpProvider } from './smtp-client.js';

export interface ThreadDeliveryJob extends OutboundJob {
  /** The target is left out until a thread asks for it (`needsTarget`): an upstream's CA list is large. */
  provider: Omit<ThreadedProvider, 'target'> & { target?: ThreadedProvider['target'] };
  /** [0] becomes 1 when the message's bytes start to go (Atomics). */
  sending: Int32Array;
}

export type ThreadDeliveryAnswer =
  /** This thread has no session pool for the provider yet: ask again with the target. */
  | { kind: 'needsTarget' }
  /** The message cannot be built: nothing was sent. */
  | { kind: 'unbuildable'; error: string; logs: LogLine[] }
  | { kind: 'answered'; result: DeliveryResult; logs: LogLine[] }
  /** The provider threw instead of answering per recipient (a bug): maybe sent. */
  | { kind: 'threw'; error: string; logs: LogLine[] };

// Lines kept for the next answer at most; a thread that logs more between two answers drops the rest.
const MAX_LOG_LINES = 1_000;

interface ThreadProvider {
  provider: DeliveryProvider;
  logs: LogLine[];
}

const providers = new Map<string, ThreadProvider>();

function bufferingLogger(lines: LogLine[]): Logger {
  const keep = (level: LogLine['level']) => (component: Component, msg: string, fields?: Record<string, unknown>) => {
    if (lines.length < MAX_LOG_LINES) lines.push({ level, component, msg, ...(fields ? { fields } : {}) });
  };
  return { error: keep('error'), warn: keep('warn'), info: keep('info'), debug: keep('debug') };
}

/** Runs on a worker thread: the message built, signed and handed to the provider's SMTP server. */
export async function deliverOnThisThread(job: ThreadDeliveryJob): Promise<ThreadDeliveryAnswer> {
  let held = providers.get(job.provider.key);
  if (!held) {
    if (!job.provider.target) return { kind: 'needsTarget' };
    const logs: LogLine[] = [];
    held = { provider: createSmtpProvider(job.provider.name, job.provider.target, bufferingLogger(logs)), logs };
    providers.set(job.provider.key, held);
  }
  const { provider, logs } = held;
  const { provider: _provider, sending, ...outbound } = job;
  let message;
  try {
    message = await signedOutboundMessage(outbound);
  } catch (error) {
    return { kind: 'unbuildable', error: (error as Error).message, logs: logs.splice(0) };
  }
  try {
    const result = await provider.deliver(message, { sending: () => Atomics.store(sending, 0, 1) });
    return { kind: 'answered', result, logs: logs.splice(0) };
  } catch (error) {
    return { kind: 'threw', error: (error as Error).message, logs: logs.splice(0) };
  }
}

/** Runs on each worker thread when the relay stops: its sessions with the provider are closed. */
export async function closeThreadProvider(key: string): Promise<void> {
  const held = providers.get(key);
  providers.delete(key);
  await held?.provider.close();
}

