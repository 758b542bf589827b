// The SMTP conversation of a delivery session, as the admin's attempts view shows it (CONTRACT
// section 11). SMTPConnection reports each command and reply to its logger when `transactionLog`
// is on (never the message itself: that needs `debug`); this recorder is that logger. An AUTH
// command keeps only its mechanism, and every client line of the exchange that follows it (the
// user name and password of AUTH LOGIN, the token of AUTH PLAIN) is replaced, whatever nodemailer
// already masked: the password must never reach the database.
import type { TranscriptLine } from '../mail/delivery-result.js';

/** Enough for a session's greeting, EHLO, STARTTLS, AUTH and one transaction; a runaway server is cut. */
const MAX_LINES = 200;
const MAX_LINE_CHARS = 1_000;
export const REDACTED = '[redacted]';

export class TranscriptRecorder {
  private lines: TranscriptLine[] = [];
  private inAuth = false;

  /** The logger SMTPConnection calls (bunyan form: entry, message). */
  readonly logger = {
    debug: (entry: { tnx?: string }, message: unknown) => this.record(entry?.tnx, message),
    trace: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    fatal: () => undefined,
  };

  private record(tnx: string | undefined, message: unknown): void {
    if ((tnx !== 'client' && tnx !== 'server') || typeof message !== 'string') return;
    if (tnx === 'client') return this.push('C', this.clientLine(message));
    for (const line of message.split(/\r?\n/)) {
      // A final answer (not a 334 challenge) ends an AUTH exchange.
      if (this.inAuth && /^\d{3} /.test(line) && !line.startsWith('334')) this.inAuth = false;
      this.push('S', line);
    }
  }

  private clientLine(line: string): string {
    const auth = /^AUTH\s+(\S+)/i.exec(line);
    if (auth) {
      this.inAuth = true;
      return `AUTH ${auth[1]!.toUpperCase()}${line.trim().split(/\s+/).length > 2 ? ` ${REDACTED}` : ''}`;
    }
    return this.inAuth ? REDACTED : line;
  }

  private push(dir: 'C' | 'S', line: string): void {
    if (this.lines.length < MAX_LINES) this.lines.push({ dir, line: line.slice(0, MAX_LINE_CHARS) });
  }

  /** The lines recorded since the last take, and starts afresh. */
  take(): TranscriptLine[] {
    const lines = this.lines;
    this.lines = [];
    return lines;
  }
}
