// The built-in provider: real SMTP into the relay's own sink listener (relay/smtp/sink-server.ts),
// which is the receiving server, so an accepted recipient is delivered. Simulated outcomes are
// decided by the sink and travel back as ordinary SMTP replies.
import { deliveryConcurrency } from '../config.js';
import type { RelayServices } from '../services.js';
import type { DeliveryProvider } from './provider.js';
import { sessionBudget } from './session-budget.js';
import { createSmtpProvider } from './smtp-client.js';

export function createSinkProvider(target: { host: string; port: number }, services: RelayServices): DeliveryProvider {
  return createSmtpProvider(
    'sink',
    {
      host: target.host,
      port: target.port,
      ignoreTLS: true,
      simulatedUnknownApart: true,
      maxIdle: deliveryConcurrency(services.config),
      // The sink refuses connections past its client limit (421): the threads' pools never hold more.
      budget: sessionBudget(services.config.limits.smtpMaxClients),
    },
    services.log,
  );
}
