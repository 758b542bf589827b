// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged).
import DKIM from 'nodemailer/lib/dkim';
import type { RelayServices } from '../services.js';
import { verifiedDomainKeyForEmail } from '../storage/domains.js';

/** The raw message with a DKIM-Signature header, or unchanged when the domain has no key. */
export async function signWithDomainKey(services: RelayServices, emailId: string, senderDomain: string, raw: Buffer): Promise<Buffer> {
  const row = await verifiedDomainKeyForEmail(services.db, emailId, senderDomain);
  if (!row?.dkim_private_key) return raw;
  const signer = new DKIM({
    domainName: row.name,
    keySelector: row.dkim_selector,
    // nodemailer hands the key to crypto's sign(), which takes a KeyObject as well as a PEM.
    privateKey: services.secrets.openPrivateKey(row.dkim_private_key) as unknown as string,
  });
  const chunks: Buffer[] = [];
  const signed = signer.sign(raw);
  for await (const chunk of signed) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
