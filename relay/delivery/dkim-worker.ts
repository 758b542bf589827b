// The DKIM signing thread (see dkim-pool.ts): signs one raw message per request with nodemailer's
// signer, so the RSA signature and the body hash run off the relay's event loop.
import { parentPort } from 'node:worker_threads';
import type { KeyObject } from 'node:crypto';
import DKIM from 'nodemailer/lib/dkim';

export interface SignRequest {
  id: number;
  raw: Uint8Array;
  domainName: string;
  keySelector: string;
  privateKey: KeyObject;
}

export type SignAnswer = { id: number; signed: Uint8Array } | { id: number; error: string };

/** Signs on the calling thread: here, or on the main thread when the pool cannot (dkim.ts). */
export async function signMessage(job: Omit<SignRequest, 'id'>): Promise<Buffer> {
  // nodemailer hands the key to crypto's sign(), which takes a KeyObject as well as a PEM.
  const signer = new DKIM({ domainName: job.domainName, keySelector: job.keySelector, privateKey: job.privateKey as unknown as string });
  const chunks: Buffer[] = [];
  for await (const chunk of signer.sign(Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// Imported by the main thread too (for signMessage): only a signing thread has a parent port.
parentPort?.on('message', (request: SignRequest) => {
  signMessage(request).then(
    (signed) => parentPort!.postMessage({ id: request.id, signed } satisfies SignAnswer),
    (error: unknown) => parentPort!.postMessage({ id: request.id, error: (error as Error)?.message ?? String(error) } satisfies SignAnswer),
  );
});
