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
//
// Mail to `raven.<domain>` addresses is not captured: that is the MX where bounces and complaints
// come back (reports/report-mailbox.ts). With an upstream provider the listener is a public MX,
// so it takes nothing but those reports.
import type { CapturedMessage } from 'raven-email-sdk';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { recordComplaint } from '../domain/outcomes.js';
import { announceEvents } from '../bus.js';
import { storableText } from '../domain/storable-text.js';
import { newId } from '../ids.js';
import { simulatedOutcome } from '../mail/simulated.js';
import { emailIdFromEnvelopeSender } from '../mail/verp.js';
import type { RelayServices } from '../services.js';
import { capturedInOneStatement, insertCapturedMessages, type NewCapturedMessage } from '../storage/captured.js';
import type { WriteBatch } from '../storage/db.js';
import { countSinkAttempt } from '../storage/sink-attempts.js';
import { decodeEncodedWords, firstHeaderValues } from '../mail/headers.js';
import { coalesceReplies } from './coalesce-replies.js';
import { createKeyAuth } from './key-auth.js';
import { readData } from './read-data.js';
import { createReportMailbox, isReportAddress, type Verdict } from './reports/report-mailbox.js';
import { dropConnection, sessionDeadlines } from './session-deadline.js';
import type { ListenerTls } from './tls.js';
import { explainListenError } from '../listen-error.js';

export interface SmtpSink {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Overrides of the configured limits (config.limits.smtp*), for tests that compose the sink. */
export interface SmtpSinkOptions {
  /** Larger messages are refused with 552 while streaming (nothing past the limit is kept). */
  maxMessageBytes?: number;
  maxClients?: number;
  /** Idle time-out of a session, real time. */
  socketTimeoutMs?: number;
  /** With a certificate the listener offers STARTTLS (or speaks implicit TLS); without, plain SMTP. */
  tls?: ListenerTls;
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

/** The header fields a capture stores beside the raw bytes (captured_messages.subject, header_from). */
const CAPTURED_FIELDS = ['subject', 'from'];

type SmtpCallback = (err?: Error | null, message?: string) => void;

function answer(verdict: Verdict, callback: SmtpCallback): void {
  if (verdict.ok) callback(null, verdict.message);
  else callback(smtpError(verdict.code, verdict.message));
}

export async function startSmtpSink(services: RelayServices, options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const { db, log, clock } = services;
  const limits = services.config.limits;
  const maxBytes = options.maxMessageBytes ?? limits.smtpMaxMessageBytes;
  const reports = createReportMailbox(services);
  const keyAuth = createKeyAuth(services, { component: 'smtp', tls: options.tls !== undefined, otherPasswords: 'anonymous' });
  // Development (the sink provider) captures any mail; a production listener is only the report MX.
  const capturesMail = services.config.delivery.provider === 'sink';
  // The messages that arrive while a commit is in flight are stored in one unit of the next group,
  // ahead of the relay's other writes (like admissions: a client waits for each 250, while the
  // worker's outcomes and the indexer's entries can wait): one INSERT, alone in its group a
  // statement that commits by itself.
  const captures: WriteBatch<NewCapturedMessage, void> = {
    ahead: true,
    run: async (tx, messages) => {
      await insertCapturedMessages(tx, messages);
      return messages.map(() => ({ status: 'fulfilled', value: undefined }));
    },
    // A group of captures alone commits in its one INSERT (SQLite: one trip, not four).
    oneStatement: capturedInOneStatement,
  };

  /** Counts an attempt; true when it is the first, which the `delayed` simulation defers. */
  async function firstAttempt(key: string, addressLc: string): Promise<boolean> {
    return (await db.write((tx) => countSinkAttempt(tx, key, addressLc, clock.iso()))) === 1;
  }

  /** Answers with the verdict, or a temporary local error (the client retries) when it cannot be reached. */
  function answerWhenSettled(verdict: Promise<Verdict>, callback: SmtpCallback, failure: string): void {
    verdict.then(
      (v) => answer(v, callback),
      (error: unknown) => {
        log.error('smtp', failure, { error: (error as Error).message });
        callback(smtpError(451, '4.3.0 local error in processing, try again later'));
      },
    );
  }

  /** Reports and captured mail are answered differently at the end of DATA, so they never share a transaction. */
  function acceptReportRecipient(rcpt: string, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    if (session.envelope.rcptTo.some((r) => !isReportAddress(r.address))) {
      return callback(smtpError(452, '4.5.3 send reports in a transaction of their own'));
    }
    answerWhenSettled(reports.acceptRecipient(rcpt), callback, 'cannot check a report address');
  }

  function onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    const rcpt = address.address;
    if (isReportAddress(rcpt)) return acceptReportRecipient(rcpt, session, callback);
    if (!capturesMail) return callback(smtpError(550, `5.7.1 <${rcpt}>: relaying denied`));
    if (session.envelope.rcptTo.some((r) => isReportAddress(r.address))) {
      return callback(smtpError(452, '4.5.3 send reports in a transaction of their own'));
    }
    switch (simulatedOutcome(rcpt)) {
      case 'bounced':
        return callback(smtpError(550, `5.1.1 <${rcpt}>: mailbox does not exist`));
      case 'rejected':
        return callback(smtpError(554, `5.7.1 <${rcpt}>: message refused`));
      case 'delayed': {
        const verdict = firstAttempt(deliveryKey(session), rcpt.toLowerCase()).then(
          (first): Verdict => (first ? { ok: false, code: 451, message: `4.7.1 <${rcpt}>: mailbox busy, try again later` } : { ok: true }),
        );
        return answerWhenSettled(verdict, callback, 'cannot record a delivery attempt');
      }
      default:
        return callback();
    }
  }

