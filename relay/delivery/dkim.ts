// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged).
import DKIM from 'nodemailer/lib/dkim';
import type { RelayServices } from '../services.js';
import type { DomainKeyRow } from '../storage/dispatch.js';

/** The verified domain of the email's project that signs mail from `senderDomain`, if any. */
export function signingKeyFor(keys: readonly DomainKeyRow[], projectId: string, senderDomain: string): DomainKeyRow | undefined {
  return keys.find((k) => k.project_id === projectId && k.name === senderDomain);
}

/** The raw message with a DKIM-Signature header, or unchanged when the domain has no key. */
export async function signWithDomainKey(services: RelayServices, key: DomainKeyRow | undefined, raw: Buffer): Promise<Buffer> {
  if (!key?.dkim_private_key) return raw;
  const signer = new DKIM({
    domainName: key.name,
    keySelector: key.dkim_selector,
    // nodemailer hands the key to crypto's sign(), which takes a KeyObject as well as a PEM.
    privateKey: services.secrets.openPrivateKey(key.dkim_private_key) as unknown as string,
  });
  const chunks: Buffer[] = [];
  const signed = signer.sign(raw);
  for await (const chunk of signed) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
