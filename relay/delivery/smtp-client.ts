// Delivery over SMTP with nodemailer's SMTPConnection, kept in a small pool of open sessions.
//
// Why not nodemailer's pooled transport: it reads the message ahead into its MIME stream before
// DATA, so after a dropped connection it cannot tell "lost before the message was sent" (safe to
// retry) from "lost after the whole message was sent, before the answer" (delivery_unknown, never
// resent: delivery-unknown.ts); and it re-queues a message whose connection closed mid-send, which after DATA would
// deliver it twice. Driving SMTPConnection ourselves, the message stream is only read once the
// server has answered DATA with 354, and the envelope object we pass carries the per-recipient
// RCPT answers (accepted, rejected, rejectedErrors) even when the transaction fails later.
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Logger } from '../log.js';
import { lostConnectionOutcome, nothingSent, type SendProgress } from './delivery-unknown.js';
import type { DeliveryResult, RecipientOutcome, RecipientResult, SessionTrace } from '../mail/delivery-result.js';
import { isHardBounceStatus } from '../mail/status-codes.js';
import { simulatedOutcome } from '../mail/simulated.js';
import type { DeliveryProgress, DeliveryProvider, OutboundMessage, SmtpTarget } from './provider.js';
import { publicReason, type DeliveryFailure } from './public-reason.js';
import { claimYield, giveBack, takeOver, tryTake, waitersChange, waiters, waitForRoom, wakeWatchers, type SessionBudget } from './session-budget.js';
import { TranscriptRecorder } from './transcript.js';

// Network time-outs are real time (CONTRACT section 6), not the relay clock.
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 60_000;
// Shorter than the usual server idle time-out (smtp-server: 60 s), so we close first.
const IDLE_CLOSE_MS = 30_000;
// A session is replaced after this many messages, as nodemailer's pool does.
const MAX_MESSAGES_PER_SESSION = 100;
// How long a pool waits for room under its target's session budget before it opens a session
// regardless: a thread that died holding sessions left them counted (their sockets closed with it),
// and delivery goes on, at worst as it did without a budget (the server may refuse it, a retry).
const ROOM_WAIT_MS = CONNECTION_TIMEOUT_MS;

type SmtpError = Error & {
  code?: string;
  /** The system's code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT) when nodemailer set its own. */
  originalCode?: string;
  command?: string;
  response?: string;
  responseCode?: number;
  recipient?: string;
  /** The conversation of a session that failed to open (set by SessionPool.open). */
  trace?: SessionTrace;
};

interface Envelope {
  from: string;
  to: string[];
  accepted?: string[];
  rejected?: string[];
  rejectedErrors?: SmtpError[];
}

interface Session {
  conn: SMTPConnection;
  /** The conversation since the last transaction's trace was taken. */
  recorder: TranscriptRecorder;
  usable: boolean;
  messages: number;
  idleTimer?: NodeJS.Timeout;
  /** Closed for a pool elsewhere that waits for room under the session budget. */
  yielded?: boolean;
}

const CONNECTION_ERRORS = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'ETLS', 'EPROTOCOL']);

/**
 * The TLS of a session: the version negotiated and whether the server's certificate verified.
 * SMTPConnection has no accessor for its socket; `_socket` is the TLS socket after STARTTLS or with
 * implicit TLS (also when the handshake was just refused for the certificate: authorizationError
 * then names why), the plain one otherwise.
 */
function tlsOf(conn: SMTPConnection): Pick<SessionTrace, 'tlsVersion' | 'certificateVerified'> {
  const socket = socketOf(conn);
  if (!(socket instanceof TLSSocket)) return { tlsVersion: null, certificateVerified: null };
  const verified = socket.authorized ? true : socket.authorizationError ? false : null;
  return { tlsVersion: conn.secure ? (socket.getProtocol() ?? null) : null, certificateVerified: verified };
}

function socketOf(conn: SMTPConnection): Socket | undefined {
  return (conn as unknown as { _socket?: Socket })._socket;
}

