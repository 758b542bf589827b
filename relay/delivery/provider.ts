// What the worker hands a delivery provider, and what it gets back. Providers translate SMTP into
// the vocabulary of mail/delivery-result.ts; domain/outcomes.ts decides what each answer means for
// the email.
import type { DeliveryResult } from '../mail/delivery-result.js';
import type { SessionBudget } from './session-budget.js';

/** One email, ready to go: the MIME bytes and the SMTP envelope (BCC only lives here). */
export interface OutboundMessage {
  emailId: string;
  /** Message-ID header value, with angle brackets. */
  messageId: string;
  envelope: {
    /** VERP envelope sender: `bounce+<email_id>@raven.<sender domain>`. */
    from: string;
    /** Bare addresses, To, CC and BCC, the ones still waiting for an outcome. */
    to: string[];
    /** For a transaction per recipient: each recipient's own VERP sender, `bounce+<email_id>.<position>@...`, in `to` order. */
    recipientSenders: string[];
  };
  raw: Buffer;
}

/** Told how far a delivery got. */
export interface DeliveryProgress {
  /** The server answered DATA and the message's bytes start to go: from here it may be accepted. */
  sending(): void;
}

/** Where an SMTP provider delivers (relay/delivery/smtp-client.ts): the upstream relay or the relay's own sink. */
export interface SmtpTarget {
  host: string;
  port: number;
  /** Implicit TLS. */
  secure?: boolean;
  /** Refuse to send when STARTTLS is not offered. */
  requireTLS?: boolean;
  /** Never try STARTTLS (the sink speaks plain SMTP on loopback). */
  ignoreTLS?: boolean;
  auth?: { user: string; pass: string };
  /** Certificate authorities trusted for the server's certificate (PEM), in place of Node's defaults. */
  ca?: string[];
  /** Open sessions kept for reuse (by each thread's pool). */
  maxIdle: number;
  /** The most sessions open toward the server across all threads (the sink's client limit): session-budget.ts. */
  budget?: SessionBudget;
  /**
   * One transaction per recipient, each with the recipient's own VERP sender, so a bounce or a
   * complaint that comes back names the recipient even when the report does not. The sink is the
   * receiving server and needs none of that: it takes all recipients in one transaction.
   */
  transactionPerRecipient?: boolean;
  /**
   * The sink: recipients of the `unknown` simulation (whose transaction the sink drops after
   * DATA) go in a transaction of their own, so the others get their own outcomes (CONTRACT
   * section 6: any other local part is delivered).
   */
  simulatedUnknownApart?: boolean;
}

/** What a worker thread needs to open the same SMTP sessions as a provider (relay/delivery/thread-delivery.ts). */
export interface ThreadedProvider {
  /** Unique in the process: a thread keeps one session pool per key. */
  key: string;
  name: 'sink' | 'smtp';
  target: SmtpTarget;
}

export interface DeliveryProvider {
  /** `sink`: the relay's own SMTP sink, the receiving server itself; `smtp`: an upstream relay. */
  readonly name: 'sink' | 'smtp';
  /** Never throws for SMTP outcomes: every failure is reported per recipient. */
  deliver(message: OutboundMessage, progress?: DeliveryProgress): Promise<DeliveryResult>;
  close(): Promise<void>;
  /** Set by the SMTP providers: the worker then runs each whole delivery on a worker thread. */
  readonly onThread?: ThreadedProvider;
}
