// Mailboxes as the API takes them: `addr@domain` or `Name <addr@domain>`. The one parser: admission
// checks every address with it, the MIME builder reads stored addresses back with it, and
// `ravenctl send` checks before sending.

export interface Mailbox {
  /** As given: `addr@domain` or `Name <addr@domain>`. */
  raw: string;
  name?: string;
  address: string;
  domain: string; // lower-cased
}

// Line breaks of any kind, NUL and other C0/C1 controls never belong in a header value.
export const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;
export const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const DOMAIN_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** Why a mailbox would be refused, or undefined when it would not. */
export function mailboxProblem(value: string): string | undefined {
  const parsed = parseMailbox(value);
  return typeof parsed === 'string' ? parsed : undefined;
}

/** Parses `addr@domain` or `Name <addr@domain>`; returns a reason when it is not one. */
export function parseMailbox(value: string): Mailbox | string {
  if (LINE_BREAK.test(value) || CONTROL.test(value)) return 'must not contain line breaks or control characters';
  if (value.length > 998) return 'must be at most 998 characters';
  const angle = /^\s*(.*?)\s*<([^<>]*)>\s*$/.exec(value);
  let name: string | undefined;
  let address: string;
  if (angle) {
    const quoted = /^"(.*)"$/.exec(angle[1]!);
    // A quoted name's backslash escapes (\" and \\) stand for the characters themselves.
    name = (quoted ? quoted[1]!.replace(/\\(.)/g, '$1') : angle[1]!).trim() || undefined;
    address = angle[2]!.trim();
    if (name && /[<>]/.test(name)) return 'must be an address or Name <address>';
  } else {
    address = value.trim();
  }
  const reason = checkAddress(address);
  if (reason) return reason;
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return { raw: value.trim(), name, address, domain };
}

/** CONTRACT section 2: an address is at most 254 characters. */
export const MAX_ADDRESS_LENGTH = 254;

function checkAddress(address: string): string | undefined {
  if (address.length > MAX_ADDRESS_LENGTH) return `address must be at most ${MAX_ADDRESS_LENGTH} characters`;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return 'must be an address or Name <address>';
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64) return 'local part must be at most 64 characters';
  if (domain.length > 255) return 'domain must be at most 255 characters';
  if (!LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return 'local part has characters an address may not contain';
  }
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => DOMAIN_LABEL.test(l))) return 'domain is not a valid domain name';
  return undefined;
}

/** The lower-cased domain of `addr@domain` or `Name <addr@domain>`. */
export function senderDomain(from: string): string {
  const angle = /<([^<>]*)>\s*$/.exec(from);
  const address = (angle ? angle[1]! : from).trim();
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}
