// The SMTP listener's certificate: read at start-up and checked to load, so a missing file or a
// key that does not match the certificate stops start-up instead of failing the first STARTTLS.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError, type SmtpTlsConfig } from '../config.js';

export interface ListenerTls {
  key: Buffer;
  cert: Buffer;
  /** TLS from the first byte instead of STARTTLS. */
  implicit: boolean;
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(`cannot read the SMTP TLS ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function loadListenerTls(config: SmtpTlsConfig): ListenerTls | undefined {
  if (config.certFile === undefined || config.keyFile === undefined) return undefined;
  const cert = readPem(config.certFile, 'certificate');
  const key = readPem(config.keyFile, 'key');
  try {
    createSecureContext({ key, cert });
  } catch (error) {
    // OpenSSL's reason ("key values mismatch", "no start line"), never the file contents.
    throw new ConfigError(`the SMTP TLS key ${config.keyFile} and certificate ${config.certFile} do not load: ${(error as Error).message}`);
  }
  return { key, cert, implicit: config.implicit };
}