/** Calls `closed` once the session's socket has closed: SMTPConnection's 'end' comes as soon as it starts closing it. */
function onSocketClosed(conn: SMTPConnection, closed: () => void): void {
  conn.once('end', () => {
    const socket = socketOf(conn);
    if (socket && !socket.closed) socket.once('close', closed);
    else closed();
  });
}

/** The enhanced status code (RFC 3463) at the start of a reply's text, if any. */
export function enhancedStatusCode(response: string | undefined): string | undefined {
  return response ? /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response)?.[1] : undefined;
}

/** What an SMTP refusal means for the recipient. */
export function classifyReply(code: number | undefined, response: string | undefined): RecipientOutcome {
  if (code === undefined || code < 500 || code === 503) return 'deferred'; // 503: wrong session state, not the message
  const enhanced = enhancedStatusCode(response);
  if (enhanced) return isHardBounceStatus(enhanced) ? 'bounced' : 'rejected';
  return code === 550 || code === 551 || code === 553 ? 'bounced' : 'rejected';
}

/** `250 2.0.0 Ok: queued as ABC123` -> `ABC123`. */
export function queueIdFromReply(response: string | undefined): string | undefined {
  return response ? /queued as\s+<?([^\s<>]+)>?/i.exec(response)?.[1] : undefined;
}

const closedProvider = () => Object.assign(new Error('the delivery provider is closed'), { code: 'ECONNECTION' });

class SessionPool {
  private readonly idle: Session[] = [];
  private readonly active = new Set<Session>();
  private closed = false;
  /** This pool's acquires waiting for room under the budget; a session parked goes to them. */
  private waitingHere = 0;
  private parkedSignal?: { promise: Promise<void>; resolve(): void };
  private watching = false;

  constructor(
    private readonly target: SmtpTarget,
    private readonly log: Logger,
  ) {}

  async acquire(): Promise<{ session: Session; reused: boolean }> {
    if (this.closed) throw closedProvider();
    const { budget } = this.target;
    const deadline = performance.now() + ROOM_WAIT_MS;
    for (;;) {
      const idle = this.takeIdle();
      if (idle) {
        // Idle sessions this pool's own waiters no longer need go to waiters elsewhere (its watcher
        // does not yield while one of them waits).
        if (budget) this.yieldIdle(budget);
        return { session: idle, reused: true };
      }
      if (!budget || tryTake(budget)) break;
      const left = deadline - performance.now();
      if (left <= 0) {
        takeOver(budget);
        break;
      }
      this.waitingHere++;
      try {
        await waitForRoom(budget, this.nextPark(), left);
      } finally {
        this.waitingHere--;
      }
      if (this.closed) throw closedProvider();
    }
    const session = await this.open();
    this.active.add(session);
    return { session, reused: false };
  }

  private takeIdle(): Session | undefined {
    while (this.idle.length > 0) {
      const session = this.idle.pop()!;
      clearTimeout(session.idleTimer);
      if (session.usable) {
        session.recorder.take(); // the RSET that readied it belongs to no attempt
        this.active.add(session);
        return session;
      }
    }
    return undefined;
  }

