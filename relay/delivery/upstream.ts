// Real delivery through an upstream SMTP relay (--upstream smtp://... or smtps://...). Acceptance
// by the upstream means `sent`; nothing further is known unless a bounce report arrives later.
import type { SmtpUpstreamConfig } from '../config.js';
import type { RelayServices } from '../services.js';
import type { DeliveryProvider } from './provider.js';
import { createSmtpProvider } from './smtp-client.js';

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
    },
    services.log,
  );
}
