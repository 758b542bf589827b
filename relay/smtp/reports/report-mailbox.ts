// The `raven.<domain>` mailboxes: the MX of the custom MAIL FROM domain, where delivery status
// notifications and feedback reports come back. Only reports are taken there; each becomes the
// outcomes it describes (domain/feedback.ts), and the message itself is not kept.
import { applyFeedbackReport } from '../../domain/feedback.js';
import { announceEvents } from '../../bus.js';
import type { RelayServices } from '../../services.js';
import { isDomainKnown } from '../../storage/domains.js';
import { readFeedbackReport } from './read-report.js';

/** An SMTP answer: accepted, or refused with a code and text carrying an enhanced status. */
export type Verdict = { ok: true; message?: string } | { ok: false; code: number; message: string };

const REPORT_SUBDOMAIN = 'raven.';

/** Whether mail to this address is for the report mailbox: a host under `raven.`. */
export function isReportAddress(address: string): boolean {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase().startsWith(REPORT_SUBDOMAIN);
}

export interface ReportMailbox {
  /** RCPT TO: `raven.<domain>` of a domain connected to some project; any local part (VERP, fbl, postmaster). */
  acceptRecipient(address: string): Promise<Verdict>;
  /** End of DATA: a report is applied; anything else is refused. */
  receive(raw: Buffer, recipients: string[]): Promise<Verdict>;
}

export function createReportMailbox(services: RelayServices): ReportMailbox {
  const { db, log, clock } = services;

  return {
    async acceptRecipient(address) {
      const domain = address.slice(address.lastIndexOf('@') + 1 + REPORT_SUBDOMAIN.length).toLowerCase();
      return (await isDomainKnown(db, domain)) ? { ok: true } : { ok: false, code: 550, message: `5.1.2 <${address}>: no such domain here` };
    },

    async receive(raw, recipients) {
      const report = readFeedbackReport(raw);
      if (!report) {
        services.metrics.inc('raven_reports_total', { kind: 'none', result: 'refused' });
        log.info('smtp', 'refused mail to the report mailbox: not a report', { size: raw.length });
        return { ok: false, code: 550, message: '5.7.1 this address only takes delivery status notifications and feedback reports' };
      }
      const outcome = await db.write((tx) => applyFeedbackReport(tx, report, recipients, clock.iso()));
      announceEvents(services.bus, outcome.events);
      services.metrics.inc('raven_reports_total', { kind: report.kind, result: outcome.emailId ? 'applied' : 'unknown_email' });
      log.info('smtp', 'report received', {
        kind: report.kind,
        email_id: outcome.emailId,
        events: outcome.events.length,
        unmatched_recipients: outcome.unmatched.length,
      });
      // A report about mail we do not know is still a well-formed report: taking it stops the
      // reporter from retrying; there is nothing to record.
      return { ok: true, message: `2.0.0 report accepted${outcome.emailId ? ` for ${outcome.emailId}` : ''}` };
    },
  };
}