  /** Settles when this pool next parks a session (or closes). */
  private nextPark(): Promise<void> {
    if (!this.parkedSignal) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.parkedSignal = { promise, resolve };
    }
    return this.parkedSignal.promise;
  }

  private signalParked(): void {
    const signal = this.parkedSignal;
    this.parkedSignal = undefined;
    signal?.resolve();
  }

  /** Closes the oldest idle sessions, one for each pool elsewhere that waits for room and has none closing for it yet. */
  private yieldIdle(budget: SessionBudget): void {
    while (this.waitingHere === 0 && this.idle.length > 0) {
      const oldest = this.idle[0]!;
      // One the server already closed was given back then: closing it again frees nothing.
      if (!oldest.usable) {
        this.idle.shift();
        clearTimeout(oldest.idleTimer);
        continue;
      }
      if (!claimYield(budget)) return;
      this.idle.shift();
      this.discard(oldest, true);
    }
  }

  /** While this pool holds idle sessions, closes one for each pool elsewhere that waits for room. */
  private watchWaiters(): void {
    const { budget } = this.target;
    if (!budget || this.watching) return;
    this.watching = true;
    void (async () => {
      while (!this.closed && this.idle.length > 0) {
        const seen = waiters(budget);
        this.yieldIdle(budget);
        if (this.idle.length === 0) break;
        await waitersChange(budget, seen);
      }
      this.watching = false;
    })();
  }

  /** Where a session's attempt went and what was said since the last trace. */
  trace(session: Pick<Session, 'conn' | 'recorder'>): SessionTrace {
    return { host: this.target.host, port: this.target.port, tls: Boolean(session.conn.secure), ...tlsOf(session.conn), transcript: session.recorder.take() };
  }

  private open(): Promise<Session> {
    const recorder = new TranscriptRecorder();
    const conn = new SMTPConnection({
      host: this.target.host,
      port: this.target.port,
      secure: this.target.secure ?? false,
      requireTLS: this.target.requireTLS ?? false,
      ignoreTLS: this.target.ignoreTLS ?? false,
      ...(this.target.ca ? { tls: { ca: this.target.ca } } : {}),
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      allowInternalNetworkInterfaces: true,
      // Commands and replies only, to the recorder (relay/delivery/transcript.ts), never the message.
      transactionLog: true,
      logger: recorder.logger,
    });
    const session: Session = { conn, recorder, usable: true, messages: 0 };
    const { budget } = this.target;
    // Counted under the budget (room taken by acquire) until the socket has closed, whatever closes it.
    if (budget) onSocketClosed(conn, () => giveBack(budget, session.yielded === true));
    // SMTPConnection reports a failure both as 'error' and to the pending callback; the callback
    // decides, this only keeps the session from being reused.
    conn.on('error', (err: SmtpError) => {
      session.usable = false;
      this.log.debug('smtp', 'smtp session error', { code: err.code, error: err.message });
    });
    conn.once('end', () => {
      session.usable = false;
    });
    return new Promise<Session>((resolve, reject) => {
      let settled = false;
      const fail = (err: SmtpError) => {
        if (settled) return;
        settled = true;
        session.usable = false;
        conn.close();
        err.trace = this.trace(session);
        reject(err);
      };
      conn.once('error', fail);
      conn.once('end', () => fail(Object.assign(new Error('Connection closed before the session started'), { code: 'ECONNECTION' })));
      conn.connect((err) => {
        if (err) return fail(err);
        const ready = () => {
          if (settled) return;
          settled = true;
          conn.removeListener('error', fail);
          resolve(session);
        };
        if (!this.target.auth) return ready();
        conn.login({ user: this.target.auth.user, pass: this.target.auth.pass }, (loginErr) => (loginErr ? fail(loginErr) : ready()));
      });
    });
  }

  /** clean: ready for the next MAIL FROM; dirty: needs RSET first; broken: close it. */
  release(session: Session, state: 'clean' | 'dirty' | 'broken'): void {
    this.active.delete(session);
    session.messages++;
    if (this.closed || state === 'broken' || !session.usable || session.messages >= MAX_MESSAGES_PER_SESSION) {
      this.discard(session);
      return;
    }
    if (state === 'dirty') {
      session.conn.reset((err) => (err ? this.discard(session) : this.park(session)));
    } else {
      this.park(session);
    }
  }

  private park(session: Session): void {
    if (this.closed || this.idle.length >= this.target.maxIdle || !session.usable) {
      this.discard(session);
      return;
    }
    session.idleTimer = setTimeout(() => {
      const i = this.idle.indexOf(session);
      if (i >= 0) this.idle.splice(i, 1);
      this.discard(session);
    }, IDLE_CLOSE_MS);
    session.idleTimer.unref();
    this.idle.push(session);
    // To this pool's own acquire waiting for room, else closed for a pool elsewhere that waits.
    this.signalParked();
    this.watchWaiters();
  }

  private discard(session: Session, yielded = false): void {
    clearTimeout(session.idleTimer);
    session.usable = false;
    if (yielded) session.yielded = true;
    try {
      session.conn.quit();
    } catch {
      session.conn.close();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const session of this.idle.splice(0)) this.discard(session);
    // Acquires waiting for room give up, and a watcher stops.
    this.signalParked();
    if (this.target.budget) wakeWatchers(this.target.budget);
    // Sessions still sending finish on their own and are discarded on release.
  }
}

