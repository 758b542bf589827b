// What a delivery attempt answered for each recipient, in the words the domain decides on: the
// providers (delivery/) speak it, domain/outcomes.ts reads it, metrics count it.

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
  /** Why a deferred recipient waits, as a fixed phrase the API may show (delivery/public-reason.ts). */
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
  /** The negotiated TLS version (`TLSv1.3`); null when the conversation did not run over TLS. */
  tlsVersion: string | null;
  /** Whether the server's certificate verified: false when TLS was refused for it, null when no TLS was tried. */
  certificateVerified: boolean | null;
  transcript: TranscriptLine[];
}

export interface DeliveryResult {
  /** One entry per envelope recipient, in envelope order. */
  recipients: RecipientResult[];
  /** The provider's id for the message (the queue id from the server's reply, else the Message-ID). */
  providerMessageId: string | null;
}