  const deadlines = sessionDeadlines(() => server, limits.smtpMaxSessionMs, log, 'smtp');
  function onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    deadlines.start(session);
    keyAuth.hideAuthUntilSecure(server, session);
    coalesceReplies(server, session);
    callback();
  }

  async function capture(raw: Buffer, session: SMTPServerSession): Promise<{ id: string; emailId: string | undefined }> {
    const from = envelopeSenderOf(session);
    const to = session.envelope.rcptTo.map((r) => r.address);
    const emailId = emailIdFromEnvelopeSender(from);
    const id = newId('msg', clock.nowMs());
    // Captured as sent (the raw bytes are kept whole); the decoded headers beside them hold what
    // both backends can store: a NUL in the Subject is U+FFFD there, never a 451 the sender retries
    // for days. (smtp-server refuses a NUL in the envelope with 501.)
    const [subjectField, fromField] = firstHeaderValues(raw, CAPTURED_FIELDS);
    const subject = storableText(subjectField === null ? null : decodeEncodedWords(subjectField));
    const headerFrom = storableText(fromField === null ? null : decodeEncodedWords(fromField));
    await db.writeBatched(captures, { id, envelopeFrom: from, headerFrom, envelopeTo: to, subject, raw, emailId: emailId ?? null, projectId: keyAuth.sessionKey(session.id)?.projectId ?? null, receivedAt: clock.iso() });
    log.info('smtp', 'message captured', { message_id: id, email_id: emailId, size: raw.length, recipients: to.length });
    // The inbox indexer parses it for the dashboard, off this path (in batches while mail streams in).
    services.bus.emit('message.captured', id);
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
    readData(stream, maxBytes, (read) => {
      if (read.oversized) {
        log.info('smtp', 'message refused: too large', { size: read.bytes, limit: maxBytes });
        callback(smtpError(552, `5.3.4 message exceeds the fixed maximum message size of ${maxBytes} bytes`));
        return;
      }
      const { raw } = read;
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      if (recipients.some(isReportAddress)) {
        answerWhenSettled(reports.receive(raw, recipients), callback, 'cannot record a report');
        return;
      }
      // The inbox's background work (index batches, checks badges) yields while captures are in flight.
      services.captureActivity.begin();
      capture(raw, session).then(
        ({ id, emailId }) => {
          services.captureActivity.end();
          if (recipients.some((r) => simulatedOutcome(r) === 'unknown')) {
            dropConnection(server, session); // the `unknown` simulation: no answer
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
          services.captureActivity.end();
          log.error('smtp', 'cannot store a captured message', { error: (error as Error).message });
          callback(smtpError(451, '4.3.0 local error in processing, try again later'));
        },
      );
    });
  }

  const server = new SMTPServer({
    banner: 'Raven SMTP sink',
    authOptional: true,
    // AUTH is optional. With an API key it says whose mail this is (its project); any other
    // login is taken as it is, so clients configured with one can still send here.
    ...keyAuth.serverOptions,
    onAuth: keyAuth.onAuth,
    onSecure: keyAuth.onSecure,
    ...(options.tls
      ? { key: options.tls.key, cert: options.tls.cert, secure: options.tls.implicit, hideSTARTTLS: false }
      : { disabledCommands: ['STARTTLS'], hideSTARTTLS: true }),
    // The greeting and EHLO name: the public host name the domains' MX records point at.
    ...(services.config.publicHostname ? { name: services.config.publicHostname } : {}),
    // Replies carry their own enhanced status codes (5.1.1 for a bounce, 5.7.1 for a refusal).
    hideENHANCEDSTATUSCODES: true,
    size: maxBytes,
    maxClients: options.maxClients ?? limits.smtpMaxClients,
    // Uncapped, one session could grow its envelope without end (452 past the cap). RFC 5321
    // section 4.5.3.1.8 asks for at least 100; the worker sends up to limits.maxRecipients at once.
    maxRecipients: Math.max(100, limits.maxRecipients),
    socketTimeout: options.socketTimeoutMs ?? limits.smtpSocketTimeoutMs,
    closeTimeout: 3_000,
    disableReverseLookup: true,
    logger: false,
    onConnect,
    onClose: (session) => {
      deadlines.end(session);
      keyAuth.forget(session.id);
    },
    onRcptTo,
    onData,
  });
  server.on('error', (error: Error) => log.warn('smtp', 'smtp session error', { error: error.message }));

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(explainListenError(error, { what: 'SMTP', flag: '--smtp-port', env: 'RAVEN_SMTP_PORT', host: services.config.smtpHost, port: services.config.smtpPort }));
    server.server.once('error', onError);
    server.listen(services.config.smtpPort, services.config.smtpHost, () => {
      server.server.removeListener('error', onError);
      resolve();
    });
  });
  const bound = server.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : services.config.smtpPort;
  // With an upstream provider the listener is the raven.<domain> MX, not a sink: say which it is.
  const role = capturesMail ? 'sink' : 'bounce and complaint MX';
  log.info('smtp', `smtp ${role} listening`, { host: services.config.smtpHost, port });

  return {
    host: services.config.smtpHost,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