interface Attempt extends SendProgress {
  info?: { accepted: string[]; rejected: string[]; rejectedErrors?: SmtpError[]; response: string; serverMessageId?: string };
  error?: SmtpError;
  envelope: Envelope;
}

function sendOnce(conn: SMTPConnection, message: OutboundMessage, progress: DeliveryProgress | undefined): Promise<Attempt> {
  const envelope: Envelope = { from: message.envelope.from, to: [...message.envelope.to] };
  let started = false;
  let finished = false;
  // Read only when SMTPConnection pipes it into the DATA stream, i.e. after the 354.
  const stream = new Readable({
    read() {
      if (started) return;
      started = true;
      progress?.sending();
      this.push(message.raw);
      this.push(null);
    },
  });
  stream.once('end', () => {
    finished = true;
  });
  return new Promise<Attempt>((resolve) => {
    let done = false;
    conn.send(envelope, stream, (err, info) => {
      if (done) return;
      done = true;
      finished ||= stream.readableEnded;
      if (err) resolve({ error: err as SmtpError, envelope, started, finished });
      else resolve({ info: info as Attempt['info'], envelope, started, finished });
    });
  });
}

/** `failure`, when the outcome came from an error rather than a reply, names the public reason of a deferral. */
function result(address: string, outcome: RecipientOutcome, code?: number, response?: string, failure?: DeliveryFailure): RecipientResult {
  const r: RecipientResult = { address, outcome };
  if (code !== undefined) r.smtpCode = code;
  const enhanced = enhancedStatusCode(response);
  if (enhanced) r.enhancedCode = enhanced;
  if (response) r.diagnostic = response;
  if (outcome === 'deferred') {
    const reason = publicReason({ ...failure, ...(code === undefined ? {} : { responseCode: code }) }, enhanced);
    if (reason) r.reason = reason;
  }
  return r;
}

/** Every recipient of one transaction shares its session's trace. */
function withTrace(results: RecipientResult[], trace: SessionTrace | undefined): RecipientResult[] {
  return trace ? results.map((r) => ({ ...r, session: trace })) : results;
}

function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Per-recipient results of a transaction the server answered with 250. */
function resultsFromInfo(message: OutboundMessage, info: NonNullable<Attempt['info']>): RecipientResult[] {
  return message.envelope.to.map((address) => {
    const refused = info.rejectedErrors?.find((e) => e.recipient !== undefined && sameAddress(e.recipient, address));
    if (refused) return result(address, classifyReply(refused.responseCode, refused.response), refused.responseCode, refused.response);
    if (info.rejected.some((r) => sameAddress(r, address))) return result(address, 'deferred');
    return result(address, 'accepted', 250, info.response);
  });
}

/** Per-recipient results of a failed transaction. */
function resultsFromError(message: OutboundMessage, attempt: Attempt): RecipientResult[] {
  const err = attempt.error!;
  const { envelope } = attempt;
  const connectionLost = err.code !== undefined && CONNECTION_ERRORS.has(err.code) && err.responseCode === undefined;
  // A refused MAIL FROM decides for every recipient: with PIPELINING the RCPTs sent along with it
  // were answered `503 need MAIL command`, which said nothing about them (a 5xx sender refusal
  // used to be deferred for that). It is about the sender, so never a hard bounce of a recipient.
  const senderRefused = err.command === 'MAIL FROM' && err.responseCode !== undefined;
  return message.envelope.to.map((address) => {
    const refused = senderRefused
      ? undefined
      : envelope.rejectedErrors?.find((e) => e.recipient !== undefined && sameAddress(e.recipient, address));
    if (refused) return result(address, classifyReply(refused.responseCode, refused.response), refused.responseCode, refused.response);
    if (connectionLost) return result(address, lostConnectionOutcome(attempt), undefined, err.message, err);
    // A refusal of the whole transaction: MAIL FROM, DATA, or the answer to the message.
    const outcome = classifyReply(err.responseCode, err.response);
    return result(address, senderRefused && outcome === 'bounced' ? 'rejected' : outcome, err.responseCode, err.response ?? err.message, err);
  });
}

