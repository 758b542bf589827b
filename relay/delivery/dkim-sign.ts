// DKIM signing of one raw message with nodemailer's signer: the RSA signature and the body hash.
// Pure work, run on a worker thread (relay/threads/tasks.ts) or, when no thread can, inline.
import type { KeyObject } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';

export interface DkimSigning {
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

export async function signMessage(raw: Buffer, signing: DkimSigning): Promise<Buffer> {
  // nodemailer hands the key to crypto's sign(), which takes a KeyObject as well as a PEM.
  const signer = new DKIM({ domainName: signing.domainName, keySelector: signing.keySelector, privateKey: signing.privateKey as unknown as string });
  const chunks: Buffer[] = [];
  for await (const chunk of signer.sign(raw)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
