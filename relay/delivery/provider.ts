// What the worker hands a delivery provider, and what it gets back. Providers translate SMTP into
// the vocabulary of mail/delivery-result.ts; domain/outcomes.ts decides what each answer means for
// the email.
import type { DeliveryResult } from '../mail/delivery-result.js';

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

export interface DeliveryProvider {
  /** `sink`: the relay's own SMTP sink, the receiving server itself; `smtp`: an upstream relay. */
  readonly name: 'sink' | 'smtp';
  /** Never throws for SMTP outcomes: every failure is reported per recipient. */
  deliver(message: OutboundMessage): Promise<DeliveryResult>;
  close(): Promise<void>;
}
