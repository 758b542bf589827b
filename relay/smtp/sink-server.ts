// The SMTP sink: an smtp-server listener that captures every message it accepts into the
// database, and plays the receiving server's part in the simulated outcomes (CONTRACT section 6),
// decided by the recipient's local part before an optional +label:
//   bounced    RCPT refused 550 5.1.1 (hard bounce)
//   rejected   RCPT refused 554 5.7.1
//   delayed    RCPT deferred 451 4.7.1 on the first attempt for that (email, recipient), then accepted
//   unknown    RCPT accepted; after the message the connection is dropped without an answer
//   complained accepted; then the feedback loop reports a spam complaint
// Any SMTP client may send to it; the relay's worker does, with the email id in a VERP envelope
// sender (bounce+<email_id>@raven.<domain>) so outcomes can be tied to the email.
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { emailIdFromEnvelopeSender } from '../delivery/mime.js';
import { recordComplaint } from '../domain/outcomes.js';
import { announceEvents } from '../domain/timeline.js';
import { newId } from '../ids.js';
import type { RelayServices } from '../services.js';
import { insertCapturedMessage } from '../storage/captured.js';
import { headerValue, parseHeaders } from './headers.js';
import type { ListenerTls } from './tls.js';

export interface SmtpSink {
  host: string;
  port: number;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Larger messages are refused with 552 while streaming (nothing past the limit is kept). */
  maxMessageBytes?: number;
  maxClients?: number;
  /** Idle time-out of a session, real time. */
  socketTimeoutMs?: number;
  /** With a certificate the listener offers STARTTLS (or speaks implicit TLS); without, plain SMTP. */
  tls?: ListenerTls;
}

export const SINK_DEFAULTS = {
  // A 10 MiB JSON request can grow by base64/quoted-printable encoding; 25 MiB leaves room for it.
  maxMessageBytes: 25 * 1024 * 1024,
  maxClients: 100,
  socketTimeoutMs: 60_000,
} as const;

export type SimulatedOutcome = 'bounced' | 'rejected' | 'delayed' | 'unknown' | 'complained' | 'delivered';

const SIMULATED = new Set<SimulatedOutcome>(['bounced', 'rejected', 'delayed', 'unknown', 'complained']);

/** The simulated outcome for an address: its local part before an optional +label. */
export function simulatedOutcome(address: string): SimulatedOutcome {
  const at = address.lastIndexOf('@');
  const local = (at >= 0 ? address.slice(0, at) : address).split('+')[0]!.toLowerCase();
  return SIMULATED.has(local as SimulatedOutcome) ? (local as SimulatedOutcome) : 'delivered';
}

