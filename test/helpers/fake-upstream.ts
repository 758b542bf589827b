// An upstream SMTP provider for tests: a real smtp-server on listen(0). By default it accepts every
// message and records its envelope and bytes; a script (set at start, or changed later through
// `script`) makes it answer chosen codes, or drop the connection, at any step of the session.
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';

/** A reply the upstream gives instead of accepting: `{ code: 451, message: '4.2.0 try later' }`. */
export interface UpstreamReply {
  code: number;
  message: string;
}

/** What a step answers: undefined accepts; 'drop' destroys the connection without a reply. */
export type UpstreamAnswer = UpstreamReply | 'drop' | undefined;

export interface UpstreamMessage {
  from: string;
  to: string[];
  raw: string;
}

export interface UpstreamScript {
  /** Before the greeting: a reply here refuses the connection with it (421, 554...). */
  onConnect?(session: SMTPServerSession): UpstreamAnswer;
  onMailFrom?(address: string, session: SMTPServerSession): UpstreamAnswer;
  onRcpt?(address: string, session: SMTPServerSession): UpstreamAnswer;
  /** After the whole message was read: 'drop' closes without answering it; a promise holds the answer until it settles. */
  onData?(message: UpstreamMessage, session: SMTPServerSession): UpstreamAnswer | 'accept' | Promise<UpstreamAnswer | 'accept'>;
}

export interface FakeUpstream {
  port: number;
  url: string;
  /** Messages the upstream accepted. */
  received: UpstreamMessage[];
  /** Every message it read to the end of DATA, whatever it answered. */
  read: UpstreamMessage[];
  /** Every address given in RCPT TO, in order, whatever it answered. */
  rcpts: string[];
  /** The answers in use; replace it, or its fields, to change them. */
  script: UpstreamScript;
  /** Destroys every open connection (the relay's pooled sessions included). */
  dropConnections(): void;
  close(): Promise<void>;
}

function replyError(reply: UpstreamReply): Error & { responseCode: number } {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

export interface FakeUpstreamOptions {
  /** Offer STARTTLS with this certificate (tls-cert.ts makes a self-signed one). */
  tls?: { key: Buffer; cert: Buffer };
  /** Offer AUTH PLAIN and LOGIN and accept only these credentials (in plain text too when no TLS). */
  auth?: { user: string; pass: string };
}

export async function startFakeUpstream(script: UpstreamScript = {}, options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const received: UpstreamMessage[] = [];
  const read: UpstreamMessage[] = [];
  const rcpts: string[] = [];

  const drop = (session: SMTPServerSession) => {
    for (const connection of server.connections) {
      if (connection.id === session.id) connection._socket.destroy();
    }
  };
  /** Runs a step's answer: accept, refuse with a reply, or drop the connection unanswered. */
  const answer = (session: SMTPServerSession, verdict: UpstreamAnswer, callback: (err?: Error | null) => void) => {
    if (verdict === 'drop') drop(session);
    else if (verdict) callback(replyError(verdict));
    else callback();
  };

  const server = new SMTPServer({
    authOptional: true,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    ...(options.auth
      ? {
          authMethods: ['PLAIN', 'LOGIN'],
          allowInsecureAuth: !options.tls,
          onAuth(auth: SMTPServerAuthentication, _session: SMTPServerSession, callback: (err: Error | null, response?: { user: string }) => void) {
            const ok = auth.username === options.auth!.user && auth.password === options.auth!.pass;
            if (ok) callback(null, { user: auth.username! });
            else callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
          },
        }
      : {}),
    logger: false,
    closeTimeout: 1_000,
    onConnect(session, callback) {
      answer(session, fake.script.onConnect?.(session), callback);
    },
    onMailFrom(address, session, callback) {
      answer(session, fake.script.onMailFrom?.(address.address, session), callback);
    },
    onRcptTo(address, session, callback) {
      rcpts.push(address.address);
      answer(session, fake.script.onRcpt?.(address.address, session), callback);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const message: UpstreamMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        read.push(message);
        const verdict = await fake.script.onData?.(message, session);
        if (verdict === undefined || verdict === 'accept') {
          received.push(message);
          callback(null, 'Ok: queued as UPSTREAM123');
        } else {
          answer(session, verdict, callback);
        }
      });
    },
  });
  // A connection destroyed mid-session is expected here, not a failure of the server.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  const fake: FakeUpstream = {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    read,
    rcpts,
    script,
    dropConnections() {
      for (const connection of server.connections) connection._socket.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return fake;
}
