// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged). The
// message is composed and signed on a worker thread (relay/threads/), inline if none can.
import type { RelayServices } from '../services.js';
import type { DomainKeyRow } from '../storage/domains.js';
import { asBuffer } from '../threads/pool.js';
import { offload } from '../threads/work.js';
import type { OutboundJob } from './outbound.js';
import type { OutboundMessage } from './provider.js';

/** The verified domain of the email's project that signs mail from `senderDomain`, if any. */
export function signingKeyFor(keys: readonly DomainKeyRow[], projectId: string, senderDomain: string): DomainKeyRow | undefined {
  return keys.find((k) => k.project_id === projectId && k.name === senderDomain);
}

/** The signing part of an outbound job: the domain's key opened, when it has one. */
export function dkimSigning(services: RelayServices, key: DomainKeyRow | undefined): Pick<OutboundJob, 'dkim'> {
  if (!key?.dkim_private_key) return {};
  return { dkim: { domainName: key.name, keySelector: key.dkim_selector, privateKey: services.secrets.openPrivateKey(key.dkim_private_key) } };
}

/** The message to hand the provider: composed (or as submitted) and signed with the domain's key if the job has one. */
export async function buildSignedMessage(services: RelayServices, job: OutboundJob): Promise<OutboundMessage> {
  const message = await offload(services.log, 'outboundMessage', job);
  return { ...message, raw: asBuffer(message.raw) };
}