function smtpError(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

function envelopeSenderOf(session: SMTPServerSession): string {
  return session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
}

/** Whose delivery attempts the `delayed` simulation counts: the email, else the sender. */
function deliveryKey(session: SMTPServerSession): string {
  const sender = envelopeSenderOf(session);
  return emailIdFromEnvelopeSender(sender) ?? `sender:${sender.toLowerCase()}`;
}

export async function startSmtpSink(services: RelayServices, options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const { db, log, clock } = services;
  const maxBytes = options.maxMessageBytes ?? SINK_DEFAULTS.maxMessageBytes;

  /** Counts an attempt; true when it is the first, which the `delayed` simulation defers. */
  async function firstAttempt(key: string, addressLc: string): Promise<boolean> {
    return db.write(async (tx) => {
      const row = await tx.get<{ attempts: number }>('SELECT attempts FROM sink_attempts WHERE delivery_key = ? AND address_lc = ?', [
        key,
        addressLc,
      ]);
      const now = clock.iso();
      await tx.run(
        `INSERT INTO sink_attempts (delivery_key, address_lc, attempts, updated_at) VALUES (?, ?, 1, ?)
         ON CONFLICT (delivery_key, address_lc) DO UPDATE SET attempts = attempts + 1, updated_at = excluded.updated_at`,
        [key, addressLc, now],
      );
      return (row?.attempts ?? 0) === 0;
    });
  }

  function onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    const rcpt = address.address;
    switch (simulatedOutcome(rcpt)) {
      case 'bounced':
        return callback(smtpError(550, `5.1.1 <${rcpt}>: mailbox does not exist`));
      case 'rejected':
        return callback(smtpError(554, `5.7.1 <${rcpt}>: message refused`));
      case 'delayed':
        firstAttempt(deliveryKey(session), rcpt.toLowerCase()).then(
          (first) => callback(first ? smtpError(451, `4.7.1 <${rcpt}>: mailbox busy, try again later`) : null),
          (error: unknown) => {
            log.error('smtp', 'cannot record a delivery attempt', { error: (error as Error).message });
            callback(smtpError(451, '4.3.0 local error, try again later'));
          },
        );
        return;
      default:
        return callback();
    }
  }

  /** Drops a session's connection without a word (the `unknown` simulation). */
  function dropConnection(session: SMTPServerSession): void {
    for (const connection of server.connections) {
      if (connection.id === session.id) connection._socket.destroy();
    }
  }

  async function capture(raw: Buffer, session: SMTPServerSession): Promise<{ id: string; emailId: string | undefined }> {
    const from = envelopeSenderOf(session);
    const to = session.envelope.rcptTo.map((r) => r.address);
    const emailId = emailIdFromEnvelopeSender(from);
    const id = newId('msg', clock.nowMs());
    const subject = headerValue(parseHeaders(raw), 'subject');
    await db.write((tx) =>
      insertCapturedMessage(tx, { id, envelopeFrom: from, envelopeTo: to, subject, raw, emailId: emailId ?? null, receivedAt: clock.iso() }),
    );
    log.info('smtp', 'message captured', { message_id: id, email_id: emailId, size: raw.length, recipients: to.length });
    return { id, emailId };
  }

  async function complain(emailId: string, address: string): Promise<void> {
    const events = await db.write((tx) => recordComplaint(tx, emailId, address, clock.iso()));
    announceEvents(services.bus, events);
  }

  function onData(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (err?: Error | null, message?: string) => void,
  ): void {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let oversized = false;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (oversized) return;
      if (stream.sizeExceeded || bytes > maxBytes) {
        // Keep reading to the end of DATA (the client is still sending), but keep nothing.
        oversized = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => {
      if (oversized || stream.sizeExceeded) {
        log.info('smtp', 'message refused: too large', { size: bytes, limit: maxBytes });
        callback(smtpError(552, `5.3.4 message exceeds the fixed maximum message size of ${maxBytes} bytes`));
        return;
      }
      const raw = Buffer.concat(chunks, bytes);
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      capture(raw, session).then(
        ({ id, emailId }) => {
          if (recipients.some((r) => simulatedOutcome(r) === 'unknown')) {
            dropConnection(session);
            return;
          }
          callback(null, `2.0.0 Ok: queued as ${id}`);
          if (emailId === undefined) return;
          for (const address of recipients.filter((r) => simulatedOutcome(r) === 'complained')) {
            complain(emailId, address).catch((error: unknown) =>
              log.error('smtp', 'cannot record a complaint', { email_id: emailId, error: (error as Error).message }),
            );
          }
        },
        (error: unknown) => {
          log.error('smtp', 'cannot store a captured message', { error: (error as Error).message });
          callback(smtpError(451, '4.3.0 local error in processing, try again later'));
        },
      );
    });
  }

  const server = new SMTPServer({
    banner: 'Raven SMTP sink',
    authOptional: true,
    // The sink takes any credentials: clients configured with a login can still send to it.
    allowInsecureAuth: true,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username ?? 'anonymous' }),
    ...(options.tls
      ? { key: options.tls.key, cert: options.tls.cert, secure: options.tls.implicit, hideSTARTTLS: false }
      : { disabledCommands: ['STARTTLS'], hideSTARTTLS: true }),
    // The greeting and EHLO name: the public host name the domains' MX records point at.
    ...(services.config.publicHostname ? { name: services.config.publicHostname } : {}),
    // Replies carry their own enhanced status codes (5.1.1 for a bounce, 5.7.1 for a refusal).
    hideENHANCEDSTATUSCODES: true,
    size: maxBytes,
    maxClients: options.maxClients ?? SINK_DEFAULTS.maxClients,
    socketTimeout: options.socketTimeoutMs ?? SINK_DEFAULTS.socketTimeoutMs,
    closeTimeout: 3_000,
    disableReverseLookup: true,
    logger: false,
    onRcptTo,
    onData,
  });
  server.on('error', (error: Error) => log.warn('smtp', 'smtp session error', { error: error.message }));

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.server.once('error', onError);
    server.listen(services.config.smtpPort, services.config.smtpHost, () => {
      server.server.removeListener('error', onError);
      resolve();
    });
  });
  const bound = server.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : services.config.smtpPort;
  log.info('smtp', 'smtp sink listening', { host: services.config.smtpHost, port });

  return {
    host: services.config.smtpHost,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
