// Real delivery through an upstream SMTP relay (--upstream smtp://... or smtps://...). Acceptance
// by the upstream means `sent`; nothing further is known unless a bounce report arrives later.
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { ConfigError, type SmtpUpstreamConfig } from '../config.js';
import type { RelayServices } from '../services.js';
import type { DeliveryProvider } from './provider.js';
import { createSmtpProvider } from './smtp-client.js';

/**
 * The certificate authorities trusted for the upstream: delivery.smtp.ca added to Node's default
 * store (bundled roots plus NODE_EXTRA_CA_CERTS where Node can list it, 22.15+; else the bundled
 * roots), not in its place. Undefined without the option: Node's defaults apply. Read at
 * start-up, like the listener's certificate: a missing file stops the relay naming it.
 */
export function upstreamCa(config: SmtpUpstreamConfig): string[] | undefined {
  if (config.ca === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(config.ca, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read the upstream CA file ${config.ca} (delivery.smtp.ca, --upstream-ca): ${(error as Error).message}`);
  }
  const list = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  return [...(list ? list('default') : tls.rootCertificates), pem];
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
      ...(config.ca === undefined ? {} : { ca: upstreamCa(config) }),
    },
    services.log,
  );
}
