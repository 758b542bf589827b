/**
 * Building and checking a send request from flags: `--header "K: V"`, `--tag k=v`,
 * `--metadata k=v`, and the local checks `send --dry-run` runs (CONTRACT section 2 field rules),
 * so a dry run predicts what the API would answer without a network call.
 */
import type { SendEmailRequest } from 'raven-email-sdk';
import { parseSendRequest, SPEC_MAX_RECIPIENTS } from '../relay/domain/send-request.js';
import type { ErrorDetail } from '../relay/errors.js';
import { UsageError } from './errors.js';

export { mailboxProblem, parseMailbox } from '../relay/mail/mailbox.js';
export { subjectProblems } from '../relay/domain/send-request.js';
export { validIdempotencyKey } from '../relay/domain/idempotency.js';

/** The send request as the flags build it: recipients always as lists. */
export type SendBody = Omit<SendEmailRequest, 'to' | 'cc' | 'bcc'> & { to: string[]; cc?: string[]; bcc?: string[] };

/** `--header "X-Campaign: spring"` -> ['X-Campaign', 'spring']. Split at the first colon. */
export function parseHeaderFlag(raw: string): [string, string] {
  const colon = raw.indexOf(':');
  if (colon <= 0) throw new UsageError(`invalid --header "${raw}": expected "Name: value"`);
  const name = raw.slice(0, colon).trim();
  const value = raw.slice(colon + 1).trim();
  if (name === '') throw new UsageError(`invalid --header "${raw}": the name is empty`);
  return [name, value];
}

/** `--tag k=v` / `--metadata k=v`: split at the first `=`; the value may hold more `=`. */
export function parseKeyValueFlag(flag: '--tag' | '--metadata', raw: string): [string, string] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`invalid ${flag} "${raw}": expected key=value`);
  return [raw.slice(0, eq), raw.slice(eq + 1)];
}

/** Repeated flags into one object; a repeated name is a usage error (which one would win?). */
export function collectPairs(
  flag: '--header' | '--tag' | '--metadata',
  values: string[] | undefined,
): Record<string, string> | undefined {
  if (!values || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const raw of values) {
    const [k, v] = flag === '--header' ? parseHeaderFlag(raw) : parseKeyValueFlag(flag, raw);
    const key = flag === '--header' ? k.toLowerCase() : k;
    if (seen.has(key)) throw new UsageError(`${flag} "${k}" given twice`);
    seen.add(key);
    out[k] = v;
  }
  return out;
}

/**
 * Every broken rule, exactly as the API's validation_error details would name them: the relay's own
 * rules (relay/domain/send-request.ts) at the specification's recipient limit.
 */
export function validateSendBody(body: SendBody): ErrorDetail[] {
  const checked = parseSendRequest(body, { maxRecipients: SPEC_MAX_RECIPIENTS });
  return checked.ok ? [] : checked.details;
}
