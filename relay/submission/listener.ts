// SMTP submission (CONTRACT section 9): applications that only speak SMTP send through the relay
// with an API key as the password. The listener only translates: each message goes through
// admitEmail, the very admission POST /v1/emails uses, and a refusal is the API's error as an
// SMTP reply (smtpRefusal). `250` is written only after the admission committed.
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { admitEmail, type AdmissionResult } from '../domain/admission.js';
import { authenticateKey, requirePermission, type KeyPrincipal } from '../domain/auth.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { explainListenError } from '../listen-error.js';
import type { SubmissionEndpoint } from '../http/admin-submission.js';
import { smtpRefusal } from '../http/error-reply.js';
import type { RelayServices } from '../services.js';
import { createKeyAuth } from '../smtp/key-auth.js';
import { readData } from '../smtp/read-data.js';
import { rewriteLibraryReplies } from '../smtp/library-replies.js';
import { sessionDeadlines } from '../smtp/session-deadline.js';
import type { ListenerTls } from '../smtp/tls.js';

export interface SubmissionListener extends SubmissionEndpoint {
  close(): Promise<void>;
}

type SmtpError = Error & { responseCode: number };

function smtpError(responseCode: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode });
}

function refusal(error: unknown): SmtpError & { code: ErrorCode } {
  const { responseCode, code, message } = smtpRefusal(error);
  return Object.assign(smtpError(responseCode, message), { code });
}

/** MAIL commands refused for want of AUTH before the connection is closed. */
const MAX_UNAUTHENTICATED_MAIL = 10;

export async function startSubmissionListener(services: RelayServices, tls: ListenerTls | undefined): Promise<SubmissionListener> {
  const { config, log, metrics } = services;
  const host = config.smtpHost;
  const maxBytes = config.limits.maxRequestBytes;
  const keyAuth = createKeyAuth(services, { component: 'submission', tls: tls !== undefined, otherPasswords: 'refuse' });

  const deadlines = sessionDeadlines(() => server, config.limits.smtpMaxSessionMs, log, 'submission');
  function onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    deadlines.start(session);
    keyAuth.hideAuthUntilSecure(server, session);
    // A declared SIZE over the limit is refused at MAIL FROM as the streamed message is (552 5.3.4).
    rewriteLibraryReplies(server, session, (code, context) => (code === 552 && context === 'MESSAGE_TOO_BIG' ? { code, text: tooLarge().message } : undefined));
    callback();
  }

  const tooLarge = () => refusal(new ApiError('message_too_large', `The message exceeds ${maxBytes} bytes.`));

  // A client that keeps sending MAIL without authenticating is shown the door, as smtp-server does
  // for commands before AUTH when authentication is not optional.
  const refusedMail = new WeakMap<SMTPServerSession, number>();
  function onMailFrom(_address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    if (!keyAuth.sessionKey(session.id)) {
      const refused = (refusedMail.get(session) ?? 0) + 1;
      refusedMail.set(session, refused);
      if (refused > MAX_UNAUTHENTICATED_MAIL) return callback(smtpError(421, '4.7.0 too many commands without authentication, closing'));
      return callback(smtpError(530, '5.7.0 authentication required: AUTH with an API key as the password'));
    }
    callback();
  }

  // An address admission would refuse is taken here and refused with the whole message at the
  // final dot (550 5.6.0 validation_error naming `RCPT TO[i]`), as POST /v1/emails refuses the
  // whole request: refused alone, the message would go to the other recipients.
  function onRcptTo(_address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    if (session.envelope.rcptTo.length >= config.limits.maxRecipients) {
      return callback(smtpError(452, `4.5.3 too many recipients: at most ${config.limits.maxRecipients} per message`));
    }
    callback();
  }

  function answer(result: AdmissionResult): string {
    return `2.0.0 ${result.body.id} ${result.body.status}`;
  }

  async function admit(session: SMTPServerSession, raw: Buffer): Promise<AdmissionResult> {
    const authenticated = keyAuth.sessionKey(session.id);
    if (!authenticated) throw new ApiError('invalid_api_key', 'Authenticate with an API key first.');
    const key = await keyAuth.authenticate(authenticated.secret);
    return admitEmail(services, key, { kind: 'submission', message: { raw, envelopeTo: session.envelope.rcptTo.map((r) => r.address) } });
  }

  function onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
    readData(stream, maxBytes, (read) => {
      if (read.oversized) {
        metrics.inc('raven_submissions_total', { result: 'rejected' });
        metrics.inc('raven_submission_rejections_total', { code: 'message_too_large' });
        return callback(tooLarge());
      }
      const { raw, bytes } = read;
      admit(session, raw).then(
        (result) => {
          metrics.inc('raven_submissions_total', { result: result.replayed ? 'replayed' : result.status === 202 ? 'accepted' : 'suppressed' });
          log.info('submission', result.replayed ? 'message replayed' : 'message admitted', { email_id: result.body.id, size: bytes });
          callback(null, answer(result));
        },
        (error: unknown) => {
          const reply = refusal(error);
          metrics.inc('raven_submissions_total', { result: 'rejected' });
          metrics.inc('raven_submission_rejections_total', { code: reply.code });
          if (reply.responseCode >= 451 && !(error instanceof ApiError)) log.error('submission', 'cannot admit a message', { error: (error as Error).message });
          callback(reply);
        },
      );
    });
  }

  const server = new SMTPServer({
    banner: 'Raven SMTP submission',
    ...keyAuth.serverOptions,
    // Authentication is checked by onMailFrom, so its reply is the contract's (530 5.7.0).
    authOptional: true,
    ...(tls ? { key: tls.key, cert: tls.cert, secure: tls.implicit, hideSTARTTLS: false } : { disabledCommands: ['STARTTLS'], hideSTARTTLS: true }),
    ...(config.publicHostname ? { name: config.publicHostname } : {}),
    // Every reply carries its own enhanced status code.
    hideENHANCEDSTATUSCODES: true,
    size: maxBytes,
    maxClients: config.limits.smtpMaxClients,
    // onRcptTo answers past the limit itself (452 4.5.3).
    maxRecipients: config.limits.maxRecipients + 1,
    socketTimeout: config.limits.smtpSocketTimeoutMs,
    closeTimeout: 3_000,
    disableReverseLookup: true,
    logger: false,
    onConnect,
    onSecure: keyAuth.onSecure,
    onAuth: keyAuth.onAuth,
    onMailFrom,
    onRcptTo,
    onData,
    onClose: (session) => {
      deadlines.end(session);
      keyAuth.forget(session.id);
    },
  });
  server.on('error', (error: Error) => log.warn('submission', 'submission session error', { error: error.message }));

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(explainListenError(error, { what: 'SMTP submission', flag: '--submission-port', env: 'RAVEN_SUBMISSION_PORT', host, port: config.submissionPort }));
    server.server.once('error', onError);
    server.listen(config.submissionPort, host, () => {
      server.server.removeListener('error', onError);
      resolve();
    });
  });
  const bound = server.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.submissionPort;
  log.info('submission', 'smtp submission listening', { host, port });
  return {
    host,
    port,
    tls: tls ? (tls.implicit ? 'implicit' : 'starttls') : 'none',
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
