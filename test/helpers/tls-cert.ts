// A self-signed certificate for localhost and 127.0.0.1, made with the openssl command, and a
// client that sends over TLS trusting only it: for tests of TLS listeners.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';

export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: Buffer;
}

export function makeSelfSignedCert(dir: string, name = 'server'): TestCert {
  const keyFile = path.join(dir, `${name}-key.pem`);
  const certFile = path.join(dir, `${name}-cert.pem`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { certFile, keyFile, cert: readFileSync(certFile) };
}

/**
 * Sends one message to an SMTP listener over TLS, trusting only `ca`: STARTTLS required, or TLS
 * from the first byte with `implicit`. Rejects when the server offers no TLS or another certificate.
 */
export async function sendOverTls(
  target: { host: string; port: number; ca: Buffer; implicit?: boolean },
  mail: { from: string; to: string; subject?: string; text?: string },
) {
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: target.implicit ?? false,
    requireTLS: !target.implicit,
    tls: { ca: [target.ca], servername: 'localhost' },
  });
  try {
    return await transport.sendMail({ subject: 'Over TLS', text: 'encrypted in transit', ...mail });
  } finally {
    transport.close();
  }
}
