// Loads a report fixture (test/fixtures/reports) with its placeholders filled in and CRLF line ends.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'reports');

export interface ReportValues {
  emailId: string;
  domain: string;
  recipient: string;
  recipient2?: string;
}

/** The VERP envelope sender of an email (the relay's own format). */
export const returnPathOf = (emailId: string, domain: string) => `bounce+${emailId}@raven.${domain}`;

/** The feedback-loop address registered with mailbox providers. */
export const reportAddressOf = (domain: string) => `fbl@raven.${domain}`;

export function loadReport(name: string, v: ReportValues): Buffer {
  const text = readFileSync(path.join(DIR, name), 'utf8')
    .replaceAll('{{RETURN_PATH}}', returnPathOf(v.emailId, v.domain))
    .replaceAll('{{REPORT_ADDRESS}}', reportAddressOf(v.domain))
    .replaceAll('{{EMAIL_ID}}', v.emailId)
    .replaceAll('{{DOMAIN}}', v.domain)
    .replaceAll('{{RECIPIENT2}}', v.recipient2 ?? 'second@example.org')
    .replaceAll('{{RECIPIENT}}', v.recipient);
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}
