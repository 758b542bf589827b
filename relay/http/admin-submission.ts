// /admin/v1/submission: what the dashboard shows to configure an application for SMTP submission.
import type { RelayServices } from '../services.js';
import type { Handler } from './router.js';

/** The submission listener as it was bound. */
export interface SubmissionEndpoint {
  host: string;
  port: number;
  tls: 'starttls' | 'implicit' | 'none';
}

/** The user name the README and the dashboard tell applications to give (any is accepted). */
export const SUBMISSION_USERNAME = 'raven';

export function adminSubmissionHandlers(s: RelayServices, endpoint: SubmissionEndpoint) {
  return {
    settings: async () => ({
      status: 200,
      body: { host: s.config.publicHostname ?? endpoint.host, port: endpoint.port, tls: endpoint.tls, username: SUBMISSION_USERNAME },
    }),
  } satisfies Record<string, Handler>;
}
