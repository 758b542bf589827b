// A plain SMTP client for tests: one session with nodemailer's SMTPConnection, so a test sees
// each transaction's per-recipient answers (or the error that ended it).
import SMTPConnection from 'nodemailer/lib/smtp-connection';

export function smtpConnect(host: string, port: number): Promise<SMTPConnection> {
  const conn = new SMTPConnection({ host, port, ignoreTLS: true, logger: false });
  conn.on('error', () => undefined);
  return new Promise((resolve, reject) => conn.connect((err) => (err ? reject(err) : resolve(conn))));
}

export type SmtpSendError = Error & { responseCode?: number; response?: string; rejected?: string[] };

export function smtpSend(conn: SMTPConnection, from: string, to: string[], message: string | Buffer) {
  return new Promise<{ accepted: string[]; rejected: string[]; response: string }>((resolve, reject) =>
    conn.send({ from, to }, message, (err, info) => (err ? reject(err) : resolve(info as never))),
  );
}

/** One transaction on its own session. */
export async function smtpSendOnce(host: string, port: number, from: string, to: string[], message: string | Buffer) {
  const conn = await smtpConnect(host, port);
  try {
    return await smtpSend(conn, from, to, message);
  } finally {
    conn.quit();
  }
}
