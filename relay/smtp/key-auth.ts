// SMTP AUTH with an API key as the password (CONTRACT section 9), shared by the submission
// listener and the sink (section 10: a sink client that authenticates belongs to the key's
// project). AUTH PLAIN or LOGIN; the username is not checked. With a TLS certificate AUTH is
// offered only on an encrypted connection (after STARTTLS, or implicit TLS); without one, AUTH in
// plain text only on a loopback listener. A wrong, revoked or read-only key -> 535 5.7.8, answered
// a little later each time; past the failure budget (relay/auth-failures.ts) -> 421 4.7.0.
import { isIP } from 'node:net';
import type { SMTPServer, SMTPServerAuthentication, SMTPServerSession } from 'smtp-server';
import { AuthFailures } from '../auth-failures.js';
import { authenticateKey, requirePermission, type KeyPrincipal } from '../domain/auth.js';
import { ApiError } from '../errors.js';
import { hashSecret } from '../secrets.js';
import type { RelayServices } from '../services.js';
import { rewriteLibraryReplies } from './library-replies.js';

type SmtpError = Error & { responseCode: number };
type Callback = (err?: Error | null) => void;

function smtpError(responseCode: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode });
}

/** Whether the listener's address only takes connections from this machine. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host.startsWith('::ffff:127.');
}

/** What a session authenticated with: the secret (to check the key again at each message) and its project. */
export interface SessionKey {
  secret: string;
  projectId: string;
}

export interface KeyAuthOptions {
  /** The log component of the listener. */
  component: 'submission' | 'smtp';
  /** Whether the listener has a certificate (AUTH then waits for an encrypted connection). */
  tls: boolean;
  /**
   * The sink takes mail from any client, some configured with a login of their own: a password
   * that is not an API key (no rr_test_ / rr_live_ prefix) is accepted there, and its mail belongs
   * to no project. The submission port refuses it.
   */
  otherPasswords: 'refuse' | 'anonymous';
}

export interface KeyAuth {
  /** smtp-server's options for AUTH. */
  readonly serverOptions: { authMethods: string[]; allowInsecureAuth: true };
  /**
   * Call from onConnect: hides AUTH until the connection is encrypted when there is a certificate;
   * AUTH sent before then answers `530 5.7.0 Must issue a STARTTLS command first` (RFC 3207), not
   * the "500 command not recognized" smtp-server gives a disabled command.
   */
  hideAuthUntilSecure(server: SMTPServer, session: SMTPServerSession): void;
  onSecure(socket: unknown, session: SMTPServerSession, callback: Callback): void;
  onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: { user: unknown }) => void): void;
  /** The key a session authenticated with, if any. */
  sessionKey(sessionId: string): SessionKey | undefined;
  /** Call from onClose. */
  forget(sessionId: string): void;
  /** Checks a key (valid, not revoked, email:send) again, as at every message. */
  authenticate(secret: string): Promise<KeyPrincipal>;
}

const API_KEY_PREFIX = /^rr_(test|live)_/;
const STARTTLS_FIRST = { code: 530, text: '5.7.0 Must issue a STARTTLS command first' };
const TOO_MANY = '4.7.0 too many failed authentications from your address; try again in a minute';

export function createKeyAuth(services: RelayServices, options: KeyAuthOptions): KeyAuth {
  const { log } = services;
  const plainAuthAllowed = isLoopback(services.config.smtpHost);
  const failures = new AuthFailures(() => services.clock.nowMs());
  const sessions = new Map<string, SessionKey>();

  const authenticate = (secret: string): Promise<KeyPrincipal> =>
    authenticateKey(services.db, services.keys, `Bearer ${secret}`, services.keyUse).then((key) => {
      requirePermission(key, 'email:send');
      return key;
    });

  function onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: { user: unknown }) => void): void {
    const address = session.remoteAddress;
    const secret = auth.password ?? '';
    if (options.otherPasswords === 'anonymous' && !API_KEY_PREFIX.test(secret)) return callback(null, { user: 'anonymous' });
    if (failures.exhausted(address)) return callback(smtpError(421, TOO_MANY));
    if (!session.secure && !plainAuthAllowed) {
      return callback(smtpError(538, '5.7.11 encryption required: AUTH in plain text is accepted only on a loopback listener (configure smtpTls)'));
    }
    const accept = (projectId: string) => {
      sessions.set(session.id, { secret, projectId });
      callback(null, { user: 'api-key' });
    };
    authenticate(secret).then(
      (key) => accept(key.projectId),
      (error: unknown) => {
        // A workspace not activated for production still authenticates; each message is refused (production_not_enabled).
        if (error instanceof ApiError && error.code === 'production_not_enabled') {
          return authenticateProject(secret).then(accept, () => callback(smtpError(454, '4.7.0 temporary authentication failure, try again later')));
        }
        if (!(error instanceof ApiError)) {
          log.error(options.component, 'cannot authenticate', { error: (error as Error).message });
          return callback(smtpError(454, '4.7.0 temporary authentication failure, try again later'));
        }
        const { delayMs, exhausted } = failures.record(address);
        log.info(options.component, 'authentication failed', { remote: address, code: error.code });
        const reply = exhausted
          ? smtpError(421, TOO_MANY)
          : smtpError(535, `5.7.8 ${error.code}: the password must be an API key with the email:send permission`);
        setTimeout(() => callback(reply), delayMs).unref();
      },
    );
  }

  /** The project of a key whose workspace is not activated (authenticateKey refuses it, and so does not say). */
  async function authenticateProject(secret: string): Promise<string> {
    const row = await services.keys.lookup(services.db, hashSecret(secret));
    if (!row) throw new Error('the key is gone');
    return row.project_id;
  }

  return {
    serverOptions: { authMethods: ['PLAIN', 'LOGIN'], allowInsecureAuth: true },
    hideAuthUntilSecure(server, session) {
      if (!options.tls || session.secure) return;
      session.disabledCommands = ['AUTH'];
      rewriteLibraryReplies(server, session, (code, context, secure) => (code === 500 && context === 'AUTH' && !secure ? STARTTLS_FIRST : undefined));
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = [];
      callback();
    },
    onAuth,
    sessionKey: (sessionId) => sessions.get(sessionId),
    forget: (sessionId) => {
      sessions.delete(sessionId);
    },
    authenticate,
  };
}
