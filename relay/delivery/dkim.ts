// DKIM: every message is signed with the key pair generated when its sender domain was connected
// to the project (the private key is stored sealed and opened only here, never logged).
import { createPrivateKey, type KeyObject } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';
import type { RelayServices } from '../services.js';

interface DomainKeyRow {
  name: string;
  dkim_selector: string;
  dkim_private_key: string | null;
}

// Opened and parsed keys, by their sealed form (a domain's key never changes once generated), so
// a message does not pay for an AES-GCM open and a PEM parse. Kept per relay: the secret box.
const openedKeys = new WeakMap<object, Map<string, KeyObject>>();
const MAX_OPENED_KEYS = 1_000;

function openedKey(services: RelayServices, sealed: string): KeyObject {
  let keys = openedKeys.get(services.secrets);
  if (!keys) openedKeys.set(services.secrets, (keys = new Map()));
  let key = keys.get(sealed);
  if (!key) {
    if (keys.size >= MAX_OPENED_KEYS) keys.clear();
    key = createPrivateKey(services.secrets.open(sealed));
    keys.set(sealed, key);
  }
  return key;
}

/** The raw message with a DKIM-Signature header, or unchanged when the domain has no key. */
export async function signWithDomainKey(services: RelayServices, emailId: string, senderDomain: string, raw: Buffer): Promise<Buffer> {
  const row = await services.db.get<DomainKeyRow>(
    `SELECT d.name, d.dkim_selector, d.dkim_private_key FROM domains d JOIN emails e ON e.project_id = d.project_id
      WHERE e.id = ? AND d.name = ? AND d.status = 'verified'`,
    [emailId, senderDomain],
  );
  if (!row?.dkim_private_key) return raw;
  const signer = new DKIM({
    domainName: row.name,
    keySelector: row.dkim_selector,
    // nodemailer hands the key to crypto's sign(), which takes a KeyObject as well as a PEM.
    privateKey: openedKey(services, row.dkim_private_key) as unknown as string,
  });
  const chunks: Buffer[] = [];
  const signed = signer.sign(raw);
  for await (const chunk of signed) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
