// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged). The
// message is composed and signed on a worker thread (relay/threads/), inline if none can.
import type { RelayServices } from '../services.js';
import type { DomainKeyRow } from '../storage/dispatch.js';
import { asBuffer } from '../threads/pool.js';
import { offload } from '../threads/work.js';
import type { OutboundJob } from './outbound.js';
import type { OutboundMessage } from './provider.js';

/** The verified domain of the email's project that signs mail from `senderDomain`, if any. */
export function signingKeyFor(keys: readonly DomainKeyRow[], projectId: string, senderDomain: string): DomainKeyRow | undefined {
  return keys.find((k) => k.project_id === projectId && k.name === senderDomain);
}

/** The message to hand the provider: composed (or as submitted) and signed with the domain's key if it has one. */
export async function buildSignedMessage(services: RelayServices, key: DomainKeyRow | undefined, job: Omit<OutboundJob, 'dkim'>): Promise<OutboundMessage> {
  const dkim = key?.dkim_private_key
    ? { domainName: key.name, keySelector: key.dkim_selector, privateKey: services.secrets.openPrivateKey(key.dkim_private_key) }
    : undefined;
  const message = await offload(services.log, 'outboundMessage', dkim ? { ...job, dkim } : job);
  return { ...message, raw: asBuffer(message.raw) };
}
