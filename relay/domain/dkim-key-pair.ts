// A domain's DKIM key pair: how the relay makes one and how a domain keeps it. A module of its own
// (no imports of the relay's): the services name where pairs come from (RelayServices.dkimKeyPair),
// and the tests make theirs here too (test/helpers/dkim-keys.ts).
import { generateKeyPairSync, type KeyPairKeyObjectResult } from 'node:crypto';

/** A domain's DKIM key pair: the public key as base64 DER (the record's p=), the private key as PKCS#8 PEM. */
export interface DkimKeyPair {
  publicKey: string;
  privateKeyPem: string;
}

/** The RSA key size of every DKIM key the relay makes. */
export const DKIM_KEY_BITS = 2048;

/** An RSA key pair as a domain keeps it. */
export function dkimKeyPairOf({ publicKey, privateKey }: KeyPairKeyObjectResult): DkimKeyPair {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return { publicKey: der.toString('base64'), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A fresh pair: 0.15-0.25 CPU s, the costliest part of connecting a domain. */
export function newDkimKeyPair(): DkimKeyPair {
  return dkimKeyPairOf(generateKeyPairSync('rsa', { modulusLength: DKIM_KEY_BITS }));
}
