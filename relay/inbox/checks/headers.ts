// The headers a receiver expects (issue 26): Message-ID and Date on every message, a text part
// beside the HTML, and for bulk-looking mail List-Unsubscribe with one-click List-Unsubscribe-Post
// (Gmail and Yahoo require one-click unsubscribe from bulk senders since 2024).
import { headerValue } from '../../mail/headers.js';

export type CheckResult = 'pass' | 'warn' | 'fail';

export interface HeaderCheck {
  name: string;
  result: CheckResult;
  message: string;
}

/** Headers that mark mail sent to a list rather than to one person about their own account. */
const BULK_MARKERS = ['list-id', 'list-unsubscribe', 'precedence', 'feedback-id'];

function looksBulk(headers: Array<[string, string]>): boolean {
  const precedence = (headerValue(headers, 'precedence') ?? '').toLowerCase();
  return BULK_MARKERS.some((name) => name !== 'precedence' && headerValue(headers, name) !== null) || precedence === 'bulk' || precedence === 'list';
}

export function checkHeaders(headers: Array<[string, string]>, bodies: { html: string | null; text: string | null }): HeaderCheck[] {
  const checks: HeaderCheck[] = [];
  const present = (name: string) => headerValue(headers, name) !== null;

  checks.push(
    present('message-id')
      ? { name: 'Message-ID', result: 'pass', message: 'present' }
      : { name: 'Message-ID', result: 'fail', message: 'missing: receivers treat mail without a Message-ID as suspect' },
  );
  const date = headerValue(headers, 'date');
  checks.push(
    date === null
      ? { name: 'Date', result: 'fail', message: 'missing: RFC 5322 requires a Date' }
      : Number.isNaN(Date.parse(date))
        ? { name: 'Date', result: 'fail', message: `not a valid date: ${date}` }
        : { name: 'Date', result: 'pass', message: 'present' },
  );
  const hasHtml = bodies.html !== null && bodies.html !== '';
  const hasText = bodies.text !== null && bodies.text.trim() !== '';
  checks.push(
    hasText
      ? { name: 'Text part', result: 'pass', message: 'present' }
      : { name: 'Text part', result: hasHtml ? 'warn' : 'fail', message: hasHtml ? 'HTML only: add a text/plain alternative (spam filters score HTML-only mail)' : 'the message has no body text' },
  );
  if (looksBulk(headers)) {
    const unsubscribe = headerValue(headers, 'list-unsubscribe');
    const post = headerValue(headers, 'list-unsubscribe-post');
    checks.push(
      unsubscribe === null
        ? { name: 'List-Unsubscribe', result: 'fail', message: 'bulk-looking mail without List-Unsubscribe: Gmail and Yahoo require it from bulk senders' }
        : { name: 'List-Unsubscribe', result: 'pass', message: 'present' },
    );
    checks.push(
      post !== null && /List-Unsubscribe=One-Click/i.test(post) && unsubscribe !== null && /<https:/i.test(unsubscribe)
        ? { name: 'List-Unsubscribe-Post', result: 'pass', message: 'one-click unsubscribe' }
        : { name: 'List-Unsubscribe-Post', result: 'fail', message: 'bulk-looking mail needs "List-Unsubscribe-Post: List-Unsubscribe=One-Click" and an https List-Unsubscribe URL (RFC 8058)' },
    );
  }
  return checks;
}