// Names each provider made in this process, so a worker thread keeps one session pool per provider.
let providersMade = 0;

export function createSmtpProvider(name: 'sink' | 'smtp', target: SmtpTarget, log: Logger): DeliveryProvider {
  const pool = new SessionPool(target, log);

  async function deliverEach(message: OutboundMessage, progress?: DeliveryProgress): Promise<DeliveryResult> {
    const results: DeliveryResult[] = [];
    for (const [i, address] of message.envelope.to.entries()) {
      const from = message.envelope.recipientSenders[i] ?? message.envelope.from;
      results.push(await deliverTransaction({ ...message, envelope: { from, to: [address], recipientSenders: [from] } }, progress));
    }
    return {
      recipients: results.flatMap((r) => r.recipients),
      providerMessageId: results.find((r) => r.providerMessageId !== null)?.providerMessageId ?? null,
    };
  }

  /** The sink: `unknown` recipients after the others, in a transaction of their own (SmtpTarget.simulatedUnknownApart). */
  async function deliverUnknownApart(message: OutboundMessage, progress?: DeliveryProgress): Promise<DeliveryResult> {
    const { to, recipientSenders } = message.envelope;
    const unknown = to.map((address) => simulatedOutcome(address) === 'unknown');
    if (unknown.every(Boolean) || !unknown.some(Boolean)) return deliverTransaction(message, progress);
    const part = (apart: boolean): OutboundMessage => ({
      ...message,
      envelope: { ...message.envelope, to: to.filter((_, i) => unknown[i] === apart), recipientSenders: recipientSenders.filter((_, i) => unknown[i] === apart) },
    });
    const others = await deliverTransaction(part(false), progress);
    const dropped = await deliverTransaction(part(true), progress);
    return { recipients: [...others.recipients, ...dropped.recipients], providerMessageId: others.providerMessageId ?? dropped.providerMessageId };
  }

  async function deliverTransaction(message: OutboundMessage, progress?: DeliveryProgress): Promise<DeliveryResult> {
    for (let tries = 0; ; tries++) {
      let acquired: { session: Session; reused: boolean };
      try {
        acquired = await pool.acquire();
      } catch (error) {
        const err = error as SmtpError;
        // Nothing about the message has been said yet: a refused greeting, EHLO or login (535 bad
        // credentials), or a failed STARTTLS under requireTLS, is about our session with the
        // provider, which an operator can fix. Defer along the backoff, never fail the message.
        const level = err.code === 'EAUTH' || err.code === 'ETLS' ? 'error' : 'warn';
        log[level]('smtp', 'cannot open an SMTP session', { email_id: message.emailId, provider: name, code: err.code, error: err.message });
        const recipients = message.envelope.to.map((a) => result(a, 'deferred', err.responseCode, err.message, err));
        return { recipients: withTrace(recipients, err.trace), providerMessageId: null };
      }
      const { session, reused } = acquired;
      const attempt = await sendOnce(session.conn, message, progress);
      if (attempt.info) {
        const trace = pool.trace(session);
        pool.release(session, 'clean');
        return {
          recipients: withTrace(resultsFromInfo(message, attempt.info), trace),
          providerMessageId: queueIdFromReply(attempt.info.response) ?? attempt.info.serverMessageId ?? message.messageId,
        };
      }
      const err = attempt.error!;
      const lost = err.code !== undefined && CONNECTION_ERRORS.has(err.code);
      const trace = pool.trace(session);
      pool.release(session, lost ? 'broken' : 'dirty');
      // A pooled session the server had already closed: nothing was sent, try a fresh one once.
      if (lost && reused && nothingSent(attempt) && tries === 0) continue;
      log.info('smtp', 'SMTP transaction failed', { email_id: message.emailId, provider: name, code: err.code, error: err.message });
      return { recipients: withTrace(resultsFromError(message, attempt), trace), providerMessageId: null };
    }
  }

  return {
    name,
    deliver: target.transactionPerRecipient ? deliverEach : target.simulatedUnknownApart ? deliverUnknownApart : deliverTransaction,
    close: () => pool.close(),
    onThread: { key: `${process.pid}.${++providersMade}.${name}`, name, target },
  };
}
