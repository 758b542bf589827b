// Builds a real MIME message (nodemailer's composer), as any SMTP client would send one.
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';

export function composeMessage(options: Mail.Options): Promise<Buffer> {
  return new Promise((resolve, reject) => new MailComposer(options).compile().build((error, message) => (error ? reject(error) : resolve(message))));
}
