// Real delivery through an upstream SMTP relay (--upstream smtp://... or smtps://...). Acceptance
// by the upstream means `sent`; nothing further is known unless a bounce report arrives later.
import { readFileSync } from 'node:fs';
import { ConfigError, type SmtpUpstreamConfig } from '../config.js';
import type { RelayServices } from '../services.js';
import type { DeliveryProvider } from './provider.js';
import { createSmtpProvider } from './smtp-client.js';

/** Read at start-up, like the listener's certificate: a missing CA file stops the relay with its name. */
function readCaFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(`cannot read the upstream CA file ${file} (delivery.smtp.ca, --upstream-ca): ${(error as Error).message}`);
  }
}

export function createUpstreamProvider(config: SmtpUpstreamConfig, services: RelayServices): DeliveryProvider {
  return createSmtpProvider(
    'smtp',
    {
      host: config.host,
      port: config.port,
      secure: config.secure,
      requireTLS: config.requireTLS,
      auth: config.auth,
      maxIdle: Math.max(1, config.pool),
      transactionPerRecipient: true,
      ...(config.ca === undefined ? {} : { ca: readCaFile(config.ca) }),
    },
    services.log,
  );
}
