// What the worker hands a delivery provider, and what it gets back. Providers translate SMTP into
// this vocabulary; domain/outcomes.ts decides what each answer means for the email.

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

/**
 * How one recipient went:
 * - `accepted`: the server took it (the sink: delivered; an upstream: sent),
 * - `deferred`: a temporary failure (4xx, or the connection failed before the message was sent),
 * - `bounced`: a permanent refusal saying the mailbox does not exist (hard bounce),
 * - `rejected`: any other permanent refusal (5xx),
 * - `unknown`: the connection was lost after the whole message was sent, before the answer.
 */
export type RecipientOutcome = 'accepted' | 'deferred' | 'bounced' | 'rejected' | 'unknown';

export interface RecipientResult {
  /** As it appeared in the envelope. */
  address: string;
  outcome: RecipientOutcome;
  /** SMTP reply code, when there was one. */
  smtpCode?: number;
  /** Enhanced status code (RFC 3463), e.g. `5.1.1`, when the reply carried one. */
  enhancedCode?: string;
  /** The server's reply or the error, for logs only: never stored in events or shown by the API. */
  diagnostic?: string;
  /** Why a deferred recipient waits, as a fixed phrase the API may show (public-reason.ts). */
  reason?: string;
  /** The SMTP session this answer came from, for the admin's attempts view (never the public API). */
  session?: SessionTrace;
}

/** One line of an SMTP conversation: C the client (the relay), S the server. */
export interface TranscriptLine {
  dir: 'C' | 'S';
  line: string;
}

/** Where an attempt went and what was said: AUTH arguments and message content are never kept. */
export interface SessionTrace {
  host: string;
  port: number;
  /** Whether the conversation ran over TLS (implicit, or after STARTTLS). */
  tls: boolean;
  transcript: TranscriptLine[];
}

export interface DeliveryResult {
  /** One entry per envelope recipient, in envelope order. */
  recipients: RecipientResult[];
  /** The provider's id for the message (the queue id from the server's reply, else the Message-ID). */
  providerMessageId: string | null;
}

export interface DeliveryProvider {
  /** `sink`: the relay's own SMTP sink, the receiving server itself; `smtp`: an upstream relay. */
  readonly name: 'sink' | 'smtp';
  /** Never throws for SMTP outcomes: every failure is reported per recipient. */
  deliver(message: OutboundMessage): Promise<DeliveryResult>;
  close(): Promise<void>;
}
