// VERP addresses: the envelope sender of every message Raven sends names the email (and the
// recipient), so whatever comes back to it (a bounce, a complaint, the sink's own bookkeeping) is
// tied to them without a lookup table.

/**
 * VERP envelope sender on the custom MAIL FROM subdomain (`raven.`), carrying the email id, and
 * with a recipient's position the recipient too (`bounce+<email_id>.<position>@raven.<domain>`), so
 * whatever comes back to it (a bounce, a complaint) can be tied to the email and the recipient.
 */
export function envelopeSender(emailId: string, fromDomain: string, position?: number): string {
  return `bounce+${emailId}${position === undefined ? '' : `.${position}`}@raven.${fromDomain}`;
}

/** The email id and recipient position in a VERP address, if it is one of ours. */
export function parseVerpAddress(address: string): { emailId: string; position?: number } | undefined {
  const match = /^bounce\+(em_[0-9a-z]{26})(?:\.(\d{1,4}))?@/i.exec(address);
  if (!match) return undefined;
  return match[2] === undefined ? { emailId: match[1]!.toLowerCase() } : { emailId: match[1]!.toLowerCase(), position: Number(match[2]) };
}

/** The email id in a VERP envelope sender, if it is one of ours. */
export function emailIdFromEnvelopeSender(sender: string): string | undefined {
  return parseVerpAddress(sender)?.emailId;
}
