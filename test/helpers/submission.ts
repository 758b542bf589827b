// SMTP submission from tests: a raw session that has greeted and authenticated with an API key
// (AUTH PLAIN), and a whole message sent through it, for the malformed and refused cases.
import type { TestRelay } from './start-relay.js';
import { openRawSmtp, type RawSmtp } from './smtp-raw.js';

/** AUTH PLAIN's initial response: authzid, user, password. */
export const authPlain = (password: string, user = 'raven') => Buffer.from(`\0${user}\0${password}`).toString('base64');

/** A raw session on the relay's submission port, greeted with EHLO; authenticated when `key` is given. */
export async function openSubmission(t: TestRelay, key?: string): Promise<RawSmtp> {
  const smtp = await openRawSmtp(t.relay.submission.port, '127.0.0.1');
  await smtp.reply(); // greeting
  await smtp.command('EHLO client.test');
  if (key !== undefined) {
    const reply = await smtp.command(`AUTH PLAIN ${authPlain(key)}`);
    if (!reply.startsWith('235')) throw new Error(`AUTH refused: ${reply}`);
  }
  return smtp;
}

/** MAIL, RCPT each recipient, DATA and the message (dot-stuffed here); answers the reply to the final dot (or the first refusal). */
export async function submit(smtp: RawSmtp, recipients: string[], message: string, from = 'app@client.test'): Promise<string> {
  const mail = await smtp.command(`MAIL FROM:<${from}>`);
  if (!mail.startsWith('250')) return mail;
  for (const to of recipients) {
    const rcpt = await smtp.command(`RCPT TO:<${to}>`);
    if (!rcpt.startsWith('250')) return rcpt;
  }
  const data = await smtp.command('DATA');
  if (!data.startsWith('354')) return data;
  const body = message.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
  return smtp.command(Buffer.from(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.`, 'utf8'));
}

/** One message in a fresh authenticated session (RSET-free: the session is closed after). */
export async function submitOnce(t: TestRelay, key: string, recipients: string[], message: string): Promise<string> {
  const smtp = await openSubmission(t, key);
  try {
    return await submit(smtp, recipients, message);
  } finally {
    smtp.destroy();
  }
}

/** A plain message: From, To, Subject and the given extra header lines. */
export function plainMessage(fields: { from: string; to: string; subject?: string; extra?: string[]; body?: string }): string {
  return [
    `From: ${fields.from}`,
    `To: ${fields.to}`,
    `Subject: ${fields.subject ?? 'Submitted'}`,
    ...(fields.extra ?? []),
    '',
    fields.body ?? 'Hello over SMTP',
  ].join('\r\n');
}
