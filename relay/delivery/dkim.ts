// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged).
import type { RelayServices } from '../services.js';
import type { DomainKeyRow } from '../storage/dispatch.js';
import { DkimPool } from './dkim-pool.js';
import { signMessage } from './dkim-worker.js';

/** The verified domain of the email's project that signs mail from `senderDomain`, if any. */
export function signingKeyFor(keys: readonly DomainKeyRow[], projectId: string, senderDomain: string): DomainKeyRow | undefined {
  return keys.find((k) => k.project_id === projectId && k.name === senderDomain);
}

/** Signing threads for every relay in this process; they start with the first signed message. */
const pool = new DkimPool();

let warned = false;

/** Boots the signing threads ahead of the first message (the worker calls it as it starts). */
export function warmDkimSigning(): void {
  pool.warm();
}

/** The raw message with a DKIM-Signature header, or unchanged when the domain has no key. */
export async function signWithDomainKey(services: RelayServices, key: DomainKeyRow | undefined, raw: Buffer): Promise<Buffer> {
  if (!key?.dkim_private_key) return raw;
  const job = { raw, domainName: key.name, keySelector: key.dkim_selector, privateKey: services.secrets.openPrivateKey(key.dkim_private_key) };
  try {
    return await pool.sign(job);
  } catch (error) {
    if (!warned) services.log.warn('queue', 'DKIM signing threads failed; signing on the main thread from now on', { error: (error as Error).message });
    warned = true;
    return signMessage(job);
  }
}
